/**
 * The soak: the real daemon (dist/cli.js) polls a changing simulator every second, with faults sprinkled in (5xx
 * bursts, 429s, slow answers, a Slack outage, a scenario swap that restarts the service, SIGHUP reloads), for a number
 * of poll cycles; every 100 cycles it samples RSS, heap, open fds, DB size and event-loop lag. At the end: SIGTERM,
 * the alert history against `lookout backtest` over the same DB, and a scan of every byte produced for the secrets.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { buildRows, type BacktestRow } from '../../src/backtest/report.js';
import type { AlertEvent } from '../../src/model.js';
import { dbBytes, integrity, secretHits } from '../fixtures/daemon/crash.js';
import { CLI, DaemonProcess, ROOT, sample } from '../fixtures/daemon/harness.js';
import { SECRETS, startWorld, type SoakWorld } from './world.js';

/** One sample, taken every `sampleEvery` cycles. */
export interface Sample {
  cycle: number;
  seconds: number;
  rss_mb: number;
  heap_mb: number;
  fds: number;
  db_mb: number;
  lag_p99_ms: number;
}

/** How a figure moved after warm-up: mean of the second quartile of samples against the last, and a least-squares slope. */
export interface Trend {
  figure: keyof Omit<Sample, 'cycle' | 'seconds'>;
  q2: number;
  q4: number;
  /** Change per 1,000 cycles, from a least-squares line through the samples after the first quartile. */
  slope_per_1000: number;
  level: boolean;
}

/** What a soak run saw. */
export interface SoakResult {
  cycles: number;
  okPolls: number;
  failedPolls: number;
  seconds: number;
  samples: Sample[];
  trends: Trend[];
  faults: string[];
  exit: { code: number | null; signal: string | null };
  integrity: string;
  /** Episodes (rule, entity, fired, resolved) compared in [from, to]. */
  compared: { from: number; to: number; live: number; backtest: number; mismatches: string[] };
  /** Messages received by each channel. */
  delivered: { slack: number; webhook: number; email: number };
  /** Bytes scanned, and where a secret was found (empty: none). */
  scanned: { bytes: number; hits: string[] };
}

/** How long a soak may run, what it does, where it reports progress. */
export interface SoakOptions {
  cycles: number;
  dir: string;
  sampleEvery?: number;
  retention?: string;
  progress?: (line: string) => void;
}

/** Counts the daemon's `poll` lines as they come, without re-reading the whole log. */
class PollCounter {
  ok = 0;
  failed = 0;
  private offset = 0;
  constructor(private daemon: DaemonProcess) {}
  update(): number {
    const text = this.daemon.stderr;
    const end = text.lastIndexOf('\n') + 1;
    for (const line of text.slice(this.offset, end).split('\n')) {
      if (!line.includes('"msg":"poll"')) continue;
      if (line.includes('"outcome":"ok"')) this.ok++;
      else if (/"outcome":"(failed|store_failed)"/.test(line)) this.failed++;
    }
    this.offset = end;
    return this.ok + this.failed;
  }
}

const mb = (n: number) => Math.round((n / 1_048_576) * 10) / 10;
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The faults of block `b` (cycles 100·b …): a 5-block rotation, plus a scenario swap every 4th block. */
async function inject(world: SoakWorld, b: number, faults: string[]): Promise<void> {
  const f = world.sim.sim.faults;
  switch (b % 5) {
    case 1:
      f.add({ path: '/yields/graphql', method: 'POST', status: 500, times: 5 });
      faults.push(`block ${b}: 5 × 500 on the GraphQL poll (source_down after 3)`);
      break;
    case 2:
      f.add({ status: 429, retryAfter: 1, times: 4 });
      faults.push(`block ${b}: 4 × 429 Retry-After 1 on any path`);
      break;
    case 3:
      f.add({ delayMs: 1_500, times: 6 });
      faults.push(`block ${b}: 6 answers slowed by 1.5 s (timeout 2 s)`);
      break;
    case 4:
      world.slack.respond(500);
      faults.push(`block ${b}: Slack outage (500) for 50 cycles`);
      break;
  }
  if (b % 4 === 3) {
    const scenarios = ['calm', 'unverified', 'benchmark_stale', 'utilization_spike'];
    const scenario = scenarios[Math.floor(b / 4) % scenarios.length]!;
    await world.sim.swap({ scenario, startedAt: Date.now() - 60_000 });
    faults.push(`block ${b}: service restarted with scenario ${scenario}`);
  }
}

