/** "Did you mean" for unknown keys: walks the zod schema to the object at a path and finds the closest known key. */
import type { z } from 'zod';

type AnySchema = z.core.$ZodType;

function unwrap(s: AnySchema | undefined): AnySchema | undefined {
  let cur = s;
  for (let i = 0; cur && i < 10; i++) {
    const def = (cur as unknown as { _zod: { def: Record<string, unknown> } })._zod.def;
    if (def.type === 'optional' || def.type === 'default' || def.type === 'nullable' || def.type === 'prefault') cur = def.innerType as AnySchema;
    else if (def.type === 'pipe') cur = def.in as AnySchema;
    else break;
  }
  return cur;
}

type Def = Record<string, unknown>;
const defOf = (s: AnySchema): Def => (s as unknown as { _zod: { def: Def } })._zod.def;
const propValues = (s: AnySchema) => (s as unknown as { _zod: { propValues?: Record<string, Set<unknown>> } })._zod.propValues;

/** Picks the union member the value's discriminator selects (or the schema itself when not a union). */
function resolveUnion(s: AnySchema | undefined, v: unknown): AnySchema | undefined {
  if (!s) return s;
  const def = defOf(s);
  if (def.type !== 'union' || !Array.isArray(def.options)) return s;
  // The discriminator, not just any key with literal values (an enum such as `severity` has those too).
  const key = (def.discriminator as string | undefined) ?? Object.keys(propValues(s) ?? {})[0];
  const tag = key && v && typeof v === 'object' ? (v as Record<string, unknown>)[key] : undefined;
  return unwrap((def.options as AnySchema[]).find((o) => key !== undefined && propValues(o)?.[key]?.has(tag)));
}

/** The keys the schema allows for the object at `path` of `value`, or [] when it can't tell. */
export function knownKeysAt(schema: AnySchema, value: unknown, path: readonly PropertyKey[]): string[] {
  let s = unwrap(schema);
  let v: unknown = value;
  for (const seg of path) {
    s = resolveUnion(s, v);
    if (!s) return [];
    const def = defOf(s);
    if (def.type === 'object') s = unwrap((def.shape as Record<string, AnySchema>)[seg as string]);
    else if (def.type === 'array') s = unwrap(def.element as AnySchema);
    else if (def.type === 'record') s = unwrap(def.valueType as AnySchema);
    else return [];
    v = v && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[seg] : undefined;
  }
  s = resolveUnion(s, v);
  return s && defOf(s).type === 'object' ? Object.keys(defOf(s).shape as object) : [];
}

/** The candidate closest to `word` by edit distance, if it is close enough to be a typo. */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  for (const c of candidates) {
    const d = editDistance(word.toLowerCase(), c.toLowerCase());
    if (d < bestD) [best, bestD] = [c, d];
  }
  return best !== undefined && bestD <= Math.max(2, Math.floor(word.length / 3)) ? best : undefined;
}

function editDistance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = prev[j]!;
      prev[j] = Math.min(prev[j]! + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = tmp;
    }
  }
  return prev[b.length]!;
}
