/** Turns zod issues into messages a person fixing a YAML file understands. */
import type { z } from 'zod';

/** One line saying what is wrong at `path`. */
export function describeIssue(issue: z.core.$ZodIssue, path: readonly (string | number)[], input?: unknown): string {
  const key = [...path].reverse().find((p) => typeof p === 'string') ?? 'value';
  const i = { ...issue, input: input ?? (issue as { input?: unknown }).input } as z.core.$ZodIssue & { input?: unknown; discriminator?: string; options?: unknown[]; note?: string };
  if (issue.code === 'invalid_union' && i.note === 'No matching discriminator') {
    const what = i.discriminator === 'type' ? 'notifier type' : path.includes('polls') ? 'poll kind' : path.includes('rules') ? 'rule kind' : key;
    const known = (i.options ?? []).map(String).join(', ');
    return i.input === undefined ? `missing '${key}' (one of: ${known})` : `unknown ${what} '${String(i.input)}' (known: ${known})`;
  }
  if (issue.code === 'invalid_type' && i.input === undefined) return `missing required key '${key}'`;
  if (issue.code === 'invalid_type') return `${key}: expected ${issue.expected}, got ${describe(i.input)}`;
  return `${key}: ${issue.message}`;
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a map';
  return `${typeof v} ${JSON.stringify(v)}`;
}
