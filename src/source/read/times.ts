/** Reader of times: Unix seconds or milliseconds (number or numeric string), ISO-8601 with or without zone (UTC when none). */
import { NUMERIC, READ_ABSENT, READ_VALUE, fieldRead, isAbsent, type FieldRead, type ReadCode, ReadSlot } from './result.js';

/** A date, or a date-time with optional seconds and fraction (`.` or `,`) and zone (`Z`, `±hh`, `±hhmm`, `±hh:mm`); upper-cased first. */
const ISO_DATE = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}([.,]\d+)?)?(Z|[+-]\d{2}(:?\d{2})?)?)?$/;
/** Below this a numeric time is Unix seconds (1e11 s is the year 5138; 1e11 ms is 1973). */
const SECONDS_BELOW = 1e11;
/** At or above this a numeric time is microseconds (1e14 ms is the year 5138). */
const MICROS_FROM = 1e14;

/** The unit a numeric time is in, told apart by magnitude. */
function epochUnit(n: number): 'Unix seconds' | 'Unix milliseconds' | 'Unix microseconds' {
  const a = Math.abs(n);
  return a < SECONDS_BELOW ? 'Unix seconds' : a >= MICROS_FROM ? 'Unix microseconds' : 'Unix milliseconds';
}

/** Converts a Unix time in seconds, milliseconds or microseconds (told apart by magnitude) to ms. */
export function epochToMs(n: number): number {
  const unit = epochUnit(n);
  return Math.round(unit === 'Unix seconds' ? n * 1000 : unit === 'Unix microseconds' ? n / 1000 : n);
}

/** The form of a numeric time sent as a string, per unit: constant texts, not one built per read. */
const AS_STRING = { 'Unix seconds': 'Unix seconds (string)', 'Unix milliseconds': 'Unix milliseconds (string)', 'Unix microseconds': 'Unix microseconds (string)' } as const;

const EXPECTED = 'a time (Unix seconds, milliseconds or ISO-8601)';

/** The number the two ASCII digits at `i` of `s` make; NaN when they are not digits. */
function two(s: string, i: number): number {
  const a = s.charCodeAt(i) - 48;
  const b = s.charCodeAt(i + 1) - 48;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : NaN;
}

/**
 * The usual date-time, `YYYY-MM-DDTHH:MM:SS`, optionally with milliseconds (`.sss`, three digits: what
 * `Date.prototype.toISOString` writes), with `Z`, `±HH:MM` or no zone, read without regexes (a markets poll reads
 * 40,000 times): Unix ms, or NaN for anything else (other fractions, a day past the 28th, lower case, spaces…), which
 * the general way reads. What it reads, Date.parse reads the same.
 */
export function usualDateTime(s: string): number {
  const n = s.length;
  // With milliseconds (4 characters more) the zone starts at 23, else at 19.
  const withMs = n === 23 || n === 24 || n === 29;
  if (!withMs && n !== 19 && n !== 20 && n !== 25) return NaN;
  const ms = withMs ? millisAt19(s) : 0;
  if (ms !== ms) return NaN;
  const z = withMs ? 23 : 19;
  if (s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45 || s.charCodeAt(10) !== 84 /* T */) return NaN;
  if (s.charCodeAt(13) !== 58 || s.charCodeAt(16) !== 58) return NaN;
  const year = two(s, 0) * 100 + two(s, 2);
  const month = two(s, 5);
  const day = two(s, 8);
  const hour = two(s, 11);
  const minute = two(s, 14);
  const second = two(s, 17);
  // Every month has 28 days: later days are left to Date.parse, which knows which exist.
  if (!(year >= 1000 && month >= 1 && month <= 12 && day >= 1 && day <= 28 && hour <= 23 && minute <= 59 && second <= 59)) return NaN;
  const utc = Date.UTC(year, month - 1, day, hour, minute, second) + ms;
  if (n === z) return utc;
  if (n === z + 1) return s.charCodeAt(z) === 90 /* Z */ ? utc : NaN;
  const sign = s.charCodeAt(z);
  const oh = two(s, z + 1);
  const om = two(s, z + 4);
  if ((sign !== 43 && sign !== 45) || s.charCodeAt(z + 3) !== 58 || !(oh <= 23 && om <= 59)) return NaN;
  return utc - (sign === 43 ? 1 : -1) * (oh * 60 + om) * 60_000;
}

/** The milliseconds of `.sss` at index 19 (three digits); NaN when that is not there. */
function millisAt19(s: string): number {
  if (s.charCodeAt(19) !== 46 /* . */) return NaN;
  const a = s.charCodeAt(20) - 48;
  const b = two(s, 21);
  return a >= 0 && a <= 9 ? a * 100 + b : NaN;
}

/** The forms of {@link usualDateTime}'s times, by their length without milliseconds (19, 20, 25; with them 4 more). */
const USUAL_FORM: Record<number, string> = { 19: 'ISO-8601 without zone (read as UTC)', 20: 'ISO-8601 UTC', 25: 'ISO-8601 with offset' };
const usualForm = (length: number): string => USUAL_FORM[length] ?? USUAL_FORM[length - 4]!;

/** A time as Unix ms, into a slot. */
export function leanTime(v: unknown, slot: ReadSlot): ReadCode {
  if (typeof v === 'string') {
    const ms = usualDateTime(v);
    if (ms === ms) return slot.put(ms, usualForm(v.length)); // not NaN
  }
  if (isAbsent(v)) return READ_ABSENT;
  if (typeof v === 'number') return Number.isFinite(v) ? slot.put(epochToMs(v), epochUnit(v)) : slot.reject('not_a_time', EXPECTED);
  if (typeof v !== 'string') return slot.reject('not_a_time', EXPECTED);
  // RFC 3339 allows a lower-case t and z; ISO 8601 a decimal comma and an hours-only offset.
  const s = v.trim().toUpperCase();
  if (NUMERIC.test(s)) return slot.put(epochToMs(Number(s)), AS_STRING[epochUnit(Number(s))]);
  if (!ISO_DATE.test(s)) return slot.reject('not_a_time', EXPECTED);
  const hasTime = /T|\s/.test(s);
  const zone = /Z$/.test(s) ? 'Z' : hasTime && /[+-]\d{2}(:?\d{2})?$/.test(s) ? 'offset' : 'none';
  // A date-time without a zone is read as UTC, never as the host's local time.
  let text = s.replace(' ', 'T').replace(',', '.');
  if (zone === 'offset') text = text.replace(/([+-]\d{2})$/, '$1:00');
  const ms = Date.parse(hasTime && zone === 'none' ? `${text}Z` : text);
  if (Number.isNaN(ms)) return slot.reject('not_a_time', EXPECTED);
  const how = !hasTime ? 'ISO-8601 date' : zone === 'Z' ? 'ISO-8601 UTC' : zone === 'offset' ? 'ISO-8601 with offset' : 'ISO-8601 without zone (read as UTC)';
  return slot.put(ms, how);
}

/** A time as Unix ms. */
export const readTime = (v: unknown): FieldRead<number> => fieldRead(v, leanTime);

/** The slot of {@link toEpochMs}. */
const SLOT = new ReadSlot();

/** Parses a time to ms; undefined when absent or unreadable. */
export function toEpochMs(v: unknown): number | undefined {
  return leanTime(v, SLOT) === READ_VALUE ? (SLOT.value as number) : undefined;
}
