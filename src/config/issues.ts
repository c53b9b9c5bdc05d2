/** Turns zod issues into messages a person fixing a YAML file understands. */
import type { z } from 'zod';

/** One line saying what is wrong at `path`. */
export function describeIssue(issue: z.core.$ZodIssue, path: readonly (string | number)[], input?: unknown): string {
  const key = [...path].reverse().find((p) => typeof p === 'string') ?? 'value';
  const i = { ...issue, input: input ?? (issue as { input?: unknown }).input } as z.core.$ZodIssue & { input?: unknown; discriminator?: string; options?: unknown[]; note?: string; values?: unknown[] };
  if (issue.code === 'invalid_union' && i.note === 'No matching discriminator') {
    const what = i.discriminator === 'type' ? 'notifier type' : path.includes('polls') ? 'poll kind' : path.includes('rules') ? 'rule kind' : key;
    const known = (i.options ?? []).map(String).join(', ');
    return i.input === undefined ? `missing '${key}' (one of: ${known})` : `unknown ${what} '${String(i.input)}' (known: ${known})`;
  }
  // A key that is absent fails whatever its schema is (a type, an enum, a union of forms): say that it is missing.
  if (i.input === undefined && (issue.code === 'invalid_type' || issue.code === 'invalid_value' || issue.code === 'invalid_union')) {
    return `missing required key '${key}'`;
  }
  if (issue.code === 'invalid_value' && Array.isArray(i.values) && i.values.length > 1) {
    return `${key}: ${typeof i.input === 'string' ? `'${i.input}'` : describe(i.input)} is not one of ${i.values.map(String).join(', ')}`;
  }
  if (issue.code === 'invalid_type') return `${key}: expected ${issue.expected}, got ${describe(i.input)}`;
  return `${key}: ${issue.message}`;
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a map';
  return `${typeof v} ${JSON.stringify(v)}`;
}
