/**
 * The service's scalar values as zod schemas (SPEC §6), over the per-family readers in `read/` (which
 * the parsers use directly, field by field): absent (null, undefined, '') becomes `null`; a value that is
 * present but cannot mean what the field says fails. Also the helpers shared by the parsers.
 */
import { z } from 'zod';
import { readAmount } from './read/amounts.js';
import { readBoolean } from './read/booleans.js';
import { readInteger, readNumber, readString } from './read/numbers.js';
import { NUMERIC, type FieldRead } from './read/result.js';
import { readTime } from './read/times.js';

export { toNumber } from './read/numbers.js';
export { epochToMs, toEpochMs } from './read/times.js';

/** A schema over a reader: null when absent, the reader's detail as the issue when unreadable. */
function liberal<T>(reader: (v: unknown) => FieldRead<T>) {
  return z
    .unknown()
    .optional()
    .transform((v, ctx): T | null => {
      const r = reader(v);
      if (r.ok) return r.value;
      ctx.addIssue({ code: 'custom', message: r.detail });
      return z.NEVER;
    });
}

/** A finite number, from a JSON number or a numeric string; null when absent. */
export const num = liberal(readNumber);
/** An integer (block numbers, decimals); null when absent. */
export const int = liberal(readInteger);
/** An exact integer amount in base units as a decimal string; null when absent. */
export const bigIntString = liberal((v) => {
  const r = readAmount(v, null);
  return r.ok || r.reason !== 'needs_decimals' ? r : { ok: false, reason: 'not_an_integer', detail: r.detail.replace("decimal token units with the token's decimals", 'an integer amount') };
});
/** A time as Unix ms; null when absent. */
export const time = liberal(readTime);
/** A boolean from true/false (any case), "1"/"0", 1/0; null when absent. */
export const bool = liberal(readBoolean);
/** A string; numbers become their decimal text; null when absent. */
export const str = liberal(readString);

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
