/**
 * `lookout simulate --history 7d --db PATH`: a week of readings in a lookout database at once, so `lookout backtest`
 * has something to replay without waiting a week. A private simulator on a ManualClock is polled at simulated past
 * times by the daemon's own poll path — the poll kinds over the real client and HTTP, `runPoll` storing each run
 * and its readings in one transaction — so the database is what a daemon polling every `step` would have written.
 * Nothing is evaluated: a backtest judges the rules, and a daemon started on the file begins from the present.
 */
import { ManualClock } from '../clock.js';
import type { Config } from '../config/load.js';
import { silentLogger } from '../log.js';
import type { MarketInfo } from '../model.js';
import { runPoll, type PollStages } from '../poll-runner.js';
import { startSimulator, type SimulatorOptions } from '../simulator/index.js';
import { createDataServiceClient } from '../source/client.js';
import { FieldRejectionLog } from '../source/field-log.js';
import { runPoll as runPollKind } from '../source/polls/registry.js';
import type { PollConfig } from '../source/polls/schemas.js';
import { openStore } from '../store/index.js';

/** Options of {@link fillHistory}. */
export interface FillHistoryOptions {
  /** The polls to run, the source settings (its URLs are replaced by the private simulator's) and storage.path. */
  config: Config;
  /** The world to poll: the same options as the live simulator's, so history and present are one world. */
  simulator: Omit<SimulatorOptions, 'clock' | 'port' | 'catalogPort' | 'host' | 'log'>;
  /** Simulated time span, ms. */
  from: number;
  to: number;
  /** Simulated time between two runs of a poll, ms: each a multiple of the smallest. */
  stepOf: (poll: PollConfig) => number;
  /** Called after each step with the simulated time reached. */
  onProgress?: (at: number) => void;
}

/** What {@link fillHistory} stored. */
export interface FillHistoryResult {
  /** Poll runs recorded, and how many of them failed. */
  runs: number;
  failed: number;
  /** Readings the polls returned (history keeps a row only when one changed). */
  readings: number;
}

/** Polls a private simulator at every `step` from `from` to `to` and stores the runs in `config.storage.path`. */
export async function fillHistory(o: FillHistoryOptions): Promise<FillHistoryResult> {
  const polls = o.config.polls.filter((p) => p.enabled).map((poll) => ({ poll, step: o.stepOf(poll) }));
  const step = Math.min(...polls.map((p) => p.step));
  if (!polls.every((p) => p.step > 0 && p.step % step === 0) || !(o.to >= o.from)) throw new Error('fillHistory: needs steps > 0, each a multiple of the smallest, and to ≥ from');
  const clock = new ManualClock(o.from);
  // A metrics poll keeps each market's newest row: the rows before it, a day of them a minute apart live, are only
  // time spent here, so the private simulator spaces them 6 h apart (the newest row is at `now` either way).
  const sim = await startSimulator({ ...o.simulator, clock, catalogPort: null, sampleIntervalMs: 6 * 3_600_000 });
  // No retries: the simulator is local and answers at once; a failed run is recorded as failed, as live.
  const client = createDataServiceClient({ ...o.config.source, base_url: sim.url, catalog_url: sim.url, retries: 0 }, { log: silentLogger });
  let store;
  try {
    store = openStore(o.config.storage.path, { clock, log: silentLogger });
  } catch (err) {
    await client.close();
    await sim.close();
    throw err;
  }
  const marketInfo = new Map<string, MarketInfo>();
  const stages: PollStages = {
    clock,
    log: silentLogger,
    store,
    fetch: (poll, signal, now) =>
      runPollKind(poll, { client, signal, now, log: silentLogger, oraclePrice: o.config.source.oracle_price ?? 'auto', marketInfo }),
    // No rules here: the steps end at once.
    evaluate: function* () {
      return { events: [], durationMs: 0, dataErrors: [] };
    },
    enqueue: () => {},
    fieldLog: new FieldRejectionLog(),
    after: () => {},
  };
  const result: FillHistoryResult = { runs: 0, failed: 0, readings: 0 };
  try {
    for (let t = o.from; t <= o.to; t += step) {
      clock.set(t);
      for (const { poll, step: every } of polls) {
        if ((t - o.from) % every !== 0) continue;
        const outcome = await runPoll(poll, new AbortController().signal, stages);
        result.runs++;
        if (!outcome.ok) result.failed++;
        result.readings += outcome.readings.length;
      }
      o.onProgress?.(t);
    }
    return result;
  } finally {
    store.close();
    await client.close();
    await sim.close();
  }
}
