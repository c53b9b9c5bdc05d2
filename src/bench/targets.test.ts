import { describe, expect, it } from 'vitest';
import type { Row } from './stats.js';
import { formatTargets, judgeTargets } from './targets.js';

const s = (median: number) => ({ n: 5, median, min: median, max: median, p90: median });
/** Figures of a full cycles run: RSS at cycle 100 and 500, MB. */
const full = (from: number, last: number): Array<[string, number]> => [
  ['cycles_rss_from_mb', from],
  ['cycles_rss_last_mb', last],
  ['cycles_from', 100],
  ['cycles_run', 500],
  ['cycles_markets', 10_000],
];
const storm = (lost: number, duplicated: number): Array<[string, number]> => [
  ['storm_last_ms', 40_000],
  ['storm_groups', 36],
  ['storm_lost', lost],
  ['storm_duplicated', duplicated],
  ['storm_markets', 10_000],
];
const latency = (own: number, viaAlertmanager: number): Array<[string, number]> => [
  ['latency_lookout_ms', own],
  ['latency_prometheus_ms', viaAlertmanager],
];
const row = (name: string, median: number, baseline?: number): Row => ({ name, n: '', subject: s(median), ...(baseline !== undefined ? { baseline: s(baseline) } : {}) });

describe('the performance targets', () => {
  it('judges each target on its boundary: met at the target, missed just past it', () => {
    const at = judgeTargets(
      [row('e2e.markets', 150, 100), row('e2e.positions', 150, 100), row('store.save', 130, 100), row('rules.seven', 20), row('rules.positions', 5), row('rules.seven.incident', 40), row('rules.positions.incident', 10), row('metrics.http', 50), row('backtest.replay', 100)],
      new Map([
        ['loop_block_markets_ms', 50],
        ['loop_block_positions_ms', 50],
        ['bytes_per_history_row', 120],
        ['gb_30d', 25],
        ['replay_rows', 100_000],
        ['rss_small_mb', 80],
        ['scrape_polling_p99_ms', 100],
        ...full(190, 199.5), // 200 MB at most, and growth 5% exactly
        ...storm(0, 0),
        ...latency(500, 1000),
      ]),
    );
    const status = Object.fromEntries(at.map((t) => [t.id, t.status]));
    expect(status).toMatchObject({ B2: 'met', B6: 'met', B6s: 'met', B7: 'met', B8: 'met', B1: 'met', B3: 'met', B4: 'met', B5: 'met', B9: 'met', B10: 'met', B11: 'met', B12: 'met' });
    const past = judgeTargets(
      [row('e2e.markets', 151, 100), row('e2e.positions', 151, 100), row('store.save', 131, 100), row('rules.seven', 20), row('rules.positions', 5), row('rules.seven.incident', 40), row('rules.positions.incident', 11), row('metrics.http', 51), row('backtest.replay', 101)],
      new Map([
        ['loop_block_markets_ms', 10],
        ['loop_block_positions_ms', 51],
        ['bytes_per_history_row', 121],
        ['gb_30d', 26],
        ['replay_rows', 100_000],
        ['scrape_polling_p99_ms', 101],
        ...full(195, 200.1),
        ...storm(1, 0),
        ...latency(510, 1000),
      ]),
    );
    for (const t of past.filter((t) => ['B1', 'B2', 'B3', 'B4', 'B5', 'B6', 'B7', 'B8', 'B9', 'B10', 'B11', 'B12'].includes(t.id))) expect(t.status, t.id).toBe('missed');
  });

  it('misses B6 on growth alone, and B7 on a duplicated group alone', () => {
    const status = (f: Array<[string, number]>, id: string) => judgeTargets([], new Map(f)).find((t) => t.id === id)?.status;
    expect(status(full(100, 105), 'B6')).toBe('met');
    expect(status(full(100, 105.1), 'B6')).toBe('missed');
    expect(status(storm(0, 1), 'B7')).toBe('missed');
  });

  it('misses B5 on the p99 while a poll runs alone; without it, judges only a missed median', () => {
    const b5 = (median: number, f: Array<[string, number]>) => judgeTargets([row('metrics.http', median)], new Map(f)).find((t) => t.id === 'B5')!;
    expect(b5(20, [['scrape_polling_p99_ms', 100]]).status).toBe('met');
    expect(b5(20, [['scrape_polling_p99_ms', 101]]).status).toBe('missed');
    expect(b5(20, []).status).toBe('not measured');
    expect(b5(20, []).note).toMatch(/e2e did not run/);
    expect(b5(51, []).status).toBe('missed');
  });

  it('does not judge B6 on a quick run (fewer cycles, a small world), and says so with the figures', () => {
    const quick = judgeTargets([], new Map([...full(100, 104), ['cycles_run', 20], ['cycles_markets', 200]])).find((t) => t.id === 'B6')!;
    expect(quick.status).toBe('not measured');
    expect(quick.measured).toBe('104 MB after 20 cycles, +4.0% since cycle 100');
    expect(quick.note).toMatch(/quick run/);
  });

  it('says "not measured", and why, for every target whose benchmark did not run or does not exist', () => {
    const none = judgeTargets([], new Map());
    expect(none.map((t) => t.id)).toEqual(['B1', 'B2', 'B3', 'B4', 'B5', 'B6', 'B6s', 'B7', 'B8', 'B9', 'B10', 'B11', 'B12']);
    for (const t of none) {
      expect(t.status, t.id).toBe('not measured');
      expect(t.note, t.id).toBeTruthy();
    }
    expect(formatTargets(none)).toHaveLength(2 + 13);
  });
});
