/** Exact decimal text arithmetic for amounts and prices: no float ever holds a 30-digit number. */
import { NUMERIC } from './result.js';

/** Integer text that is already its own shortest decimal form (no sign, point, exponent or leading zero). */
export const PLAIN_INTEGER = /^(?:0|[1-9]\d*)$/;

/** An exact decimal: sign × digits × 10^exp. */
export interface Decimal {
  negative: boolean;
  digits: bigint;
  exp: number;
}

/** The exact decimal a JSON number or numeric string means; undefined when it means none. */
export function toDecimal(v: unknown): Decimal | undefined {
  let s: string;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) return undefined;
    s = String(v);
  } else if (typeof v === 'bigint') s = v.toString();
  else if (typeof v === 'string') s = v.trim();
  else return undefined;
  if (!NUMERIC.test(s)) return undefined;
  const m = /^([+-]?)(\d*)\.?(\d*)(?:[eE]([+-]?\d+))?$/.exec(s);
  if (!m) return undefined;
  const [, sign = '', whole = '', frac = '', expText = '0'] = m;
  const exp = Number(expText) - frac.length;
  if (Math.abs(exp) > 400) return undefined;
  const digits = BigInt(whole + frac); // BigInt reads leading zeros as the number they lead, and no digits as 0
  return { negative: sign === '-' && digits !== 0n, digits, exp };
}

/** True when the decimal has no fractional part. */
export function isWhole(d: Decimal): boolean {
  return d.exp >= 0 || d.digits % 10n ** BigInt(-d.exp) === 0n;
}

/** The decimal × 10^shift as an integer, rounded half away from zero. */
export function shiftToInteger(d: Decimal, shift: number): bigint {
  const e = d.exp + shift;
  let n: bigint;
  if (e >= 0) n = d.digits * 10n ** BigInt(e);
  else {
    const div = 10n ** BigInt(-e);
    n = d.digits / div + ((d.digits % div) * 2n >= div ? 1n : 0n);
  }
  return d.negative ? -n : n;
}

/** The decimal × 10^shift as a number, rounded once (a shift of the decimal exponent, which `Number` parses exactly). */
export function shiftToNumber(d: Decimal, shift: number): number {
  return Number(`${d.negative ? '-' : ''}${d.digits}e${d.exp + shift}`);
}
