/**
 * Liberal zod schemas for the service's scalar values (SPEC §6): numbers as JSON numbers or numeric
 * strings, exact big integers as decimal strings, times as Unix seconds, milliseconds or ISO-8601.
 * Absent and null values become `null`; a value that is present but cannot mean what the field says fails.
 */
import { z } from 'zod';

const NUMERIC = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const INTEGER = /^[+-]?\d+$/;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/;

/** Below this a numeric time is Unix seconds (1e11 s is the year 5138; 1e11 ms is 1973). */
const SECONDS_BELOW = 1e11;
/** At or above this a numeric time is microseconds (1e14 ms is the year 5138). */
const MICROS_FROM = 1e14;

/**
 * A schema that turns a raw value into `T` with `convert`, null when absent (null, undefined or ''),
 * and fails with `expected` when `convert` returns undefined.
 */
function liberal<T>(expected: string, convert: (v: unknown) => T | undefined) {
  return z
    .unknown()
    .optional()
    .transform((v, ctx): T | null => {
    if (v === null || v === undefined || v === '') return null;
    const out = convert(v);
    if (out === undefined) {
      ctx.addIssue({ code: 'custom', message: `expected ${expected}, got ${preview(v)}` });
      return z.NEVER;
    }
    return out;
  });
}

/** A short, safe rendering of an offending value for a rejection's detail. */
function preview(v: unknown): string {
  const text = typeof v === 'string' ? JSON.stringify(v) : typeof v === 'object' ? (Array.isArray(v) ? 'an array' : 'an object') : String(v);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

/** Parses a number from a JSON number or a numeric string; undefined if it is neither. */
export function toNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v === 'string' && NUMERIC.test(v.trim())) return Number(v.trim());
  return undefined;
}

/** A finite number, from a JSON number or a numeric string; null when absent. */
export const num = liberal('a number', toNumber);

/** An integer (block numbers, decimals), from a number or a numeric string; null when absent. */
export const int = liberal('an integer', (v) => {
  const n = toNumber(v);
  return n !== undefined && Number.isInteger(n) ? n : undefined;
});

/** Expands a numeric string in exponent form (`1.5e36`) to an exact integer string, or undefined if not an integer. */
function exponentToInteger(s: string): string | undefined {
  const m = /^([+-]?)(\d*)\.?(\d*)[eE]([+-]?\d+)$/.exec(s);
  if (!m) return undefined;
  const [, sign = '', whole = '', frac = '', expText = '0'] = m;
  const exp = Number(expText);
  if (exp > 400 || exp < -400) return undefined;
  const digits = whole + frac;
  const point = whole.length + exp;
  if (point < 0) return /^0*$/.test(digits) ? '0' : undefined;
  if (/[1-9]/.test(digits.slice(point))) return undefined;
  const intPart = (digits.slice(0, point) + '0'.repeat(Math.max(0, point - digits.length))).replace(/^0+(?=\d)/, '');
  return (sign === '-' && intPart !== '0' ? '-' : '') + (intPart || '0');
}

/** Normalizes an integer given as number or string to its exact decimal string, or undefined if it isn't one. */
export function toIntegerString(v: unknown): string | undefined {
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v).toString() : undefined;
  if (typeof v !== 'string') return undefined;
  const s = v.trim();
  if (INTEGER.test(s)) return BigInt(s).toString();
  if (/^[+-]?\d+\.0*$/.test(s)) return BigInt(s.slice(0, s.indexOf('.'))).toString();
  return exponentToInteger(s);
}

/** An exact integer (token amounts in base units, oracle prices) as a decimal string; null when absent. */
export const bigIntString = liberal('an integer amount', toIntegerString);

/** Converts a Unix time in seconds, milliseconds or microseconds (told apart by magnitude) to ms. */
export function epochToMs(n: number): number {
  const a = Math.abs(n);
  if (a < SECONDS_BELOW) return Math.round(n * 1000);
  if (a >= MICROS_FROM) return Math.round(n / 1000);
  return Math.round(n);
}

/** Parses a time given as epoch seconds/ms (number or numeric string) or ISO-8601 to ms; undefined if it is none. */
export function toEpochMs(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? epochToMs(v) : undefined;
  if (typeof v !== 'string') return undefined;
  const s = v.trim();
  if (NUMERIC.test(s)) return epochToMs(Number(s));
  if (!ISO_DATE.test(s)) return undefined;
  // A date-time without a zone is read as UTC, never as the host's local time.
  const zoned = /T|\s/.test(s) && !/(Z|[+-]\d{2}:?\d{2})$/.test(s) ? `${s.replace(' ', 'T')}Z` : s.replace(' ', 'T');
  const ms = Date.parse(zoned);
  return Number.isNaN(ms) ? undefined : ms;
}

/** A time as Unix ms; null when absent. */
export const time = liberal('a time (Unix seconds, milliseconds or ISO-8601)', toEpochMs);

/** A boolean from true/false, "true"/"false" (any case), 1/0; null when absent. */
export const bool = liberal('a boolean', (v) => {
  if (typeof v === 'boolean') return v;
  if (v === 1 || v === 0) return v === 1;
  if (typeof v !== 'string') return undefined;
  const s = v.trim().toLowerCase();
  return s === 'true' || s === '1' ? true : s === 'false' || s === '0' ? false : undefined;
});

/** A string; numbers become their decimal text (ids sometimes arrive as numbers); null when absent. */
export const str = liberal('a string', (v) => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined));

/**
 * oracle_price / (1e36 × 10^(loanDecimals − collateralDecimals)) as a number, rounded once at the end:
 * the division is a shift of the decimal exponent of the exact integer, which `Number` rounds correctly.
 * Null when the price or either decimals is unknown.
 */
export function scaleOraclePrice(price: string | null, loanDecimals: number | null, collateralDecimals: number | null): number | null {
  if (price === null || loanDecimals === null || collateralDecimals === null) return null;
  const shift = 36 + loanDecimals - collateralDecimals;
  return Number(`${price}e${-shift}`);
}

/** The first problem of a zod error as `path: message`, for a rejection's detail. */
export function describeIssue(err: z.ZodError): string {
  const issue = err.issues[0];
  if (!issue) return 'invalid';
  const path = issue.path.length ? issue.path.join('.') : 'row';
  return `${path}: ${issue.message}`;
}

/**
 * An extra field the service sent (one lookout has no schema for), with numeric strings read as
 * numbers — recursively — so a rule or template sees one type whatever form the service chose.
 * Only strings that are exactly a number's own text are converted (never ids like "007" or amounts
 * beyond 2^53), so nothing is lost.
 */
export function normalizeExtra(v: unknown, depth = 0): unknown {
  if (typeof v === 'string') {
    if (!NUMERIC.test(v)) return v;
    const n = Number(v);
    return Number.isFinite(n) && String(n) === v ? n : v;
  }
  if (depth > 8 || v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map((x) => normalizeExtra(x, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = normalizeExtra(x, depth + 1);
  return out;
}