/** Least-squares slope of y over x. */
function slope(xs: number[], ys: number[]): number {
  const n = xs.length;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (xs[i]! - mx) * (ys[i]! - my);
    den += (xs[i]! - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

/** Per figure: the second quartile's mean against the last's (the first quartile is warm-up). Level: within 20 % plus a small absolute allowance. */
export function trends(samples: Sample[]): Trend[] {
  const allow = { rss_mb: 8, heap_mb: 4, fds: 4, db_mb: 1, lag_p99_ms: 20 } as const;
  const q = Math.max(1, Math.floor(samples.length / 4));
  const mean = (xs: Sample[], k: keyof typeof allow) => xs.reduce((a, s) => a + s[k], 0) / Math.max(1, xs.length);
  const after = samples.slice(q);
  return (Object.keys(allow) as Array<keyof typeof allow>).map((figure) => {
    const q2 = mean(samples.slice(q, 2 * q), figure);
    const q4 = mean(samples.slice(-q), figure);
    const s = after.length >= 2 ? slope(after.map((x) => x.cycle), after.map((x) => x[figure])) * 1000 : 0;
    return { figure, q2: Math.round(q2 * 10) / 10, q4: Math.round(q4 * 10) / 10, slope_per_1000: Math.round(s * 100) / 100, level: q4 <= q2 * 1.2 + allow[figure] };
  });
}

const key = (r: BacktestRow) => `${r.rule} ${r.entity}`;

/** Episodes that fired in [from, to] live and in the backtest, matched by rule, entity and times (within `tol` ms). */
export function compareEpisodes(live: BacktestRow[], replay: BacktestRow[], from: number, to: number, tol = 1_500): string[] {
  const inWindow = (r: BacktestRow) => r.fired_at >= from && r.fired_at <= to;
  const a = live.filter(inWindow);
  const b = replay.filter(inWindow);
  const out: string[] = [];
  const used = new Set<BacktestRow>();
  const near = (x: number | null, y: number | null) => (x === null || y === null ? x === y : Math.abs(x - y) <= tol);
  for (const r of a) {
    const m = b.find((x) => !used.has(x) && key(x) === key(r) && near(x.fired_at, r.fired_at) && near(x.resolved_at, r.resolved_at));
    if (m) used.add(m);
    else out.push(`live only: ${key(r)} fired ${new Date(r.fired_at).toISOString()} resolved ${r.resolved_at ? new Date(r.resolved_at).toISOString() : '-'}`);
  }
  for (const r of b) if (!used.has(r)) out.push(`backtest only: ${key(r)} fired ${new Date(r.fired_at).toISOString()} resolved ${r.resolved_at ? new Date(r.resolved_at).toISOString() : '-'}`);
  return out;
}

/** Runs the soak for `opts.cycles` poll cycles (runs of any poll) and returns what it measured. */
export async function runSoak(opts: SoakOptions): Promise<SoakResult> {
  const every = opts.sampleEvery ?? 100;
  const say = opts.progress ?? (() => undefined);
  const world = await startWorld(opts.dir, opts.retention);
  const captured: string[] = [];
  const faults: string[] = [];
  const samples: Sample[] = [];
  const t0 = Date.now();
  try {
    const { daemon, url } = await DaemonProcess.start(world.file, {}, 30_000);
    const auth = { authorization: `Bearer ${SECRETS['server token']}` };
    const get = async (path: string) => {
      const res = await fetch(`${url}${path}`, { headers: auth, signal: AbortSignal.timeout(10_000) });
      const text = await res.text();
      captured.push(text);
      return text;
    };
    const counter = new PollCounter(daemon);
    let nextSample = every;
    let outageEnds = Infinity;
    // Until the sample at or past the last cycle is taken.
    for (let cycles = counter.update(); nextSample - every < opts.cycles; cycles = counter.update()) {
      if (!daemon.running) throw new Error(`daemon exited during the soak\n${daemon.diag()}`);
      if (cycles >= outageEnds) {
        world.slack.respond(200);
        outageEnds = Infinity;
      }
      if (cycles >= nextSample) {
        const b = Math.floor(cycles / every);
        const metrics = await get('/metrics');
        await get('/api/alerts');
        await get('/api/polls');
        await get('/api/silences');
        await get('/');
        const s: Sample = {
          cycle: cycles,
          seconds: Math.round((Date.now() - t0) / 1000),
          rss_mb: mb(sample(metrics, 'process_resident_memory_bytes') ?? NaN),
          heap_mb: mb(sample(metrics, 'nodejs_heap_size_used_bytes') ?? NaN),
          fds: readdirSync(`/proc/${daemon.proc.pid}/fd`).length,
          db_mb: mb(Object.values(dbBytesSize(world.db)).reduce((a, x) => a + x, 0)),
          lag_p99_ms: Math.round((sample(metrics, 'nodejs_eventloop_lag_p99_seconds') ?? NaN) * 1000 * 10) / 10,
        };
        samples.push(s);
        say(`cycle ${s.cycle} (${s.seconds} s): rss ${s.rss_mb} MB, heap ${s.heap_mb} MB, fds ${s.fds}, db ${s.db_mb} MB, lag p99 ${s.lag_p99_ms} ms`);
        await inject(world, b, faults);
        if (b % 5 === 4) outageEnds = cycles + 50;
        if (b % 3 === 0) {
          daemon.signal('SIGHUP');
          faults.push(`block ${b}: SIGHUP reload`);
        }
        nextSample += every;
      }
      await wait(100);
    }
    world.slack.respond(200);
    const cycles = counter.update();
    daemon.signal('SIGTERM');
    const exit = await daemon.waitExit(20_000);
    const end = Date.now();

    // The alert history, live and replayed, in the range the DB still holds whole.
    const from = Math.max(t0, end - world.retentionMs + 10_000);
    const { stdout: btOut, stderr: btErr } = await promisify(execFile)(
      process.execPath,
      [CLI, 'backtest', '-c', world.file, '--from', new Date(from - 1_000).toISOString(), '--to', new Date(end).toISOString(), '--json'],
      { cwd: ROOT, timeout: 120_000, maxBuffer: 64 * 1024 * 1024 },
    );
    const replay = (JSON.parse(btOut) as { current: { rows: BacktestRow[] } }).current.rows;
    const live = liveRows(world.db, end);
    // An alert already firing at a pruned `from` replays as a new episode at its first run: compare what fired after a margin.
    const margin = from > t0 ? 30_000 : 0;
    const mismatches = compareEpisodes(live, replay, from + margin, end - 5_000);

    const outputs: Record<string, string | Buffer> = {
      stdout: daemon.stdout,
      stderr: daemon.stderr,
      'backtest stdout': btOut,
      'backtest stderr': btErr,
      'HTTP answers': captured.join('\n'),
      'Slack bodies': world.slack.posts.map((p) => p.raw).join('\n'),
      'webhook bodies': world.hook.bodies.join('\n'),
      ...Object.fromEntries(world.smtp.mails.map((m, i) => [`mail ${i}`, m])),
      ...dbBytes(world.db),
    };
    const bytes = Object.values(outputs).reduce((a, x) => a + Buffer.byteLength(x), 0);
    return {
      cycles,
      okPolls: counter.ok,
      failedPolls: counter.failed,
      seconds: Math.round((end - t0) / 1000),
      samples,
      trends: trends(samples),
      faults,
      exit: { code: exit.code, signal: exit.signal },
      integrity: integrity(world.db),
      compared: { from: from + margin, to: end - 5_000, live: live.length, backtest: replay.length, mismatches },
      delivered: { slack: world.slack.delivered().length, webhook: world.hook.bodies.length, email: world.smtp.mails.length },
      scanned: { bytes, hits: secretHits(outputs, SECRETS) },
    };
  } finally {
    await world.stop();
  }
}

function dbBytesSize(db: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const f of [db, `${db}-wal`]) if (existsSync(f)) out[f] = statSync(f).size;
  return out;
}

/** The daemon's own alert history, as backtest rows (episodes), from `alert_events`. */
function liveRows(db: string, to: number): BacktestRow[] {
  const d = new Database(db, { readonly: true });
  try {
    const events = (d.prepare(`SELECT type, at, alert FROM alert_events ORDER BY at, id`).all() as Array<{ type: AlertEvent['type']; at: number; alert: string }>).map((e) => ({
      type: e.type,
      at: e.at,
      alert: JSON.parse(e.alert) as AlertEvent['alert'],
    }));
    return buildRows(events, to, 4 * 3_600_000);
  } finally {
    d.close();
  }
}
