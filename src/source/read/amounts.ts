/**
 * Reader of token amounts, kept exact: integer base units (number or string, past 2^53, with or without
 * exponent) or decimal token units. The value is always integer base units as decimal text; token units
 * are scaled with the token's decimals (rounded to the nearest base unit), so they need the decimals.
 * An integer is read as base units: a whole number of token units cannot be told from base units.
 */
import { PLAIN_INTEGER, isWhole, shiftToInteger, toDecimal } from './decimal.js';
import { READ_ABSENT, fieldRead, isAbsent, type FieldRead, type ReadCode, type ReadSlot } from './result.js';

/** An amount as integer base units (decimal text), into a slot; `decimals` is the token's, null when unknown. */
export function leanAmount(v: unknown, slot: ReadSlot, decimals: number | null): ReadCode {
  if (isAbsent(v)) return READ_ABSENT;
  // Most amounts come as plain integer text: that text is the value (what the decimal arithmetic below gives back).
  if (typeof v === 'string' && PLAIN_INTEGER.test(v)) return slot.put(v, 'integer base units');
  const d = toDecimal(v);
  if (!d) return slot.reject('not_an_amount', 'a token amount');
  if (isWhole(d)) return slot.put(shiftToInteger(d, 0).toString(), 'integer base units');
  if (decimals === null) return slot.reject('needs_decimals', "decimal token units with the token's decimals");
  return slot.put(shiftToInteger(d, decimals).toString(), 'decimal token units');
}

/** An amount as integer base units (decimal text); `decimals` is the token's, null when unknown. */
export const readAmount = (v: unknown, decimals: number | null): FieldRead<string> => fieldRead(v, (x, slot) => leanAmount(x, slot, decimals));
