/**
 * Reader of `oracle_price`: a Morpho-style scaled integer (price × 1e36 × 10^(loan decimals − collateral
 * decimals)) or a plain unit price (collateral priced in loan units). `source.oracle_price` says which;
 * `auto` decides per value: a value with a fractional part, or below {@link SCALED_FROM}, is a unit price;
 * an integer at or above it is scaled (a scaled price is the price × 10^18 or more for any usual pair of
 * decimals, and no unit price is a thousand trillion).
 */
import { PLAIN_INTEGER, isWhole, shiftToInteger, shiftToNumber, toDecimal } from './decimal.js';
import { READ_ABSENT, fieldRead, isAbsent, type FieldRead, type ReadCode, type ReadSlot } from './result.js';

/** How oracle prices are sent (config `source.oracle_price`). */
export type OraclePriceMode = 'auto' | 'scaled' | 'unit';

/** The `oracle_price` modes. */
export const ORACLE_PRICE_MODES = ['auto', 'scaled', 'unit'] as const;

/** In `auto`, integers at or above this are scaled. */
export const SCALED_FROM = 1e15;

/** An oracle price: the scaled integer (decimal text; null for a unit price whose decimals are unknown) and the unit price. */
export interface OraclePrice {
  raw: string | null;
  unit: number;
}

/** Reads an oracle price into a slot; `loan`/`collateral` are the assets' decimals, null when unknown. */
export function leanOraclePrice(v: unknown, slot: ReadSlot, mode: OraclePriceMode, loan: number | null, collateral: number | null): ReadCode {
  // The usual scaled price, plain integer text (`1201175756309060000000000000000000000`): its text is its raw value and
  // its digits with the shifted exponent its unit price, as the decimal arithmetic below gives them, without BigInt.
  if (typeof v === 'string' && (mode === 'scaled' || (mode === 'auto' && v.length >= 16)) && PLAIN_INTEGER.test(v)) {
    if (loan === null || collateral === null) return slot.reject('needs_decimals', "a scaled oracle price with the market's token decimals");
    const unit = Number(`${v}e${-(36 + loan - collateral)}`);
    if (!Number.isFinite(unit)) return slot.reject('not_a_price', 'an oracle price a number can hold');
    return slot.put({ raw: v, unit }, 'scaled integer');
  }
  if (isAbsent(v)) return READ_ABSENT;
  const d = toDecimal(v);
  if (!d) return slot.reject('not_a_price', 'an oracle price');
  if (d.negative) return slot.reject('negative_price', 'a positive oracle price');
  const big = isWhole(d) && d.digits * 10n ** BigInt(Math.max(0, d.exp)) >= BigInt(SCALED_FROM);
  const scaled = mode === 'scaled' || (mode === 'auto' && big);
  if (scaled && !isWhole(d)) return slot.reject('not_an_integer', 'a scaled integer oracle price');
  const shift = loan === null || collateral === null ? null : 36 + loan - collateral;
  if (scaled) {
    // A scaled integer means nothing without the decimals: unknown (as a token-unit amount is), never a price off by 10^n.
    if (shift === null) return slot.reject('needs_decimals', "a scaled oracle price with the market's token decimals");
    const unit = shiftToNumber(d, -shift);
    if (!Number.isFinite(unit)) return slot.reject('not_a_price', 'an oracle price a number can hold');
    return slot.put({ raw: shiftToInteger(d, 0).toString(), unit }, 'scaled integer');
  }
  const unit = shiftToNumber(d, 0);
  // A price past a double's range is no price: unknown, as readNumber makes 1e400 (SPEC §6), never Infinity.
  if (!Number.isFinite(unit)) return slot.reject('not_a_price', 'an oracle price a number can hold');
  return slot.put({ raw: shift === null ? null : shiftToInteger(d, shift).toString(), unit }, 'unit price');
}

/** Reads an oracle price; `loan`/`collateral` are the assets' decimals, null when unknown. */
export const readOraclePrice = (v: unknown, mode: OraclePriceMode, loan: number | null, collateral: number | null): FieldRead<OraclePrice> =>
  fieldRead(v, (x, slot) => leanOraclePrice(x, slot, mode, loan, collateral));
