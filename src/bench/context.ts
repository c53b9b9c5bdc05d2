/** What every benchmark gets: repetitions, a lazily started simulator, a scratch directory, and where rows go. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../log.js';
import type { Reading } from '../model.js';
import { createDataServiceClient, type DataServiceClient } from '../source/client.js';
import { runPoll } from '../source/polls/registry.js';
import type { PollConfigOf } from '../source/polls/schemas.js';
import { bareAgent, startChildSimulator, sourceConfigFor, type ChildSimulator } from './sim.js';
import type { Reps, Row } from './stats.js';

/** World size of SPEC §8. */
export const MARKETS = 10_000;
/** World size of SPEC §8. */
export const POSITIONS = 50_000;
/**
 * The quick run's world (CI runs it so the benchmarks never rot: it shows their paths run, its figures are
 * indicative): a fifth of SPEC §8, so that the whole quick run stays well under its two minutes on a slow machine.
 */
export const QUICK_MARKETS = 2_000;
export const QUICK_POSITIONS = 10_000;
/** The example config's market poll interval, ms. */
export const POLL_INTERVAL_MS = 30_000;

/** The metrics poll of the benchmarks: every market in one query. */
export const marketsPoll: PollConfigOf<'metrics'> = { name: 'markets', kind: 'metrics', cron: '*/30 * * * * *', enabled: true, markets: [], limit: MARKETS, lookback: 0 };
/** The positions poll: 500 rows a page, to the end. */
export const positionsPoll: PollConfigOf<'positions'> = { name: 'positions', kind: 'positions', cron: '*/5 * * * *', enabled: true, params: { snapshot_mode: 'all', limit: 500 } };
/** The benchmarks poll: every network, both codes. */
export const benchmarksPoll: PollConfigOf<'benchmarks'> = {
  name: 'benchmarks',
  kind: 'benchmarks',
  cron: '0 */15 * * * *',
  enabled: true,
  networks: 'all',
  codes: ['usd', 'eth'],
  lookback: 7 * 86_400_000,
  per_page: 1000,
};

/** The shared state of one bench run. */
export class BenchContext {
  /** Repetitions of a benchmark whose run takes milliseconds to about a second. */
  readonly reps: Reps;
  /** Repetitions of a benchmark whose run takes seconds (a poll of 10,000 markets through SQLite). */
  readonly heavyReps: Reps;
  readonly quick: boolean;
  /** The simulator's world: SPEC §8 ({@link MARKETS}, {@link POSITIONS}), or the quick run's. */
  readonly markets: number;
  readonly positions: number;
  /** A scratch directory, removed at the end. */
  readonly dir: string;
  private sim: Promise<ChildSimulator> | undefined;
  private client: DataServiceClient | undefined;
  private captured = new Map<string, Promise<Reading[]>>();
  private readonly emitRow: (row: Row) => void;
  private readonly emitNote: (text: string) => void;

  constructor(opts: { quick: boolean; emit: (row: Row) => void; note: (text: string) => void }) {
    this.quick = opts.quick;
    this.markets = opts.quick ? QUICK_MARKETS : MARKETS;
    this.positions = opts.quick ? QUICK_POSITIONS : POSITIONS;
    this.reps = opts.quick ? { warmup: 1, runs: 3 } : { warmup: 2, runs: 9 };
    this.heavyReps = opts.quick ? { warmup: 1, runs: 3 } : { warmup: 1, runs: 5 };
    this.dir = mkdtempSync(join(tmpdir(), 'lookout-bench-'));
    this.emitRow = opts.emit;
    this.emitNote = opts.note;
  }

  /** Prints a result row. */
  row(row: Row): void {
    this.emitRow(row);
  }

  /** Prints a line under the table (context a row needs). */
  note(text: string): void {
    this.emitNote(text);
  }

  /** Figures besides the rows (bytes per row, RSS, event-loop blocks), by key, for the targets' verdicts. */
  readonly figures = new Map<string, number>();

  /** Records a figure for the targets table. */
  figure(key: string, value: number): void {
    this.figures.set(key, value);
  }

  /** The simulator ({@link markets} markets, {@link positions} positions) in a child process, started on first use. */
  simulator(): Promise<ChildSimulator> {
    this.sim ??= startChildSimulator({ markets: this.markets, positions: this.positions });
    return this.sim;
  }

  /** A data-service client on the simulator, shared by the benches that only need readings. */
  async sharedClient(): Promise<DataServiceClient> {
    this.client ??= createDataServiceClient(sourceConfigFor(await this.simulator()), { log: silentLogger });
    return this.client;
  }

  /** The readings one real poll of `poll` produces (fetched once, then reused), with the poll label set as the poll runner does. */
  readings(poll: PollConfigOf<'metrics'> | PollConfigOf<'positions'> | PollConfigOf<'benchmarks'>): Promise<Reading[]> {
    let p = this.captured.get(poll.name);
    if (!p) {
      p = (async () => {
        const client = await this.sharedClient();
        const data = await runPoll(poll, { client, signal: AbortSignal.timeout(120_000), now: Date.now(), log: silentLogger });
        for (const r of data.readings) r.labels.poll = poll.name;
        return data.readings;
      })();
      this.captured.set(poll.name, p);
    }
    return p;
  }

  /** Stops the simulator and removes the scratch directory. */
  async close(): Promise<void> {
    await this.client?.close();
    await bareAgent.close();
    if (this.sim) await (await this.sim).stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** One benchmark: a name for `--only` and what it measures. */
export interface Bench {
  name: string;
  /** One line for `--list`. */
  about: string;
  run(ctx: BenchContext): Promise<void>;
}
