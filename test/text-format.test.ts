/**
 * Text without ICU (src/text-format.ts): amounts grouped as `Intl.NumberFormat('en-US')` writes them — ICU itself is
 * the oracle here — and names in code-unit order.
 */
import { describe, expect, it } from 'vitest';
import { compareText, formatGrouped } from '../src/text-format.js';
import { mulberry32 as rng } from '../src/simulator/random.js';

const FRACTIONS: readonly [number, number][] = [
  [0, 0],
  [0, 2],
  [2, 2],
  [0, 3],
  [1, 6],
];

describe('formatGrouped', () => {
  it('writes what Intl.NumberFormat("en-US") writes for the edges: ties, carries, tiny and huge, signs', () => {
    const edges = [
      0, -0, 1, -1, 0.5, 1.5, 2.5, -2.5, 0.005, 1.005, 1.015, 1.025, 2.675, 0.125, 0.375, 9.995, 99.995, 999.5, 999_999.5,
      1_000, 12_345.678, 1_234_567.891, 0.000_123, 0.000_5, 1e-7, 5e-7, 1.5e-10, 1e21, 1.23e21, 9.999_999e22, 123_456_789_012_345_680,
      Number.MAX_SAFE_INTEGER, Number.MAX_VALUE, Number.MIN_VALUE, 0.1 + 0.2, 4.35, 1.45, 8.345, 1_000_000.005, -0.001, -1234.5,
    ];
    for (const [min, max] of FRACTIONS) {
      const intl = new Intl.NumberFormat('en-US', { minimumFractionDigits: min, maximumFractionDigits: max });
      for (const n of edges) expect(formatGrouped(n, min, max), `${n} with ${min}–${max} decimals`).toBe(intl.format(n));
    }
    expect(formatGrouped(NaN)).toBe(new Intl.NumberFormat('en-US').format(NaN));
    expect(formatGrouped(Infinity)).toBe(new Intl.NumberFormat('en-US').format(Infinity));
    expect(formatGrouped(-Infinity)).toBe(new Intl.NumberFormat('en-US').format(-Infinity));
  });

  it('writes what Intl.NumberFormat("en-US") writes for 20,000 seeded numbers of every size, half of them ties', () => {
    const r = rng(7);
    for (const [min, max] of FRACTIONS) {
      const intl = new Intl.NumberFormat('en-US', { minimumFractionDigits: min, maximumFractionDigits: max });
      for (let i = 0; i < 4000; i++) {
        const magnitude = 10 ** Math.floor(r() * 30 - 12);
        let n = (r() - 0.3) * magnitude;
        // A tie at the last kept decimal (…5 one place further), where rounding modes differ.
        if (i % 2 === 0) n = Number((Math.round(n * 10 ** max) / 10 ** max + 5 / 10 ** (max + 1)).toPrecision(15));
        expect(formatGrouped(n, min, max), `${n} with ${min}–${max} decimals`).toBe(intl.format(n));
      }
    }
  });

  it('matches the amounts lookout writes: dollars without cents from $100, with two below', () => {
    expect(formatGrouped(1_234_567.89, 0, 0)).toBe('1,234,568');
    expect(formatGrouped(99.999, 2, 2)).toBe('100.00');
    expect(formatGrouped(12.3, 0, 2)).toBe('12.3');
  });
});

describe('compareText', () => {
  it('orders by code units, the same in every locale, and says equal only for equal strings', () => {
    const names = ['b', 'a', 'B', 'A', 'a1', 'a10', 'a2', 'é', 'e', '0x0F', '0x0a', ''];
    expect([...names].sort(compareText)).toEqual(['', '0x0F', '0x0a', 'A', 'B', 'a', 'a1', 'a10', 'a2', 'b', 'e', 'é']);
    expect(compareText('x', 'x')).toBe(0);
    expect(compareText('x', 'y')).toBeLessThan(0);
    expect(compareText('y', 'x')).toBeGreaterThan(0);
  });
});
