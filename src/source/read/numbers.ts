/** Readers of plain numbers, integers and strings: JSON numbers or numeric strings, with or without exponent. */
import { ABSENT, NUMERIC, isAbsent, seen, unreadable, type FieldRead } from './result.js';

/** Parses a number from a JSON number or a numeric string; undefined if it is neither. */
export function toNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v === 'string' && NUMERIC.test(v.trim())) {
    const n = Number(v.trim());
    return Number.isFinite(n) ? n : undefined;
  }
  return undefined;
}

/** How a number was sent. */
function numberForm(v: unknown): string {
  if (typeof v === 'number') return 'number';
  return /[eE]/.test(String(v)) ? 'numeric string with exponent' : 'numeric string';
}

/** A finite number. */
export function readNumber(v: unknown): FieldRead<number> {
  if (isAbsent(v)) return ABSENT;
  const n = toNumber(v);
  return n === undefined ? unreadable('not_a_number', 'a number', v) : seen(n, numberForm(v));
}

/** An integer (block numbers, decimals). */
export function readInteger(v: unknown): FieldRead<number> {
  if (isAbsent(v)) return ABSENT;
  const n = toNumber(v);
  if (n === undefined) return unreadable('not_a_number', 'an integer', v);
  return Number.isInteger(n) ? seen(n, numberForm(v)) : unreadable('not_an_integer', 'an integer', v);
}

/** A string; numbers become their decimal text (ids sometimes arrive as numbers). */
export function readString(v: unknown): FieldRead<string> {
  if (isAbsent(v)) return ABSENT;
  if (typeof v === 'string') return seen(v, 'string');
  if (typeof v === 'number' && Number.isFinite(v)) return seen(String(v), 'number');
  return unreadable('not_a_string', 'a string', v);
}
