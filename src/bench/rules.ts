/**
 * Benchmark 4: rule evaluation. `AlertEngine.applyPoll` over one poll of 10,000 market readings, in the
 * poll's transaction as the poll runner calls it, with history an hour deep so `apy_jump` has its window; and over
 * one poll of 50,000 positions. Each timed poll is a new answer of the service a second after the one before (times,
 * blocks and the incident's values move), never the same poll again. The baseline is a bare loop over the same
 * readings doing one comparison only.
 */
import { join } from 'node:path';
import { AlertEngine, type EngineResult } from '../alerts/engine.js';
import { systemClock } from '../clock.js';
import { silentLogger } from '../log.js';
import type { PollOutcome, Reading } from '../model.js';
import { openStore, type Store } from '../store/index.js';
import { loadBenchConfig, type RuleSet } from './config.js';
import { POLL_INTERVAL_MS, marketsPoll, positionsPoll, type Bench, type BenchContext } from './context.js';
import { shifted } from './store.js';
import { summarize, timePair } from './stats.js';

interface Fixture {
  store: Store;
  current: Reading[];
  /** Time of the current poll, ms. */
  at: number;
  /** One positions poll, stored at `at`. */
  positions: Reading[];
}

const fixtures = new WeakMap<BenchContext, Promise<Fixture>>();

/** A store holding the markets 65 and 35 minutes before the current poll, the current poll itself, and a positions poll. */
function fixture(ctx: BenchContext): Promise<Fixture> {
  let f = fixtures.get(ctx);
  if (!f) {
    f = (async () => {
      const current = await ctx.readings(marketsPoll);
      const at = Math.max(...current.map((r) => r.at));
      const store = openStore(join(ctx.dir, 'rules.db'));
      for (const ago of [65 * 60_000, 35 * 60_000]) store.readings.savePoll('markets', shifted(current, -ago), at - ago);
      store.readings.savePoll('markets', current, at);
      const positions = await ctx.readings(positionsPoll);
      store.readings.savePoll('positions', positions, at);
      return { store, current, at, positions };
    })();
    fixtures.set(ctx, f);
  }
  return f;
}

/** The baseline: what a rule does at the very least — read a field and compare it. */
function bareUtilization(readings: readonly Reading[]): number {
  let above = 0;
  for (const r of readings) if (Number(r.fields.utilization) > 0.92) above++;
  return above;
}

/** The positions' baseline: the unverified check only. */
function bareUnverified(readings: readonly Reading[]): number {
  let unverified = 0;
  for (const r of readings) if (r.fields.verified === false && Number(r.fields.value_usd) >= 10_000) unverified++;
  return unverified;
}

/**
 * What an incident does to one reading in poll `k` (`i`: the reading's index in the poll): its new fields, and its new
 * labels where a field it changes is also a label; undefined: not one of its entities.
 */
export type Incident = (reading: Readonly<Reading>, k: number, i: number) => { fields: Record<string, unknown>; labels?: Record<string, string> } | undefined;

/**
 * One market in 20 with utilization about 97% and borrow APY about 30%: an incident across 500 markets. The values
 * move a little from poll to poll (utilization 97.0–97.4%, borrow APY 30.0–30.4%), as they do in a real incident.
 */
export const marketsIncident: Incident = (r, k, i) =>
  i % 20 === 0 ? { fields: { ...r.fields, utilization: 0.97 + 0.001 * ((k + i) % 5), borrow_apy: 0.3 + 0.001 * ((k + 3 * i) % 5) } } : undefined;

/**
 * One position in 20 unverified and worth about $1M (a little more each poll): an incident across 2,500 positions. Its
 * `verified` label says so too, as the client's reading of such a position does (src/source/parse/lists.ts).
 */
export const positionsIncident: Incident = (r, k, i) =>
  i % 20 === 0 ? { fields: { ...r.fields, verified: false, value_usd: 1_000_000 + 250 * k }, labels: { ...r.labels, verified: 'false' } } : undefined;

/**
 * The service's answer `k` polls after the captured one, a second apart: every reading's time, timestamp and block
 * moved on (so nothing an alert holds stays the same from one poll to the next, as live), the incident's values applied.
 */
export function pollAt(base: readonly Reading[], k: number, incident: Incident | undefined): Reading[] {
  const dt = k * 1_000;
  return base.map((r, i) => {
    const changed = incident?.(r, k, i);
    const fields = changed?.fields ?? { ...r.fields };
    if (typeof fields.timestamp === 'number') fields.timestamp += dt;
    if (typeof fields.block === 'number') fields.block += k;
    return changed?.labels ? { ...r, at: r.at + dt, fields, labels: changed.labels } : { ...r, at: r.at + dt, fields };
  });
}

