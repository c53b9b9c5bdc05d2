/**
 * What reading one field gives (SPEC §6): a value with the representation that was seen, "unknown"
 * (null, missing or "" — never 0), or a field rejection with a stable reason. A reader never rejects a row.
 */

/** The outcome of reading one field. */
export type FieldRead<T> =
  | { ok: true; value: T; seen: string }
  | { ok: true; value: null; seen: 'absent' }
  | { ok: false; reason: string; detail: string };

/** The "unknown" outcome: null, missing and "" are all absent. */
export const ABSENT = { ok: true, value: null, seen: 'absent' } as const;

/** True when the service sent nothing for a field. */
export function isAbsent(v: unknown): boolean {
  return v === null || v === undefined || (typeof v === 'string' && v.trim() === '');
}

/** A read value. */
export function seen<T>(value: T, how: string): FieldRead<T> {
  return { ok: true, value, seen: how };
}

/** A field that could not be read: `reason` is a metric label, `detail` names the offending value safely. */
export function unreadable(reason: string, expected: string, v: unknown): FieldRead<never> {
  return { ok: false, reason, detail: `expected ${expected}, got ${preview(v)}` };
}

/** A short, safe rendering of an offending value. */
export function preview(v: unknown): string {
  const text = typeof v === 'string' ? JSON.stringify(v) : typeof v === 'object' && v !== null ? (Array.isArray(v) ? 'an array' : 'an object') : String(v);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

/** A stable fingerprint of a raw value, to log a field's rejection once until what the service sends changes. */
export function fingerprint(v: unknown): string {
  try {
    const s = typeof v === 'string' ? `s:${v}` : `j:${JSON.stringify(v)}`;
    return s.length > 200 ? s.slice(0, 200) : s;
  } catch {
    return 'x';
  }
}

/** Numeric text: digits with an optional sign, point and exponent. */
export const NUMERIC = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
