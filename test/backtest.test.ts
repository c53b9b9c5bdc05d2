import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runTimersUntil } from '../src/alerts/timers.js';
import { buildRows, formatBacktest, runBacktest, runBacktestCommand, type BacktestRow } from '../src/backtest/index.js';
import { ManualClock } from '../src/clock.js';
import type { AlertEvent, Reading } from '../src/model.js';
import type { Store } from '../src/store/index.js';
import { defaults, drive, engineFor, episodes, HOUR, market, MIN, outcome, rule, T0, tempDirs, tempStore, type Episode } from './alerts-helpers.js';

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

const rules = () => [
  rule({ name: 'util-warn', kind: 'utilization_above', threshold: 0.9, clear_below: 0.85, for: '5m' }),
  rule({ name: 'util-crit', kind: 'utilization_above', severity: 'critical', threshold: 0.95, for: '0' }),
  rule({ name: 'apy-jump', kind: 'apy_jump', window: '30m', min_change: 0.02 }),
];

/** Utilization of m1 over the 3 hours: waves that cross both thresholds. */
const wave = (i: number) => 0.8 + 0.18 * Math.max(0, Math.sin(i / 12));

/**
 * Builds 3 hours of 1-minute polls in a store, driving the live engine as the daemon does; returns the live events.
 * - `fresh` (poll markets-b): m1 waves; m3 fires then vanishes at 60m; failures at 100–103m trip source_down.
 * - `steady` (poll markets-a): m2's timestamp never changes (one history row), utilization 0.99: carried forward.
 */
function liveHistory(store: Store): AlertEvent[] {
  const engine = engineFor(store, rules());
  const events: AlertEvent[] = [];
  const tx = <T>(fn: () => T) => store.transaction(fn);
  for (let i = 0; i < 180; i++) {
    const now = T0 + i * MIN;
    for (const r of runTimersUntil(engine, now - 1, tx)) events.push(...r.events);
    const b: Reading[] = [market('m1', now, { utilization: wave(i), borrow_apy: i >= 90 && i < 120 ? 0.09 : 0.05 })];
    if (i < 60) b.push(market('m3', now, { utilization: 0.97 }));
    const failed = i >= 100 && i <= 103;
    events.push(...drive(store, engine, outcome('markets-b', 'metrics', b, now, !failed)).events);
    events.push(...drive(store, engine, outcome('markets-a', 'metrics', [market('m2', T0, { utilization: 0.99 })], now)).events);
    for (const r of runTimersUntil(engine, now, tx)) events.push(...r.events);
  }
  return events;
}

const span = (r: Episode) => `${r.rule}/${r.entity} ${(r.fired_at - T0) / MIN}m→${r.resolved_at === null ? 'open' : `${(r.resolved_at - T0) / MIN}m`}`;
const shape = (rows: BacktestRow[]) => rows.map((r) => `${span(r)} n=${r.notifications}`);
const END = T0 + 179 * MIN;

describe('runTimersUntil', () => {
  it('ticks each deadline at or before t, at its own time, and none after', () => {
    const store = tempStore(dirs);
    const engine = engineFor(store, [rule({ name: 'util-warn', kind: 'utilization_above', threshold: 0.9, for: '5m' })]);
    drive(store, engine, outcome('markets', 'metrics', [market('m1', T0, { utilization: 0.95 })], T0));
    const tx = <T>(fn: () => T) => store.transaction(fn);
    expect(runTimersUntil(engine, T0 + 5 * MIN - 1, tx)).toEqual([]);
    const fired = runTimersUntil(engine, T0 + 5 * MIN, tx).flatMap((r) => r.events.map((e) => `${e.type}@${(e.at - T0) / MIN}`));
    expect(fired).toEqual(['firing@5']);
    store.close();
  });
});

