/** Fixtures for the alert engine, backtest and rule-test tests: a store in a temp dir, rules through the real schema, a poll driver. */
import { join } from 'node:path';
import { ManualClock } from '../src/clock.js';
import { silentLogger } from '../src/log.js';
import { ruleSchema } from '../src/config/load.js';
import { AlertEngine, type EngineOptions, type EngineResult } from '../src/alerts/engine.js';
import { fingerprint } from '../src/alerts/lifecycle.js';
import type { AlertEvent, PollOutcome, Reading } from '../src/model.js';
import type { RuleBase } from '../src/rules/schema.js';
import { openStore, type Store } from '../src/store/index.js';
import type { PollStages } from '../src/poll-runner.js';
import { FieldRejectionLog } from '../src/source/field-log.js';
import { tempDirs as tempDirsIn } from './store-helpers.js';

/** 2025-01-15T00:00:00Z. */
export const T0 = Date.UTC(2025, 0, 15);
export const MIN = 60_000;
export const HOUR = 3_600_000;

/** Temp directories removed by `cleanup()`. */
export const tempDirs = () => tempDirsIn('lookout-alerts-');

/** A rule validated by the real rule schema (defaults applied, durations in ms). */
export function rule(raw: Record<string, unknown>): RuleBase {
  return ruleSchema.parse(raw) as RuleBase;
}

/** A market reading as the client produces it. */
export function market(entity: string, at: number, fields: Record<string, unknown> = {}): Reading {
  return {
    kind: 'market',
    entity,
    at,
    labels: { market_id: entity, chain: 'base', loan_asset_symbol: 'USDC', collateral_asset_symbol: 'WETH', protocol: 'morpho' },
    fields: {
      market_id: entity,
      utilization: 0.5,
      borrow_apy: 0.05,
      block: 100,
      timestamp: at,
      market: { chain: 'base', loan_asset_symbol: 'USDC', collateral_asset_symbol: 'WETH' },
      ...fields,
    },
  };
}

/** Default engine settings as the config gives them. */
export const defaults = {
  alerting: { flap_threshold: 6, flap_window: HOUR, max_reading_age: 6 * HOUR, tick: 5000 },
  sourceDown: { after: 3, severity: 'warning' as const },
  watchdog: { enabled: false, severity: 'info' as const },
};

/** An engine over `store` with the config defaults. */
export function engineFor(store: Store, rules: RuleBase[], over: Partial<EngineOptions> = {}): AlertEngine {
  return new AlertEngine({ store, rules, ...defaults, clock: new ManualClock(T0), log: silentLogger, ...over });
}

/** A successful or failed poll outcome. */
export function outcome(poll: string, kind: string, readings: Reading[], at: number, ok = true, extra: Partial<PollOutcome> = {}): PollOutcome {
  return {
    poll,
    kind,
    ok,
    readings: ok ? readings : [],
    rejected: [],
    started_at: at - 1000,
    finished_at: at,
    ...(ok ? {} : { error: 'GET /graphql: 503', errorReason: 'http_5xx' }),
    ...extra,
  };
}

/** Runs one poll as the daemon does: record the run, save readings, apply — in one transaction. */
export function drive(store: Store, engine: AlertEngine, o: PollOutcome, now = o.finished_at): EngineResult {
  return store.transaction(() => {
    store.polls.record(o);
    if (o.ok) store.readings.savePoll(o.poll, o.readings, now);
    return engine.applyPoll(o, now);
  });
}

/** Opens a store in a fresh temp dir. */
export function tempStore(dirs: { make(): string }, name = 'lookout.db'): Store {
  return openStore(join(dirs.make(), name));
}

/** Event summaries: `type rule/entity`. */
export function eventList(r: EngineResult | EngineResult[]): string[] {
  return (Array.isArray(r) ? r : [r]).flatMap((x) => x.events.map((e) => `${e.type} ${e.alert.rule}/${e.alert.entity}`));
}

/** One firing episode of a (rule, entity), as the live engine's transitions show it. */
export interface Episode {
  rule: string;
  entity: string;
  fired_at: number;
  resolved_at: number | null;
}

/**
 * The live engine's episodes, read off its transitions by the definition (a firing or flapping alert opens one, a
 * resolve or a settle that does not stay firing closes it) — written here rather than taken from the backtest's
 * own `buildRows`, so a comparison with the backtest cannot agree by construction.
 */
export function episodes(events: readonly AlertEvent[]): Episode[] {
  const open = new Map<string, Episode>();
  const out: Episode[] = [];
  for (const e of events) {
    const k = `${e.alert.rule}\u0000${e.alert.entity}`;
    const cur = open.get(k);
    if ((e.type === 'firing' || e.type === 'flapping') && !cur) {
      const ep = { rule: e.alert.rule, entity: e.alert.entity, fired_at: e.at, resolved_at: null };
      open.set(k, ep);
      out.push(ep);
    } else if (cur && (e.type === 'resolved' || (e.type === 'settled' && e.alert.state !== 'firing'))) {
      cur.resolved_at = e.at;
      open.delete(k);
    }
  }
  return out.sort((a, b) => a.fired_at - b.fired_at || a.rule.localeCompare(b.rule) || a.entity.localeCompare(b.entity));
}

/**
 * One critical utilization alert (`util`, above 0.9 for 10m) of market m1, whose reading's `chain` label a poll sets:
 * its store and engine, poll `i` (utilization 0.95 + i × `step`, at T0 + i minutes) with a chain, and the alert's labels
 * now (the labels tests: what the engine keeps of them as it judges the alert in place).
 */
export function chainLabelledAlert(dirs: { make(): string }, step = 0.01) {
  const store = tempStore(dirs);
  const engine = engineFor(store, [rule({ name: 'util', kind: 'utilization_above', severity: 'critical', threshold: 0.9, for: '10m' })]);
  const poll = (i: number, chain: string): PollOutcome => {
    const r = market('m1', T0 + i * MIN, { utilization: 0.95 + i * step });
    r.labels.chain = chain;
    return outcome('markets', 'metrics', [r], T0 + i * MIN);
  };
  const labelsNow = () => engine.repo.get(fingerprint('util', 'm1'))!.labels;
  return { store, engine, poll, labelsNow };
}

/**
 * A poll runner's stages over a real store and engine (src/poll-runner.ts): the engine judges, nothing is enqueued or
 * done after, unless `over` says otherwise; `fetch` is the test's.
 */
export function pollStages(store: Store, clock: ManualClock, engine: AlertEngine, over: Partial<PollStages> & Pick<PollStages, 'fetch'>): PollStages {
  return { clock, log: silentLogger, store, evaluate: (o, now) => engine.applyPollSteps(o, now), enqueue: () => {}, fieldLog: new FieldRejectionLog(), after: () => {}, ...over };
}
