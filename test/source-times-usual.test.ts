/**
 * The usual date-time (`YYYY-MM-DDTHH:MM:SS`, optionally `.sss`, with `Z`, `±HH:MM` or no zone) is read without the general way's
 * regexes; it must read exactly as the general way does. The same text with a space around it goes the general way
 * (the reader trims): both must give the same value and form, over seeded random texts in and around the usual form.
 */
import { describe, expect, it } from 'vitest';
import type { FieldRead } from '../src/source/read/result.js';
import { readTime, usualDateTime } from '../src/source/read/times.js';
import { hash32 } from '../src/simulator/random.js';

/** A read without the rejection's detail (which quotes the text as it came, spaces and all). */
const gist = (r: FieldRead<number>) => (r.ok ? r : { ok: false, reason: r.reason });

describe('the usual date-time', () => {
  it('reads as the general way reads it (50,000 seeded texts)', () => {
    let i = 0;
    const pick = <T>(xs: readonly T[]): T => xs[hash32(7, i++) % xs.length]!;
    const two = () => pick(['00', '01', '09', '12', '13', '23', '24', '28', '29', '30', '31', '59', '60', '99', String(hash32(8, i++) % 100).padStart(2, '0')]);
    let usual = 0;
    let withMs = 0;
    for (let n = 0; n < 50_000; n++) {
      const year = pick(['2026', '1970', '0050', '0999', '1000', '9999', String(hash32(9, i++) % 10_000).padStart(4, '0')]);
      const zone = pick(['', 'Z', `+${two()}:${two()}`, `-${two()}:${two()}`, `+${two()}${two()}`, '-03', 'z']);
      const fraction = pick(['', '', '', '.000', `.${two()}${pick(['0', '5', '9'])}`, '.5', '.12', '.1234', ',123', '.12a', '.-12']);
      const text = `${year}-${two()}-${two()}${pick(['T', 'T', 'T', 't', ' '])}${two()}:${two()}:${two()}${fraction}${zone}`;
      const fast = readTime(text);
      expect(gist(fast), text).toEqual(gist(readTime(` ${text} `)));
      if (!Number.isNaN(usualDateTime(text))) {
        usual++;
        if (fraction !== '') withMs++;
      }
    }
    // Not vacuous: the fast path itself read some (~120) of the texts, milliseconds and all in some (~45).
    expect(usual).toBeGreaterThan(80);
    expect(withMs).toBeGreaterThan(20);
  });

  it('reads as the general way and Date.parse read it: 20,000 seeded texts of the usual form (half with milliseconds), every one read by the fast path', () => {
    let i = 0;
    const upTo = (n: number, from = 0) => String(from + (hash32(11, i++) % (n - from + 1))).padStart(2, '0');
    for (let n = 0; n < 20_000; n++) {
      const zone = [``, `Z`, `+${upTo(23)}:${upTo(59)}`, `-${upTo(23)}:${upTo(59)}`][hash32(12, i++) % 4]!;
      const fraction = ['', `.${String(hash32(14, i++) % 1000).padStart(3, '0')}`][hash32(15, i++) % 2]!;
      const text = `${1000 + (hash32(13, i++) % 9000)}-${upTo(12, 1)}-${upTo(28, 1)}T${upTo(23)}:${upTo(59)}:${upTo(59)}${fraction}${zone}`;
      expect(usualDateTime(text), text).not.toBeNaN();
      // The value Date.parse gives the same text (a zone-less one read as UTC), to the millisecond.
      expect(usualDateTime(text), text).toBe(Date.parse(zone === '' ? `${text}Z` : text));
      expect(gist(readTime(text)), text).toEqual(gist(readTime(` ${text} `)));
    }
  });
});