describe('backtest', () => {
  it('gives the same fired/resolved set as the live engine over the same readings, and leaves the live alerts alone', () => {
    const store = tempStore(dirs);
    const live = liveHistory(store);
    const alertsBefore = store.db.prepare('SELECT count(*) AS n FROM alerts').get();
    const eventsBefore = store.db.prepare('SELECT count(*) AS n FROM alert_events').get();

    const report = runBacktest({ store, rules: rules(), alerting: defaults.alerting, sourceDown: defaults.sourceDown, from: T0, to: END });
    expect(report.current.rows.map(span)).toEqual(episodes(live).map(span));
    // the scenario exercises what it claims to
    const got = shape(report.current.rows).join('\n');
    expect(got).toContain('util-crit/m3 0m→62m n=2'); // vanished at 60m: resolved on the 3rd successful poll without it; FIRING and RESOLVED
    expect(got).toContain('util-crit/m2 0m→open n=1'); // its one stored reading carried forward; no repeat within 4h
    expect(got).toMatch(/source_down\/markets-b 102m→104m/);
    expect(got).toMatch(/apy-jump\/m1 90m→/);
    expect(report.runs).toBe(360);
    expect(report.grouping).toEqual(['poll_runs']);
    expect(store.db.prepare('SELECT count(*) AS n FROM alerts').get()).toEqual(alertsBefore);
    expect(store.db.prepare('SELECT count(*) AS n FROM alert_events').get()).toEqual(eventsBefore);
    store.close();
  });

  it('--set runs the same history again with the changed parameter, side by side', () => {
    const store = tempStore(dirs);
    liveHistory(store);
    const report = runBacktest({
      store,
      rules: rules(),
      alerting: defaults.alerting,
      from: T0,
      to: END,
      rule: 'util-warn',
      set: { 'util-warn.threshold': '0.975', 'util-warn.clear_below': '0.97', 'util-warn.for': '10m' },
    });
    const cur = report.current.summary.find((s) => s.rule === 'util-warn')!;
    const changed = report.changed!.summary.find((s) => s.rule === 'util-warn')!;
    expect(report.rules).toEqual(['util-warn']);
    expect(cur.fired).toBeGreaterThan(changed.fired);
    // m1 stays above 0.97 for less than 10 minutes per wave and m3 sits at 0.97: only the steady m2 fires
    expect(report.changed!.rows.map((r) => r.entity)).toEqual(['m2']);
    expect(report.changed!.set).toEqual({ 'util-warn.threshold': '0.975', 'util-warn.clear_below': '0.97', 'util-warn.for': '10m' });
    const text = formatBacktest(report);
    expect(text).toContain('== with util-warn.threshold=0.975, util-warn.clear_below=0.97, util-warn.for=10m ==');
    expect(text).toMatch(/^util-warn +5 +0 +\S+ +\d+ +\| +1 +0 /m);
    store.close();
  });

  it.each([
    [{ 'nope.threshold': '1' }, /no rule named 'nope'/],
    [{ 'util-warn.threshold': 'high' }, /'high' is not a number/],
    [{ 'util-warn.for': '600' }, /'600' is not a duration/],
    [{ 'util-warn.clear_below': '0.95' }, /clear_below: must be below threshold/],
    [{ 'util-warn.treshold': '0.9' }, /'treshold' is not a parameter of utilization_above rules/],
    // Names every object inherits are no parameter either.
    [{ 'util-warn.toString': '1' }, /'toString' is not a parameter of utilization_above rules/],
    [{ 'util-warn.__proto__': '1' }, /'__proto__' is not a parameter of utilization_above rules/],
  ])('refuses --set %o', (set, message) => {
    const store = tempStore(dirs);
    expect(() => runBacktest({ store, rules: rules(), alerting: defaults.alerting, from: T0, to: END, set })).toThrow(message);
    store.close();
  });

  it('counts repeats every repeat_interval while firing, and reports progress up to the total', () => {
    const events = [
      { type: 'firing', at: 0, alert: { rule: 'r', entity: 'e', severity: 'warning', peak: 1, state: 'firing' } },
      { type: 'resolved', at: 9 * HOUR, alert: { rule: 'r', entity: 'e', severity: 'warning', peak: 2, state: 'resolved' } },
      { type: 'firing', at: 10 * HOUR, alert: { rule: 'r', entity: 'e', severity: 'warning', peak: 1, state: 'firing' } },
    ] as unknown as AlertEvent[];
    const rows = buildRows(events, 14 * HOUR + 1, 4 * HOUR);
    expect(rows.map((r) => [r.notifications, r.duration_ms, r.peak])).toEqual([
      [4, 9 * HOUR, 2], // firing, repeats at 4h and 8h, resolved
      [2, 4 * HOUR + 1, 1], // firing, a repeat at 14h, still open
    ]);

    const store = tempStore(dirs);
    liveHistory(store);
    const seen: number[] = [];
    runBacktest({ store, rules: rules(), alerting: defaults.alerting, from: T0, to: END, onProgress: (d, t) => seen.push(d / t) });
    expect(seen.at(-1)).toBe(1);
    expect(seen.every((x, i) => i === 0 || x >= seen[i - 1]!)).toBe(true);
    store.close();
  });

  it('without recorded poll runs groups history by timestamp and never reads it as absence', () => {
    const store = tempStore(dirs);
    for (let i = 0; i < 20; i++) {
      const now = T0 + i * MIN;
      // Values move each poll: a snapshot that only moved on in time is not stored again.
      const utilization = 0.99 - i / 10_000;
      store.readings.savePoll('markets', [market('m1', now, { utilization }), ...(i < 5 ? [market('m9', now, { utilization })] : [])], now);
    }
    const report = runBacktest({ store, rules: rules(), alerting: defaults.alerting, from: T0, to: T0 + 19 * MIN, rule: 'util-crit' });
    expect(report.grouping).toEqual(['timestamps']);
    expect(report.runs).toBe(20);
    expect(shape(report.current.rows)).toEqual(['util-crit/m1 0m→open n=1', 'util-crit/m9 0m→open n=1']);
    store.close();
  });

  it('lookout backtest prints the table and summary, --json parses, and a bad rule is exit 1', async () => {
    const dir = dirs.make();
    const db = join(dir, 'lookout.db');
    const store = tempStore({ make: () => dir });
    liveHistory(store);
    store.close();
    const config = join(dir, 'config.yaml');
    writeFileSync(
      config,
      `source: { base_url: "http://127.0.0.1:1" }
storage: { path: ${JSON.stringify(db)} }
polls:
  - { name: markets-b, kind: metrics, cron: "* * * * *" }
rules:
  inline:
    - { name: util-crit, kind: utilization_above, severity: critical, threshold: 0.95 }
`,
    );
    const clock = new ManualClock(END);
    const run = async (extra: Partial<Parameters<typeof runBacktestCommand>[0]>) => {
      const out: string[] = [];
      const err: string[] = [];
      const progress: string[] = [];
      const code = await runBacktestCommand({ configFile: config, from: '3h', to: 'now', out: (l) => out.push(l), err: (l) => err.push(l), isTTY: true, write: (s) => progress.push(s), clock, ...extra });
      return { code, out, err, progress };
    };

    const text = await run({});
    expect(text.err).toEqual([]);
    expect(text.code).toBe(0);
    expect(text.out[0]).toMatch(/^backtest 2025-01-14 23:59 → 2025-01-15 02:59 UTC: 360 poll runs, \d+ readings \(runs rebuilt from poll_runs\)$/);
    expect(text.out).toContain('== episodes ==');
    expect(text.out).toContainEqual(expect.stringMatching(/^util-crit +m3 +2025-01-15 00:00 +2025-01-15 01:02 +1h2m +2$/));
    expect(text.out).toContainEqual(expect.stringMatching(/^source_down +markets-b +2025-01-15 01:42 +2025-01-15 01:44 +2m +2$/));
    expect(text.out.some((l) => /^util-crit +\d+ +0 +\S+ +\d+$/.test(l))).toBe(true);
    expect(text.progress.at(-2)).toContain('100%');

    const json = await run({ json: true, isTTY: false });
    const parsed = JSON.parse(json.out.join('\n')) as { current: { rows: unknown[] } };
    expect(parsed.current.rows.length).toBeGreaterThan(0);
    expect(json.progress).toEqual([]);

    const bad = await run({ rule: 'nope' });
    expect(bad.code).toBe(1);
    expect(bad.err).toEqual(["lookout backtest: no enabled rule named 'nope' (rules: util-crit)"]);

    const badTime = await run({ from: 'last tuesday' });
    expect(badTime.code).toBe(1);
  });

  it('a field the service sent unreadably is replayed as unreadable, not as a null a rule reads as fine: backtest == live', () => {
    const store = tempStore(dirs);
    const stale = [rule({ name: 'bench-stale', kind: 'stale_benchmark' })];
    const engine = engineFor(store, stale);
    const live: AlertEvent[] = [];
    for (let i = 0; i < 30; i++) {
      const now = T0 + i * MIN;
      // A stale network whose isStale the service garbles for ten polls in the middle: live, the alert stays firing.
      const blind = i >= 10 && i < 20;
      const reading: Reading = {
        kind: 'benchmark',
        entity: 'base/usd',
        at: now,
        labels: { network: 'base', code: 'usd' },
        fields: { network: 'base', code: 'usd', day: now - 2 * HOUR, isComplete: true, isStale: blind ? null : true, days: 7 },
        ...(blind ? { unreadable: { isStale: 'not_a_boolean' } } : {}),
      };
      live.push(...drive(store, engine, outcome('benchmarks', 'benchmarks', [reading], now)).events);
    }
    const end = T0 + 29 * MIN;
    expect(episodes(live).map(span)).toEqual(['bench-stale/base/usd 0m→open']);
    const report = runBacktest({ store, rules: stale, alerting: defaults.alerting, sourceDown: defaults.sourceDown, from: T0, to: end });
    expect(shape(report.current.rows)).toEqual(['bench-stale/base/usd 0m→open n=1']);
    store.close();
  });
});
