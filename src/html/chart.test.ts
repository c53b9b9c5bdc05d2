import { describe, expect, it } from 'vitest';
import { downsample, renderChart, type Point } from './chart.js';
import { periodsOf } from '../alerts/periods.js';

const H = 3_600_000;
const series = (n: number, f: (i: number) => number | null): Point[] => Array.from({ length: n }, (_, i) => ({ t: i * 1000, v: f(i) }));

describe('downsample', () => {
  it('draws 10,000 points as at most 4 per column, keeping a one-point spike and the first and last', () => {
    const pts = series(10_000, (i) => (i === 6_543 ? 9 : 1 + (i % 7) / 100));
    const out = downsample(pts, 0, 9_999_000, 500);
    expect(out.length).toBeLessThanOrEqual(2_000);
    expect(out.length).toBeGreaterThan(500);
    expect(out.some((p) => p.t === 6_543_000 && p.v === 9)).toBe(true);
    expect(out[0]).toEqual(pts[0]);
    expect(out.at(-1)).toEqual(pts.at(-1));
    expect(out.map((p) => p.t)).toEqual([...out.map((p) => p.t)].sort((a, b) => a - b));
  });

  it('keeps a gap inside a column a gap, and leaves short series alone', () => {
    const pts = series(10_000, (i) => (i >= 5_000 && i < 5_003 ? null : 1));
    const out = downsample(pts, 0, 9_999_000, 100);
    expect(out.filter((p) => p.v === null)).toHaveLength(1);
    const short = series(50, () => 1);
    expect(downsample(short, 0, 49_000, 100)).toEqual(short);
  });
});

describe('renderChart', () => {
  const base = { from: 0, to: 2 * H, format: (v: number) => `${v}`, title: 't' };

  it('breaks the line at each gap and draws lines, bands and marks with escaped titles', () => {
    const svg = renderChart({
      ...base,
      series: [{ t: 0, v: 1 }, { t: H / 2, v: 2 }, { t: H, v: null }, { t: 1.5 * H, v: 3 }, { t: 2 * H, v: 2 }],
      lines: [{ value: 2.5, label: '<b>limit</b>', kind: 'threshold' }],
      bands: [{ from: H / 2, to: null, kind: 'firing' }],
      marks: [{ at: H / 2, label: 'sent & seen', kind: 'firing' }, { at: 5 * H, label: 'outside', kind: 'firing' }],
    });
    const d = /class="chart-series" d="([^"]+)"/.exec(svg)![1]!;
    expect(d.match(/M/g)).toHaveLength(2);
    expect(svg).toContain('&#60;b&#62;limit&#60;/b&#62; 2.5');
    expect(svg).not.toContain('<b>');
    expect(svg.match(/chart-band-firing/g)).toHaveLength(1);
    expect(svg.match(/<g class="chart-mark/g)).toHaveLength(1);
    expect(svg).toContain('sent &#38; seen');
  });

  it('says so when there is nothing to draw, and lays variants out in lanes under the plot', () => {
    const svg = renderChart({ ...base, series: [], lanes: ['now', 'threshold=0.97'], bands: [{ from: 0, to: H, kind: 'firing', lane: 1 }] });
    expect(svg).toContain('no stored readings in this range');
    expect(svg.match(/class="chart-lane"/g)).toHaveLength(2);
    expect(svg).toContain('threshold=0.97');
  });
});

describe('periodsOf', () => {
  const ev = (type: string, at: number, state = 'firing') => ({ type, at, alert: { state } }) as never;
  it('reads pending and firing spans off transitions; a cancel ends pending, a flap stays firing until it settles', () => {
    expect(periodsOf([ev('pending', 1), ev('firing', 3), ev('resolved', 9), ev('pending', 12), ev('cancelled', 13), ev('flapping', 20), ev('settled', 25, 'firing'), ev('settled', 30, 'resolved')])).toEqual([
      { kind: 'pending', from: 1, to: 3 },
      { kind: 'firing', from: 3, to: 9 },
      { kind: 'pending', from: 12, to: 13 },
      { kind: 'firing', from: 20, to: 30 },
    ]);
    expect(periodsOf([ev('firing', 5)])).toEqual([{ kind: 'firing', from: 5, to: null }]);
  });
});
