/**
 * The usual date-time (`YYYY-MM-DDTHH:MM:SS`, with `Z`, `±HH:MM` or no zone) is read without the general way's
 * regexes; it must read exactly as the general way does. The same text with a space around it goes the general way
 * (the reader trims): both must give the same value and form, over seeded random texts in and around the usual form.
 */
import { describe, expect, it } from 'vitest';
import type { FieldRead } from '../src/source/read/result.js';
import { readTime } from '../src/source/read/times.js';
import { hash32 } from '../src/simulator/random.js';

/** A read without the rejection's detail (which quotes the text as it came, spaces and all). */
const gist = (r: FieldRead<number>) => (r.ok ? r : { ok: false, reason: r.reason });

describe('the usual date-time', () => {
  it('reads as the general way reads it (50,000 seeded texts)', () => {
    let i = 0;
    const pick = <T>(xs: readonly T[]): T => xs[hash32(7, i++) % xs.length]!;
    const two = () => pick(['00', '01', '09', '12', '13', '23', '24', '28', '29', '30', '31', '59', '60', '99', String(hash32(8, i++) % 100).padStart(2, '0')]);
    let usual = 0;
    for (let n = 0; n < 50_000; n++) {
      const year = pick(['2026', '1970', '0050', '0999', '1000', '9999', String(hash32(9, i++) % 10_000).padStart(4, '0')]);
      const zone = pick(['', 'Z', `+${two()}:${two()}`, `-${two()}:${two()}`, `+${two()}${two()}`, '-03', 'z']);
      const text = `${year}-${two()}-${two()}${pick(['T', 'T', 'T', 't', ' '])}${two()}:${two()}:${two()}${zone}`;
      const fast = readTime(text);
      expect(gist(fast), text).toEqual(gist(readTime(` ${text} `)));
      if (fast.ok && fast.value !== null) usual++;
    }
    expect(usual).toBeGreaterThan(1_000); // not vacuous: many texts were readable times
  });
});
