/**
 * Text for people without ICU (B6s): an order of names, and amounts grouped in thousands as `Intl.NumberFormat('en-US')`
 * writes them. The first collator or number format a process makes reads ICU's data: rendering one alert's message
 * (the group's order by entity, an amount in dollars) took the daemon watching 200 markets from 91 to 98–101 MB of
 * RSS, mapped and never given back (docs/performance.md
 * "B6s: undici without its index, no ICU, the young generation by the responses").
 * test/text-format.test.ts holds {@link formatGrouped} to `Intl.NumberFormat('en-US')` itself.
 */

/**
 * Orders two names by their UTF-16 code units: the same on every machine and locale (no collator). Upper case sorts
 * before lower, digits before letters — names of markets, rules and wallets, not words of prose.
 */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * `n` as `new Intl.NumberFormat('en-US', { minimumFractionDigits, maximumFractionDigits }).format(n)` writes it:
 * thousands grouped with commas, at most `maxFrac` decimals rounded half away from zero on the number's shortest
 * decimal form (as ICU rounds: 1.005 → 1.01, where `toFixed` reads the binary value and gives 1.00), trailing zeros
 * dropped down to `minFrac`; `-` for a negative number and for -0, `NaN`, `∞`.
 */
export function formatGrouped(n: number, minFrac = 0, maxFrac = 3): string {
  if (Number.isNaN(n)) return 'NaN';
  const sign = n < 0 || Object.is(n, -0) ? '-' : '';
  if (!Number.isFinite(n)) return `${sign}∞`;
  let { digits, point } = shortestDecimal(Math.abs(n));
  // At least one integer digit, so that rounding can carry into it.
  if (point < 1) {
    digits = '0'.repeat(1 - point) + digits;
    point = 1;
  }
  const keep = point + maxFrac;
  if (digits.length > keep) {
    const up = digits.charCodeAt(keep) >= 53; // '5': half or more away from zero
    digits = digits.slice(0, keep);
    if (up) {
      const carried = increment(digits);
      if (carried.length > digits.length) point++;
      digits = carried;
    }
  }
  const intPart = digits.slice(0, point).padEnd(point, '0').replace(/^0+(?=\d)/, '');
  let frac = digits.slice(point).replace(/0+$/, '');
  if (frac.length < minFrac) frac = frac.padEnd(minFrac, '0');
  return `${sign}${group(intPart)}${frac ? `.${frac}` : ''}`;
}

/** The decimal digits of a finite `x ≥ 0` as JavaScript writes it shortest (no leading zeros), and where the point falls. */
function shortestDecimal(x: number): { digits: string; point: number } {
  const s = String(x);
  const e = s.indexOf('e');
  const mantissa = e < 0 ? s : s.slice(0, e);
  const exp = e < 0 ? 0 : Number(s.slice(e + 1));
  const dot = mantissa.indexOf('.');
  const raw = dot < 0 ? mantissa : mantissa.slice(0, dot) + mantissa.slice(dot + 1);
  let point = (dot < 0 ? mantissa.length : dot) + exp;
  const lead = /^0*/.exec(raw)![0].length;
  point -= lead;
  const digits = raw.slice(lead);
  return digits === '' ? { digits: '0', point: 1 } : { digits, point };
}

/** A string of decimal digits plus one in its last place (one digit longer when it carries out: 999 → 1000). */
function increment(digits: string): string {
  let i = digits.length - 1;
  while (i >= 0 && digits[i] === '9') i--;
  if (i < 0) return '1' + '0'.repeat(digits.length);
  return digits.slice(0, i) + String.fromCharCode(digits.charCodeAt(i) + 1) + '0'.repeat(digits.length - 1 - i);
}

/** Commas between each three digits of an integer's digits, from the right. */
function group(int: string): string {
  const head = int.length % 3 || 3;
  let out = int.slice(0, head);
  for (let i = head; i < int.length; i += 3) out += `,${int.slice(i, i + 3)}`;
  return out;
}
