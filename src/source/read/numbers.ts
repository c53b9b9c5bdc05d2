/** Readers of plain numbers, integers and strings: JSON numbers or numeric strings, with or without exponent. */
import { READ_ABSENT, fieldRead, type FieldRead, type ReadCode, type ReadSlot } from './result.js';

/** How a numeric string was sent. */
const stringForm = (s: string): string => (s.includes('e') || s.includes('E') ? 'numeric string with exponent' : 'numeric string');

/** True for the text of a hexadecimal, octal or binary integer (`0x1f`), which Number() reads and JSON never means. */
const nonDecimal = (s: string): boolean => s.length > 2 && s.charCodeAt(0) === 48 && /[xXoObB]/.test(s[1]!);

/** A finite number, or with `integer` an integer: `expected` says which in a rejection. */
function numberInto(v: unknown, slot: ReadSlot, integer: boolean, expected: string): ReadCode {
  let n: number;
  let form: string;
  if (typeof v === 'number') {
    n = v;
    form = 'number';
  } else if (typeof v === 'string') {
    const s = v.trim();
    if (s === '') return READ_ABSENT;
    n = Number(s);
    // Number() reads what NUMERIC matches, and else only 0x/0o/0b integers and Infinity (not finite, rejected below).
    if (n !== n || nonDecimal(s)) return slot.reject('not_a_number', expected);
    form = stringForm(s);
  } else if (v === null || v === undefined) return READ_ABSENT;
  else return slot.reject('not_a_number', expected);
  if (!Number.isFinite(n)) return slot.reject('not_a_number', expected);
  if (integer && !Number.isInteger(n)) return slot.reject('not_an_integer', expected);
  return slot.put(n, form);
}

/** A finite number, into a slot. */
export const leanNumber = (v: unknown, slot: ReadSlot): ReadCode => numberInto(v, slot, false, 'a number');

/** An integer (block numbers, decimals), into a slot. */
export const leanInteger = (v: unknown, slot: ReadSlot): ReadCode => numberInto(v, slot, true, 'an integer');

/** A string, into a slot; numbers become their decimal text (ids sometimes arrive as numbers). */
export function leanString(v: unknown, slot: ReadSlot): ReadCode {
  if (typeof v === 'string') return v.trim() === '' ? READ_ABSENT : slot.put(v, 'string');
  if (v === null || v === undefined) return READ_ABSENT;
  if (typeof v === 'number' && Number.isFinite(v)) return slot.put(String(v), 'number');
  return slot.reject('not_a_string', 'a string');
}

/** A finite number. */
export const readNumber = (v: unknown): FieldRead<number> => fieldRead(v, leanNumber);

/** An integer (block numbers, decimals). */
export const readInteger = (v: unknown): FieldRead<number> => fieldRead(v, leanInteger);

/** A string; numbers become their decimal text (ids sometimes arrive as numbers). */
export const readString = (v: unknown): FieldRead<string> => fieldRead(v, leanString);
