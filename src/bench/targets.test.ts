import { describe, expect, it } from 'vitest';
import type { Row } from './stats.js';
import { formatTargets, judgeTargets } from './targets.js';

const s = (median: number) => ({ n: 5, median, min: median, max: median, p90: median });
const row = (name: string, median: number, baseline?: number): Row => ({ name, n: '', subject: s(median), ...(baseline !== undefined ? { baseline: s(baseline) } : {}) });

describe('the performance targets', () => {
  it('judges each target on its boundary: met at the target, missed just past it', () => {
    const at = judgeTargets(
      [row('e2e.markets', 150, 100), row('store.save', 130, 100), row('rules.seven', 20), row('rules.positions', 5), row('rules.seven.incident', 40), row('rules.positions.incident', 10), row('metrics.http', 50), row('store.replay', 100)],
      new Map([
        ['loop_block_markets_ms', 50],
        ['loop_block_positions_ms', 50],
        ['bytes_per_history_row', 120],
        ['gb_30d', 25],
        ['replay_rows', 100_000],
        ['rss_small_mb', 80],
      ]),
    );
    const status = Object.fromEntries(at.map((t) => [t.id, t.status]));
    expect(status).toMatchObject({ B6s: 'met', B1: 'met', B3: 'met', B4: 'met', B5: 'met', B9: 'met', B10: 'met', B11: 'met', B12: 'met' });
    const past = judgeTargets(
      [row('e2e.markets', 151, 100), row('store.save', 131, 100), row('rules.seven', 20), row('rules.positions', 5), row('rules.seven.incident', 40), row('rules.positions.incident', 11), row('metrics.http', 51), row('store.replay', 101)],
      new Map([
        ['loop_block_markets_ms', 10],
        ['loop_block_positions_ms', 51],
        ['bytes_per_history_row', 121],
        ['gb_30d', 26],
        ['replay_rows', 100_000],
      ]),
    );
    for (const t of past.filter((t) => ['B1', 'B3', 'B4', 'B5', 'B9', 'B10', 'B11', 'B12'].includes(t.id))) expect(t.status, t.id).toBe('missed');
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
