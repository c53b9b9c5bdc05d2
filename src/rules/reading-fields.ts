/**
 * Which fields of a reading a set of rules reads, so that a replay of stored history (src/backtest/replay.ts) decodes
 * only those: what each kind's evaluate reads ({@link RuleKind.fields}), the rule's `select` keys (a label, else a field,
 * else a key of `market`: src/rules/select.ts), the names its annotation templates read, the fields its kind judges a
 * bucket's extremes of, and what the engine reads of every judged reading (`block`). By top-level name.
 */
import { annotationNames } from './annotations.js';
import { getRuleKind } from './registry.js';
import type { RuleKind } from './rule-kind.js';
import type { RuleBase } from './schema.js';

/** Fields the engine reads of every reading it judges (src/alerts/engine.ts: the alert's block). */
const ENGINE_FIELDS = ['block'];

const top = (path: string): string => path.split('.')[0]!;

/**
 * The top-level fields `rules` read, or undefined when a rule's kind says neither what it reads nor what it needs
 * (then every field is). `kindOf` finds a rule's kind (default: the registry's).
 */
export function readingFields(rules: readonly RuleBase[], kindOf: (name: string) => RuleKind | undefined = getRuleKind): ReadonlySet<string> | undefined {
  return fieldsRead(rules, kindOf, true);
}

/**
 * The top-level fields `rules` judge a reading by: {@link readingFields} but the names only their annotation templates
 * read (those matter only for a reading that is described: an alert's). Undefined as there.
 */
export function judgedFields(rules: readonly RuleBase[], kindOf: (name: string) => RuleKind | undefined = getRuleKind): ReadonlySet<string> | undefined {
  return fieldsRead(rules, kindOf, false);
}

function fieldsRead(rules: readonly RuleBase[], kindOf: (name: string) => RuleKind | undefined, annotations: boolean): ReadonlySet<string> | undefined {
  const out = new Set<string>(ENGINE_FIELDS);
  for (const rule of rules) {
    const kind = kindOf(rule.kind);
    const read = kind && (kind.fields?.(rule) ?? kind.needs?.(rule));
    if (!kind || !read) return undefined;
    for (const f of read) out.add(top(f));
    for (const f of Object.keys(kind.worst?.(rule) ?? {})) out.add(top(f));
    const select = Object.keys(rule.select ?? {});
    for (const k of select) out.add(top(k));
    if (select.length > 0) out.add('market');
    if (annotations) for (const n of annotationNames(rule)) out.add(n);
  }
  return out;
}
