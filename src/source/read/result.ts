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
  return { ok: false, reason, detail: unreadableDetail(expected, v) };
}

/** What an unreadable field's rejection says of it: what was expected, and the value shown safely. */
export function unreadableDetail(expected: string, v: unknown): string {
  return `expected ${expected}, got ${preview(v)}`;
}

/** What a lean reader says of one field; what it read, or why not, is in its {@link ReadSlot}. */
export type ReadCode = typeof READ_ABSENT | typeof READ_VALUE | typeof READ_UNREADABLE;
/** Nothing was sent (null, missing or ""): unknown. */
export const READ_ABSENT = 0;
/** A value, in the slot with the form it was sent in. */
export const READ_VALUE = 1;
/** A field rejection: its reason and what was expected are in the slot. */
export const READ_UNREADABLE = 2;

/**
 * Where a lean reader puts what it read. One slot serves every field of a poll, so reading a field allocates no
 * result object: a markets poll reads 240,000 fields, and a `{ ok, value, seen }` per read was much of its garbage.
 */
export class ReadSlot {
  value: unknown = null;
  /** How the value was sent (`numeric string`): one of the reader's constant texts. */
  form = '';
  reason = '';
  expected = '';

  /** A value read, sent in `form`. */
  put(value: unknown, form: string): typeof READ_VALUE {
    this.value = value;
    this.form = form;
    return READ_VALUE;
  }

  /** A field rejection: `reason` is a metric label, `expected` what the field should have held. */
  reject(reason: string, expected: string): typeof READ_UNREADABLE {
    this.reason = reason;
    this.expected = expected;
    return READ_UNREADABLE;
  }
}

/** A reader that writes into a slot (those that need more, a token's decimals, take it after the slot). */
export type LeanReader = (v: unknown, slot: ReadSlot) => ReadCode;

/** The slot of the {@link FieldRead} readers (one at a time: reading is synchronous and never nested). */
const CLASSIC = new ReadSlot();

/** A lean reader as a {@link FieldRead} reader: the same reading, with a result object. */
export function fieldRead<T>(v: unknown, read: LeanReader): FieldRead<T> {
  const code = read(v, CLASSIC);
  if (code === READ_ABSENT) return ABSENT;
  return code === READ_VALUE ? seen(CLASSIC.value as T, CLASSIC.form) : unreadable(CLASSIC.reason, CLASSIC.expected, v);
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
