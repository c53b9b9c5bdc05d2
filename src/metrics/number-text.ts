/**
 * A number's text as `String(v)` writes it, straight into a byte buffer: the market families' render writes 70,000
 * values a poll at SPEC §8 scale, and `String(v)` (a string made for each, then copied byte by byte) was most of
 * its time. Numbers with at most 15 significant digits in plain decimal notation (1e-6 ≤ |v| < 1e15) are written
 * here; any other is written from `String(v)`, so the bytes are always exactly those.
 *
 * Why the fast path is exact: `String(v)` gives the fewest digits that read back as `v`. For the smallest k such that
 * m = round(|v| × 10^k) reads back (m / 10^k === |v|: both exact integers below 2^53 and 10^22, so the division is
 * the correctly rounded value of the decimal m·10^-k, as parsing it would be), m·10^-k has the fewest fractional
 * digits, hence the fewest significant digits, of any decimal that reads back; with m < 10^15 no other decimal of as
 * many digits reads back as `v` (15 significant digits always read back apart), so it is the one `String(v)` writes.
 * And the product is close enough for `round` to find m: |v × 10^k − m| ≤ m × 2^-52 < 0.25.
 */

/** 10^k for k = 0…22, every one exact as a double. */
const POW10 = Array.from({ length: 23 }, (_, k) => 10 ** k);
/** Integers from here have 16 digits: past what is written here. */
const MAX_M = 1e15;
/** The digits of m, last first, with the zeros in front of a fraction's (k ≤ 22 of them). */
const scratch = new Uint8Array(POW10.length + 1);

/** Writes m's decimal digits (0 ≤ m < 10^15, an integer) at `at`, `width` of them at least (zeros in front); returns the end. */
function writeDigits(out: Uint8Array, at: number, m: number, width: number): number {
  let n = 0;
  do {
    const q = Math.floor(m / 10);
    scratch[n++] = 48 + (m - q * 10);
    m = q;
  } while (m > 0);
  while (n < width) scratch[n++] = 48;
  while (n > 0) out[at++] = scratch[--n]!;
  return at;
}

/**
 * Writes `String(v)` for a finite `v` into `out` at `at` (room for 25 bytes, the longest such text, is the caller's);
 * returns where it ends.
 */
export function writeNumberText(out: Uint8Array, at: number, v: number): number {
  if (v === 0) {
    out[at] = 48; // "0", for -0 too
    return at + 1;
  }
  const a = v < 0 ? -v : v;
  if (a >= 1e-6 && a < MAX_M) {
    for (let k = 0; k < POW10.length; k++) {
      const p = POW10[k]!;
      const m = Math.round(a * p);
      if (m >= MAX_M) break;
      if (m / p !== a) continue;
      if (v < 0) out[at++] = 45; // -
      if (k === 0) return writeDigits(out, at, m, 1);
      const whole = Math.floor(m / p);
      at = writeDigits(out, at, whole, 1);
      out[at++] = 46; // .
      return writeDigits(out, at, m - whole * p, k);
    }
  }
  const text = String(v);
  for (let i = 0; i < text.length; i++) out[at++] = text.charCodeAt(i);
  return at;
}
