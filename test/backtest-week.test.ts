/**
 * `lookout backtest` over stored history gives the same fired/resolved set as the daemon live over the same
 * readings. First the regressions the simulated week found (small, hand-made sequences through the real poll
 * runner), then the week itself: simulators on a ManualClock, the real client and poll runner, a real SQLite file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { buildRows, runBacktest } from '../src/backtest/index.js';
import type { AlertEvent } from '../src/model.js';
import { migrations, openStore } from '../src/store/index.js';
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

  it('a benchmark whose day goes back, or changes under the same day, replays as the poll returned it', async () => {
    // History kept one row per (kind, entity, at) and the replay took a run's rows by their own time. A benchmark
    // reading's time is its day: when linea's newest day went back 3 days (isStale), that row's time was days before
    // the run (and already stored), and when sonic's day became complete later the same day, the first version was
    // kept. The backtest missed linea's stale alert and kept sonic's incomplete alert firing.
    const db = tempDb();
    const rules = parseRules([{ name: 'bench', kind: 'stale_benchmark', max_age: '36h', incomplete_for: '30m' }]);
    const at = (h: number) => T0 + h * HOUR;
    const today = T0;
    const steps: SmallStep[] = [1, 2, 3, 4, 5].map((h) => ({
      t: at(h),
      polls: [
        {
          name: 'benchmarks',
          kind: 'benchmarks',
          readings: [
            h >= 2 && h <= 3 ? benchmark('linea/usd', today - 3 * 24 * HOUR, true, true) : benchmark('linea/usd', today, true, false),
            benchmark('sonic/usd', today - 24 * HOUR, h >= 3, false),
          ],
        },
      ],
    }));
    const live = await runSmall(db, rules, steps);
    expect(transitions(live)).toEqual([
      'bench sonic/usd firing +60m',
      'bench linea/usd firing +120m',
      'bench sonic/usd resolved +180m',
      'bench linea/usd resolved +240m',
    ]);
    expect(backtestTransitions(db, rules, at(5))).toEqual(transitions(live).sort());
  });

  it('migrating a database keeps its history, each row stamped as seen at its own time', () => {
    const db = tempDb();
    // A database as lookout left it before schema version 4.
    const old = new Database(db);
    old.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)');
    for (const m of migrations.filter((m) => m.version < 4)) {
      old.exec(m.up);
      old.prepare('INSERT INTO schema_migrations VALUES (?, ?, 0)').run(m.version, m.name);
    }
    old.prepare(`INSERT INTO reading_labelsets (hash, labels) VALUES ('h', '{}')`).run();
    old.prepare(`INSERT INTO reading_history (kind, entity, at, fields, labelset, poll) VALUES ('market', 'm1', 1000, '{"utilization":0.5}', 'h', 'markets')`).run();
    old.close();
    const store = openStore(db);
    try {
      expect([...store.readings.iterateHistory(0, 5000, { by: 'seen' })]).toEqual([
        { kind: 'market', entity: 'm1', at: 1000, labels: {}, fields: { utilization: 0.5 }, poll: 'markets', seen_at: 1000 },
      ]);
      // A later revision of the same time is kept beside it; history as of before it still gives the first.
      store.readings.savePoll('markets', [{ kind: 'market', entity: 'm1', at: 1000, labels: {}, fields: { utilization: 0.7 } }], 2000);
      expect(store.readings.historyAt('market', 'm1', 1000)?.fields.utilization).toBe(0.7);
      expect(store.readings.historyAt('market', 'm1', 1000, 1999)?.fields.utilization).toBe(0.5);
      expect(store.readings.historyRange('market', 'm1', 0, 5000).map((r) => r.fields.utilization)).toEqual([0.7]);
      expect(store.readings.historyRange('market', 'm1', 0, 5000, 1500).map((r) => r.fields.utilization)).toEqual([0.5]);
    } finally {
      store.close();
    }
  });
});