function engineBench(set: Exclude<RuleSet, object>, scenario: 'calm' | 'incident' = 'calm', poll: 'markets' | 'positions' = 'markets') {
  return async (ctx: BenchContext): Promise<void> => {
    const f = await fixture(ctx);
    const { store, at } = f;
    const base = poll === 'markets' ? f.current : f.positions;
    const incident = scenario === 'calm' ? undefined : poll === 'markets' ? marketsIncident : positionsIncident;
    const cfg = loadBenchConfig({ baseUrl: 'http://127.0.0.1:9', catalogUrl: 'http://127.0.0.1:9', apiKey: 'k', dbPath: store.path, rules: set });
    const rules = cfg.rules.map((r) => r.rule);
    const engine = new AlertEngine({ store, rules, alerting: cfg.alerting, sourceDown: cfg.source_down, watchdog: cfg.watchdog, clock: systemClock, log: silentLogger });
    // Successive polls a second apart, each with the readings the service would answer then (built untimed): alerts
    // that are pending stay pending (`for: 10m`), as in most polls, with their values and data times moving.
    let k = 0;
    let outcome: PollOutcome | undefined;
    let last: EngineResult | undefined;
    let first: { events: number; ms: number } | undefined;
    const t = await timePair(
      {
        before: () => {
          k++;
          const readings = pollAt(base, k, incident);
          outcome = { poll, kind: poll === 'markets' ? 'metrics' : 'positions', ok: true, readings, rejected: [], started_at: at + k * 1_000, finished_at: at + k * 1_000 };
        },
        run: () => {
          const t0 = performance.now();
          last = store.transaction(() => engine.applyPoll(outcome!, at + k * 1_000));
          first ??= { events: last.events.length, ms: performance.now() - t0 };
        },
      },
      { run: () => (poll === 'markets' ? bareUtilization(outcome!.readings) : bareUnverified(outcome!.readings)) },
      ctx.reps,
    );
    const s = summarize(t.subject);
    const readsHere = (r: (typeof rules)[number]) => (poll === 'markets' ? !['unverified_position', 'stale_benchmark'].includes(r.kind) : r.kind === 'unverified_position');
    const marketRules = rules.filter(readsHere).length;
    const name = `rules.${poll === 'markets' ? set : 'positions'}${scenario === 'incident' ? '.incident' : ''}`;
    const n = poll === 'markets' ? ctx.markets : ctx.positions;
    ctx.row({ name, n: `${marketRules} rules × ${n.toLocaleString('en-US')}`, subject: s, baseline: summarize(t.baseline), baselineName: poll === 'markets' ? 'bare utilization loop' : 'bare unverified loop' });
    const alerts = engine.alerts().filter((a) => a.state === 'pending' || a.state === 'firing');
    const active = alerts.length;
    // The incident's readings as the client would give them: an unverified position's label says so as its field does.
    const unverified = alerts.filter((a) => a.kind === 'unverified_position');
    const mislabelled = unverified.find((a) => a.labels.verified !== 'false');
    if (mislabelled) throw new Error(`${name}: an unverified position's alert is labelled verified=${mislabelled.labels.verified}`);
    ctx.note(
      `${name}: ${rules.length} rules configured, ${marketRules} read ${poll}; ${last?.evaluated.toLocaleString('en-US')} verdicts per poll, ` +
        `${active} alerts pending or firing${first && first.events > 0 ? ` (the first poll of it: ${first.events} events in ${first.ms.toFixed(0)} ms)` : ''}; median ${s.median.toFixed(0)} ms = ${((100 * s.median) / POLL_INTERVAL_MS).toFixed(2)}% of the 30 s poll interval (p90 ${s.p90.toFixed(0)} ms).`,
    );
  };
}

/** The rule-evaluation benchmarks. */
export const ruleBenches: Bench[] = [
  { name: 'rules.seven', about: 'applyPoll, 7 rules that read every market (+ position/benchmark rules) over 10,000 readings, vs a bare utilization loop', run: engineBench('seven') },
  { name: 'rules.starter', about: 'applyPoll with the shipped rules/*.yaml (13 rules, selects on symbols) over 10,000 readings', run: engineBench('starter') },
  // Last: the engines share one store, and an engine retires the alerts of rules it does not know.
  { name: 'rules.seven.incident', about: 'as rules.seven with 500 markets at 97% utilization and 30% borrow APY (alerts pending and firing, state written every poll)', run: engineBench('seven', 'incident') },
  { name: 'rules.positions', about: 'applyPoll of the same rules over one positions poll of 50,000 readings, vs a bare unverified loop', run: engineBench('seven', 'calm', 'positions') },
  { name: 'rules.positions.incident', about: 'as rules.positions with 2,500 positions unverified and worth $1M (alerts pending, state written every poll)', run: engineBench('seven', 'incident', 'positions') },
];
