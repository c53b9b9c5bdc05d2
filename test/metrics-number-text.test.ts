import { describe, expect, it } from 'vitest';
import { writeNumberText } from '../src/metrics/number-text.js';
import { hash32 } from '../src/simulator/random.js';

const out = new Uint8Array(64);
const textOf = (v: number) => Buffer.from(out.subarray(0, writeNumberText(out, 0, v))).toString('latin1');

/** The values whose text is not String(v)'s (none is expected), at most 10. */
function mismatches(values: Iterable<number>): Array<[number, string, string]> {
  const bad: Array<[number, string, string]> = [];
  for (const v of values) {
    const got = textOf(v);
    if (got !== String(v) && bad.push([v, got, String(v)]) >= 10) break;
  }
  return bad;
}

describe('writeNumberText', () => {
  it('writes String(v) for the values at the edges of its own path and past them', () => {
    const edges = [
      0, -0, 1, 0.1, 0.2, 0.1 + 0.2, 0.5, 1e-6, 9.99e-7, 1e-7, 1.5e-6, 1.0000000000000002, 0.9999999999999999,
      999999999999999, 1e15, 1e15 + 1, 123456789012345.6, 99999999999999.99, 2 ** 53, 1e21, 1e22, 5e-324,
      Number.MIN_VALUE, Number.MAX_VALUE, 0.000001234567890123, 0.643871, 52835494.99, 1.19995864532622, 600, 1e-5,
    ];
    expect(mismatches(edges.flatMap((v) => [v, -v]))).toEqual([]);
    // The longest text (the render leaves room for 25 bytes a value) comes from String itself.
    expect(textOf(-0.0000012345678901234567)).toBe('-0.0000012345678901234567');
  });

  it('writes String(v) for seeded random values of every magnitude and digit count, and for random bit patterns', () => {
    const u = (i: number) => hash32(20261127, i) / 2 ** 32;
    const f64 = new Float64Array(1);
    const bits = new Uint32Array(f64.buffer);
    function* values() {
      for (let i = 0; i < 100_000; i++) {
        // A value of any magnitude around the fast path (1e-9 … 1e21), and one with 1–17 significant digits.
        yield u(4 * i) * 10 ** (Math.floor(u(4 * i + 1) * 31) - 9);
        const digits = 1 + Math.floor(u(4 * i + 2) * 17);
        const short = Math.round(u(4 * i + 3) * 10 ** digits) / 10 ** Math.floor(u(4 * i) * (digits + 3));
        yield short;
        yield -short;
        bits[0] = hash32(7, i);
        bits[1] = hash32(8, i);
        if (Number.isFinite(f64[0])) yield f64[0]!;
      }
    }
    expect(mismatches(values())).toEqual([]);
  });

  it('writes at the offset it is given and returns where the text ends', () => {
    const buf = new Uint8Array(16).fill(0x78);
    const end = writeNumberText(buf, 3, -12.5);
    expect(end).toBe(8);
    expect(Buffer.from(buf).toString('latin1')).toBe('xxx-12.5xxxxxxxx');
  });
});
