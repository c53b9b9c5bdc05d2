/**
 * The service's extra fields (the ones lookout has no reader for), normalized so rules and templates see one
 * type whatever form the service chose. The known fields are read field by field by the readers in `read/`.
 */
import { NUMERIC } from './read/result.js';
import { setOwn } from '../own.js';

const INTEGER_TEXT = /^[+-]?\d+$/;

/** Up to 15 digits an integer text is read exactly by a double (10^15 < 2^53). */
const EXACT_DIGITS = 15;

/**
 * The common case of {@link normalizeExtra}'s text without a regex or a new string: `-?` and digits only, no `+`. A
 * number when it is that number's own text, the text itself when it is not (a leading zero, "-0", more digits than
 * `String` writes a number with, or digits a double rounds); undefined for the rest (a sign `+`, a fraction, an
 * exponent, other text), which the general path decides. Up to 15 digits without building a string.
 */
function plainInteger(v: string): number | string | undefined {
  const len = v.length;
  const from = len > 0 && v.charCodeAt(0) === 45 /* - */ ? 1 : 0;
  const digits = len - from;
  if (digits === 0) return undefined;
  let n = 0;
  for (let i = from; i < len; i++) {
    const d = v.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return undefined;
    if (i - from < EXACT_DIGITS) n = n * 10 + d;
  }
  // A leading zero: "0" is 0's own text; "-0", "007", "-01" are no number's ("-0" is written "0").
  if (v.charCodeAt(from) === 48) return digits === 1 && from === 0 ? 0 : v;
  if (digits <= EXACT_DIGITS) return from === 1 ? -n : n;
  // From 10^21 up (and past a double's range) String writes an exponent: no digits-only text is a number's own.
  if (digits > 21) return v;
  // 16 to 21 digits: a number's own text only when String gives these digits back (10000000000000000 does).
  const x = Number(v);
  return String(x) === v ? x : v;
}

/**
 * An extra field the service sent (one lookout has no schema for), with numeric strings read as
 * numbers — recursively — so a rule or template sees one type whatever form the service chose:
 * "0.25", "2.5e-1" and "0.250" all become 0.25. Integer text is converted only when it is a number's own
 * text (never ids like "007", or amounts beyond 2^53, which a double would round), so nothing is lost.
 */
export function normalizeExtra(v: unknown, depth = 0): unknown {
  if (typeof v === 'string') {
    const plain = plainInteger(v);
    if (plain !== undefined) return plain;
    if (!NUMERIC.test(v)) return v;
    const n = Number(v);
    if (!Number.isFinite(n)) return v;
    // Integer text not decided above starts with "+" (every other one is digits after an optional "-").
    return v.charCodeAt(0) === 43 /* + */ && INTEGER_TEXT.test(v) ? (String(n) === v.slice(1) ? n : v) : n;
  }
  if (depth > 8 || v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map((x) => normalizeExtra(x, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) setOwn(out, k, normalizeExtra(x, depth + 1));
  return out;
}
