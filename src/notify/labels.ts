/** Label matching for routes and inhibit rules (config style: `match` equality or lists, `match_re` anchored regexes). */
import { createHash } from 'node:crypto';
import type { Alert } from '../model.js';
import { anchoredRegex } from '../silences/matcher.js';

/** The labels routes and inhibit rules see: the alert's labels plus `__kind__`, the rule kind. */
export function routingLabels(alert: Pick<Alert, 'labels' | 'kind'>): Record<string, string> {
  return { ...alert.labels, __kind__: alert.kind };
}

/** A config matcher value: one value or a list of accepted values. */
export type MatchValue = string | number | boolean | Array<string | number>;

/** True when every `match` entry equals (one of) the label's value(s) and every `match_re` regex matches it fully. */
export function matchesConfig(
  labels: Readonly<Record<string, string>>,
  match: Readonly<Record<string, MatchValue>>,
  matchRe: Readonly<Record<string, string>>,
): boolean {
  for (const [name, want] of Object.entries(match)) {
    const v = labels[name] ?? '';
    const ok = Array.isArray(want) ? want.some((w) => String(w) === v) : String(want) === v;
    if (!ok) return false;
  }
  for (const [name, pattern] of Object.entries(matchRe)) {
    if (!anchoredRegex(pattern).test(labels[name] ?? '')) return false;
  }
  return true;
}

/** Short stable hex digest of a JSON-able value. */
export function digest(value: unknown, length = 20): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, length);
}
