/**
 * `lookout simulate`: runs the simulator alone until the process is stopped. One port serves the whole interface
 * (a second one for the catalog only with `--catalog-port`); `--print-config` prints a config that polls it;
 * `--history 7d --db PATH` first writes a week of its readings into a lookout database, for `lookout backtest`.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { demoConfigYaml } from '../commands/demo-config.js';
import { fillHistory, type FillHistoryOptions } from '../commands/history.js';
import { parseDuration } from '../config/duration.js';
import { loadConfigText } from '../config/load.js';
import { startSimulator, type Simulator } from './index.js';

/** Options of `lookout simulate`. */
export interface SimulateCommandOptions {
  port?: number;
  /** A second listener for the catalog alone; by default the one port serves it. */
  catalogPort?: number;
  scenario?: string;
  seed?: number;
  markets?: number;
  positions?: number;
  apiKey?: string | null;
  host?: string;
  timeScale?: number;
  /** `--encoding`: a preset name or family=choice list (encoding.ts). */
  encoding?: string;
  /** `--print-config`: print a config for this simulator and start nothing. */
  printConfig?: boolean;
  /** `--history`: a duration (`7d`) of readings to write into `db` before serving. */
  history?: string;
  /** `--db`: the lookout database `--history` writes and `--print-config` names. */
  db?: string;
  /** Where the banner and the config go; default stdout. */
  write?: (line: string) => void;
  /** Where progress goes; default stderr. */
  note?: (line: string) => void;
  /** The wall clock, ms; default Date.now. */
  now?: () => number;
}

const MIN = 60_000;
/**
 * Simulated time between two history runs of a poll, by kind: markets every 10 minutes, positions and benchmarks
 * (bigger answers that matter at a coarser grain) every hour, so a week costs seconds and tens of megabytes.
 */
export const HISTORY_STEPS_MS: Readonly<Record<string, number>> = { metrics: 10 * MIN, positions: 60 * MIN, benchmarks: 60 * MIN };
const HISTORY_STEP_MS = 10 * MIN;
/** The database `--print-config` and `--history` use when `--db` is not given. */
export const DEFAULT_DB = 'lookout.db';
/** The scenario of a simulator with history when none is asked for: one where every rule kind fires, every day. */
export const HISTORY_SCENARIO = 'incidents';

/** The config `--print-config` prints: fast polls of this simulator, the starter rules' kinds with demo timings. */
export function simulatorConfigYaml(o: { host: string; port: number; catalogPort?: number; apiKey: string | null; db: string }): string {
  const host = o.host.includes(':') ? `[${o.host}]` : o.host;
  const url = `http://${host}:${o.port}`;
  return demoConfigYaml({
    baseUrl: url,
    catalogUrl: o.catalogPort !== undefined ? `http://${host}:${o.catalogPort}` : url,
    // The simulator accepts any key when it was started without one; a config needs some.
    apiKey: o.apiKey ?? 'any',
    dbPath: resolve(o.db),
    // As config.example.yaml has it: LOOKOUT_LISTEN moves it when 9464 is taken.
    listen: '${LOOKOUT_LISTEN:-127.0.0.1:9464}',
    retention: '30d',
  }).trim();
}

/**
 * Starts the simulator and prints one line with both URLs, the key and the scenario; undefined after `--print-config`.
 * Throws on a usage mistake (its message says which) before anything is started or written.
 */
export async function runSimulateCommand(opts: SimulateCommandOptions): Promise<Simulator | undefined> {
  const { write = (line: string) => process.stdout.write(line + '\n'), note = (line: string) => process.stderr.write(line + '\n'), now = Date.now } = opts;
  const apiKey = opts.apiKey === undefined ? 'sim-key' : opts.apiKey;
  const host = opts.host ?? '127.0.0.1';
  const db = opts.db ?? DEFAULT_DB;
  if (opts.printConfig) {
    if (!opts.port) throw new Error('simulate: --print-config needs a fixed --port (the config names it)');
    write(simulatorConfigYaml({ host, port: opts.port, ...(opts.catalogPort ? { catalogPort: opts.catalogPort } : {}), apiKey, db }));
    return undefined;
  }
  const historyMs = opts.history === undefined ? undefined : parseDuration(opts.history);
  if (opts.history !== undefined && !(historyMs && historyMs >= HISTORY_STEP_MS)) {
    throw new Error(`simulate: invalid --history '${opts.history}': a duration of at least 10m, e.g. 7d`);
  }
  if (historyMs && existsSync(db)) {
    throw new Error(`simulate: ${db} already exists; --history writes a new database: remove it or pick another --db`);
  }
  const start = now();
  const world = {
    scenario: opts.scenario ?? (historyMs ? HISTORY_SCENARIO : 'calm'),
    seed: opts.seed ?? 1,
    apiKey,
    ...(opts.markets !== undefined ? { markets: opts.markets } : {}),
    ...(opts.positions !== undefined ? { positions: opts.positions } : {}),
    ...(opts.timeScale !== undefined ? { timeScale: opts.timeScale } : {}),
    ...(opts.encoding !== undefined ? { encoding: opts.encoding } : {}),
    // With history the world began that long ago, so the history and the present are one timeline.
    ...(historyMs ? { startedAt: start - historyMs } : {}),
  };
  const sim = await startSimulator({ ...world, host, ...(opts.port !== undefined ? { port: opts.port } : {}), catalogPort: opts.catalogPort ?? null });
  if (historyMs) {
    try {
      await writeHistory(sim, { world, db, from: start - historyMs, to: start, history: opts.history as string, note });
    } catch (err) {
      await sim.close();
      throw err;
    }
  }
  const key = sim.apiKey === null ? '(any key accepted)' : sim.apiKey;
  write(`simulator: base_url=${sim.url} catalog_url=${sim.catalogUrl} api_key=${key} scenario=${sim.world.scenario.name} seed=${sim.world.seed} markets=${sim.world.markets.length} positions=${sim.world.positions.length} encoding=${opts.encoding ?? 'mixed'}`);
  return sim;
}

/** Writes the history into `db` with the config `--print-config` gives for this simulator, and says what it wrote. */
async function writeHistory(
  sim: Simulator,
  o: { world: FillHistoryOptions['simulator']; db: string; from: number; to: number; history: string; note: (line: string) => void },
): Promise<void> {
  const port = Number(new URL(sim.url).port);
  const text = simulatorConfigYaml({ host: new URL(sim.url).hostname.replace(/^\[|\]$/g, ''), port, apiKey: sim.apiKey, db: o.db });
  const config = loadConfigText('simulate --history', text, { env: {} });
  o.note(`simulator: writing ${o.history} of readings into ${config.storage.path} (polls ${Object.entries(HISTORY_STEPS_MS).map(([k, v]) => `${k} every ${v / MIN}m`).join(', ')} of simulated time)…`);
  const t0 = performance.now();
  const r = await fillHistory({ config, simulator: o.world, from: o.from, to: o.to, stepOf: (p) => HISTORY_STEPS_MS[p.kind] ?? HISTORY_STEP_MS });
  const secs = ((performance.now() - t0) / 1000).toFixed(1);
  o.note(
    `simulator: history written: ${r.runs} poll runs${r.failed ? ` (${r.failed} failed)` : ''}, ${r.readings} readings from ${new Date(o.from).toISOString()} to ${new Date(o.to).toISOString()} in ${secs} s — try: lookout backtest -c CONFIG --from ${o.history}`,
  );
}
