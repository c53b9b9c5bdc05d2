/**
 * `lookout backtest` over stored history gives the same fired/resolved set as the daemon live over the same
 * readings. First the regressions the simulated week found (small, hand-made sequences through the real poll
 * runner), then the week itself: simulators on a ManualClock, the real client and poll runner, a real SQLite file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildRows, runBacktest } from '../src/backtest/index.js';
import type { AlertEvent } from '../src/model.js';
import { openStore } from '../src/store/index.js';
import { benchmark, marketReading, position, runSmall, transitions, type SmallStep } from './fixtures/backtest-week/small.js';
import { alerting, HOUR, MIN, parseRules, sourceDown, T0 } from './fixtures/backtest-week/world.js';

const dirs: string[] = [];
const tempDb = () => {
  const d = mkdtempSync(join(tmpdir(), 'lookout-bt-week-'));
  dirs.push(d);
  return join(d, 'lookout.db');
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** The firing/resolved transitions a backtest of [T0, to] over the DB replays. */
function backtestTransitions(dbPath: string, rules: ReturnType<typeof parseRules>, to: number): string[] {
  const store = openStore(dbPath, { readonly: true });
  try {
    const events: AlertEvent[] = [];
    const report = runBacktest({ store, rules, alerting, sourceDown, from: T0, to });
    // Rows → the same transition lines as the live events give.
    for (const r of report.current.rows) {
      events.push({ type: 'firing', at: r.fired_at, alert: { rule: r.rule, entity: r.entity } as AlertEvent['alert'] });
      if (r.resolved_at !== null) events.push({ type: 'resolved', at: r.resolved_at, alert: { rule: r.rule, entity: r.entity } as AlertEvent['alert'] });
    }
    return transitions(events).sort();
  } finally {
    store.close();
  }
}

const episodes = (events: AlertEvent[], to: number) =>
  buildRows(events, to, 4 * HOUR).map((r) => `${r.rule} ${r.entity} +${(r.fired_at - T0) / MIN}m→${r.resolved_at === null ? 'open' : `+${(r.resolved_at - T0) / MIN}m`}`);

describe('regressions found by the simulated week', () => {
  it('an entity that vanishes from a successful poll resolves after absent_for polls, live as in the backtest', async () => {
    // Live, the poll runner forgets the `latest` row of a vanished entity before the engine judges the poll; the
    // engine looked there to decide that the poll "last saw" the entity, so a vanished entity never counted as absent.
    const db = tempDb();
    const rules = parseRules([{ name: 'unverified', kind: 'unverified_position', min_value_usd: 10_000 }]);
    const at = (m: number) => T0 + m * MIN;
    const steps: SmallStep[] = [1, 2, 3, 4, 5].map((m) => ({
      t: at(m),
      polls: [{ name: 'positions', kind: 'positions', readings: [position('p-ok', at(m), 5_000, true), ...(m <= 2 ? [position('p-big', at(m), 50_000, false)] : [])] }],
    }));
    const live = await runSmall(db, rules, steps);
    expect(transitions(live)).toEqual(['unverified p-big firing +1m', 'unverified p-big resolved +5m']);
    expect(backtestTransitions(db, rules, at(5))).toEqual(transitions(live).sort());
  });

  it('a `for` that ends exactly at a poll time is judged by that poll, even when another poll ran first at that time', async () => {
    // The replay ran timers due at t after every run at t, so a pending alert fired between an earlier poll at t and
    // its own poll at t, which then resolved it: an episode of zero length that live never had (live, the poll at the
    // deadline cancels a pending alert whose condition is gone).
    const db = tempDb();
    const rules = parseRules([{ name: 'util', kind: 'utilization_above', threshold: 0.95, for: '10m' }]);
    const at = (m: number) => T0 + m * MIN;
    const steps: SmallStep[] = [0, 5, 10, 15].map((m) => ({
      t: at(m),
      polls: [
        { name: 'other', kind: 'metrics', readings: [marketReading('m-other', at(m), 0.5)] },
        { name: 'markets', kind: 'metrics', readings: [marketReading('m1', at(m), m < 10 ? 0.97 : 0.5)] },
      ],
    }));
    const live = await runSmall(db, rules, steps);
    expect(transitions(live)).toEqual([]);
    expect(backtestTransitions(db, rules, at(15))).toEqual([]);
  });
});
