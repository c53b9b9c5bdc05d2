import { describe, expect, it } from 'vitest';
import { parseArgs, select } from './args.js';
import type { Bench } from './context.js';
import { formatRow, header, ms, percentile, ratio, summarize, timePair } from './stats.js';

describe('summarize', () => {
  it.each([
    { name: 'odd count', samples: [5, 1, 3], median: 3, min: 1, max: 5, p90: 5 },
    { name: 'even count', samples: [4, 1, 3, 2], median: 2.5, min: 1, max: 4, p90: 4 },
    { name: 'one sample', samples: [7], median: 7, min: 7, max: 7, p90: 7 },
    { name: 'ten samples', samples: [10, 9, 8, 7, 6, 5, 4, 3, 2, 1], median: 5.5, min: 1, max: 10, p90: 9 },
  ])('$name', ({ samples, median, min, max, p90 }) => {
    expect(summarize(samples)).toEqual({ n: samples.length, median, min, max, p90 });
  });

  it('gives NaN for no samples', () => {
    expect(summarize([]).median).toBeNaN();
  });
});

describe('percentile (nearest rank)', () => {
  const upTo = (n: number) => Array.from({ length: n }, (_, i) => n - i);
  it('p99 of 100 samples is the 99th, of 200 the 198th; under 100 samples it is the max', () => {
    expect(percentile(upTo(100), 0.99)).toBe(99);
    expect(percentile(upTo(200), 0.99)).toBe(198);
    expect(percentile(upTo(50), 0.99)).toBe(50);
    expect(percentile([3], 0)).toBe(3);
    expect(percentile([], 0.99)).toBeNaN();
  });
});

describe('formatting', () => {
  it.each([
    [1234.5, '1235'],
    [12.345, '12.3'],
    [1.2345, '1.23'],
    [0.01234, '0.0123'],
    [NaN, '–'],
  ])('ms(%s) = %s', (v, text) => expect(ms(v)).toBe(text));

  it.each([
    [300, 100, '3.00×'],
    [2500, 100, '25.0×'],
    [45_000, 100, '450×'],
    [5, undefined, '–'],
    [5, 0, '–'],
  ])('ratio(%s, %s) = %s', (a, b, text) => expect(ratio(a, b)).toBe(text));

  it('prints a Markdown row with the same number of cells as the header', () => {
    const row = formatRow({ name: 'x', n: '10 things', subject: summarize([1, 2, 3]), baseline: summarize([1]) });
    const cellsOf = (line: string) => line.split('|').length;
    expect(cellsOf(row)).toBe(cellsOf(header().split('\n')[0]!));
    expect(row).toContain('2.00×');
  });
});

describe('timePair', () => {
  it('alternates subject and baseline, drops the warmup, runs `before` untimed', async () => {
    const order: string[] = [];
    const t = await timePair(
      { before: () => order.push('prep'), run: () => order.push('A') },
      { run: () => order.push('B') },
      { warmup: 1, runs: 2 },
    );
    expect(order).toEqual(['prep', 'A', 'B', 'prep', 'A', 'B', 'prep', 'A', 'B']);
    expect(t.subject).toHaveLength(2);
    expect(t.baseline).toHaveLength(2);
  });
});

describe('args', () => {
  const benches = ['client.metrics', 'client.positions', 'store.save', 'store.replay', 'e2e'].map((name): Bench => ({ name, about: '', run: async () => {} }));

  it.each([
    { name: 'nothing', argv: [], quick: false, only: [] },
    { name: '--quick', argv: ['--quick'], quick: true, only: [] },
    { name: '--only with a list', argv: ['--only', 'store,e2e'], quick: false, only: ['store', 'e2e'] },
    { name: '--only=', argv: ['--only=client.metrics', '--quick'], quick: true, only: ['client.metrics'] },
  ])('parses $name', ({ argv, quick, only }) => {
    expect(parseArgs(argv)).toEqual({ quick, list: false, only });
  });

  it.each([[['--fast']], [['--only']]])('refuses %j', (argv) => {
    expect(() => parseArgs(argv)).toThrow();
  });

  it.each([
    { only: [], picked: ['client.metrics', 'client.positions', 'store.save', 'store.replay', 'e2e'] },
    { only: ['store'], picked: ['store.save', 'store.replay'] },
    { only: ['client.metrics', 'e2e'], picked: ['client.metrics', 'e2e'] },
  ])('selects $only', ({ only, picked }) => {
    expect(select(benches, only).map((b) => b.name)).toEqual(picked);
  });

  it('names the known benchmarks when asked for an unknown one', () => {
    expect(() => select(benches, ['nope'])).toThrow(/known: client.metrics/);
  });
});
