/** Defensive reads of reading fields: numbers that may come as numeric strings, booleans as strings, dotted paths. */

const NUMERIC = /^\s*[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?\s*$/;

/** A finite number from a number or numeric string; null for anything else (null, '', 'abc', NaN, objects). */
export function num(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'string' && NUMERIC.test(v)) {
    const n = Number(v);
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

/** A boolean from a boolean or the strings 'true'/'false' (any case); null for anything else. */
export function bool(v: unknown): boolean | null {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string') {
    const s = v.trim().toLowerCase();
    if (s === 'true') return true;
    if (s === 'false') return false;
  }
  return null;
}

/** Paths already split: rules and templates ask for the same few paths (from the config) 10,000 times a poll. */
const segmentsOf = new Map<string, readonly string[]>();

/** The value at a dotted path (`market.loan_asset_symbol`) in a nested object; undefined when any step is missing. */
export function getPath(obj: unknown, path: string): unknown {
  let segs = segmentsOf.get(path);
  if (segs === undefined) {
    segs = path.split('.');
    segmentsOf.set(path, segs);
  }
  let cur: unknown = obj;
  for (const seg of segs) {
    if (cur === null || typeof cur !== 'object') return undefined;
    if (!Object.hasOwn(cur, seg)) return undefined;
    cur = (cur as Record<string, unknown>)[seg];
  }
  return cur;
}
