/**
 * Reader of token amounts, kept exact: integer base units (number or string, past 2^53, with or without
 * exponent) or decimal token units. The value is always integer base units as decimal text; token units
 * are scaled with the token's decimals (rounded to the nearest base unit), so they need the decimals.
 * An integer is read as base units: a whole number of token units cannot be told from base units.
 */
import { isWhole, shiftToInteger, toDecimal } from './decimal.js';
import { ABSENT, isAbsent, seen, unreadable, type FieldRead } from './result.js';

/** An amount as integer base units (decimal text); `decimals` is the token's, null when unknown. */
export function readAmount(v: unknown, decimals: number | null): FieldRead<string> {
  if (isAbsent(v)) return ABSENT;
  const d = toDecimal(v);
  if (!d) return unreadable('not_an_amount', 'a token amount', v);
  if (isWhole(d)) return seen(shiftToInteger(d, 0).toString(), 'integer base units');
  if (decimals === null) return unreadable('needs_decimals', "decimal token units with the token's decimals", v);
  return seen(shiftToInteger(d, decimals).toString(), 'decimal token units');
}
