/**
 * Child-process entry of the end-to-end benchmark: the real daemon (`startDaemon`) against the simulator,
 * polled on demand, in a process of its own so its RSS is the daemon's and nothing else's. Started through
 * {@link ./e2e-entry.ts}, which sets the daemon's heap settings before this module loads (the bare baselines run
 * under them too).
 * Input (argv[2], JSON): {@link E2eInput}; output: one IPC message, {@link E2eResult}.
 */
import { statSync } from 'node:fs';
import { PerformanceObserver } from 'node:perf_hooks';
import { Gauge, Registry } from 'prom-client';
import { request } from 'undici';
import { startDaemon } from '../daemon.js';
import { nextTurn } from '../yielding.js';
import { loadBenchConfig } from './config.js';
import { pollLog, type PollLine } from './poll-log.js';
import { bareAgent, barePositions, metricsBody } from './sim.js';
import { timePair, type Reps } from './stats.js';
import { bareDb } from './store.js';
import type { Store } from '../store/index.js';
import { SCRAPE_EVERY_MS, scrapeWhile } from './scraper.js';

/** What the parent sends. */
export interface E2eInput {
  baseUrl: string;
  catalogUrl: string;
  apiKey: string;
  dbPath: string;
  reps: Reps;
  markets: number;
  /** Also time GET /metrics from another process while markets polls run (target B5's p99), after everything else. */
  scrapeWhilePolling?: boolean;
  /** Markets polls go on (past three times the timed runs) until this many scrapes' time has passed: a p99 over 100+. */
  minScrapes?: number;
}

/** What the child reports. */
export interface E2eResult {
  /** The markets poll, and its bare parts turn about: fetch + JSON.parse, the rows in a prepared insert, a gauge set per row. */
  markets: { subject: number[]; baseline: number[]; fetch: number[]; insert: number[]; gauge: number[] };
  /** The positions poll, and its bare parts turn about: every page fetched and JSON.parse'd, then the same rows in a prepared insert. */
  positions: { subject: number[]; baseline: number[]; rows: number; bareRows: number; walk: number[]; insert: number[] };
  /** The poll runner's own log lines of the timed markets runs. */
  lines: PollLine[];
  /** Longest the daemon held the event loop during the markets runs, and during the positions runs (the baseline's runs left out), ms. */
  loopMaxMs: { markets: number; positions: number };
  /** Longest a poll's store transaction stayed open (BEGIN to COMMIT, in slices), ms. */
  txnMaxMs: { markets: number; positions: number };
  /** Longest block while a poll's transaction was open, and outside one (the bare baseline's own blocks taken out), ms. */
  insideMaxMs: { markets: number; positions: number };
  outsideMaxMs: { markets: number; positions: number };
  /**
   * Where the markets polls' longest block outside the transaction began: in which of the markets runs (0: the first
   * warm-up; -1: none), ms after its start; and when the checkpointer's worker started, ms after the first run's start
   * (null: before the markets runs, or never). Null, not NaN: the result crosses IPC as JSON.
   */
  outsideWhere: { run: number; afterMs: number | null; checkpointerMs: number | null };
  /** The collector's pauses within the longest block inside and outside the transaction, ms. */
  gcInLongestMs: { inside: { markets: number; positions: number }; outside: { markets: number; positions: number } };
  rssMb: number;
  heapUsedMb: number;
  history: { rows: number; bytes: number; polls: number; byKind: Record<string, { rows: number; fieldBytes: number }> };
  alerts: number;
  /** GET /metrics latencies while markets polls ran (when asked), ms, and how many polls that was. */
  scrapes?: { ms: number[]; polls: number };
}

/** Throws unless `count` runs of `poll` were logged and every one succeeded (a failed run is fast and would flatter the figure); returns the rows of the last. */
function assertAllOk(all: readonly PollLine[], poll: string, count: number): number {
  const runs = all.filter((l) => l.poll === poll);
  const bad = runs.find((l) => l.outcome !== 'ok');
  if (bad) throw new Error(`a timed ${poll} poll failed: ${JSON.stringify(bad)}`);
  if (runs.length !== count) throw new Error(`expected ${count} ${poll} runs in the log, saw ${runs.length}`);
  return runs.at(-1)?.rows ?? 0;
}

/**
 * Splits the event loop's blocks by where they happened: while a poll's yielding store transaction was open (its slices
 * and what ran between them), or outside one. Each poll's transaction is timed from BEGIN to COMMIT, and a 5 ms interval
 * timer notes each gap between its runs of over 15 ms (a block; a gap is the block plus up to one interval). The bare
 * baseline runs in this process too, turn about with the polls: a block that overlaps one of its runs is the baseline's,
 * not the daemon's, and is left out. (`monitorEventLoopDelay` cannot tell them apart, and after a `disable()` its first
 * sample counts the whole pause as a delay.)
 */
function blockProbe(store: Pick<Store, 'transactionYielding'>) {
  const open: Array<[number, number]> = [];
  const gaps: Array<[number, number]> = [];
  /** The bare baseline's runs (its JSON.parse and insert hold the loop too). */
  const bare: Array<[number, number]> = [];
  const inner = store.transactionYielding.bind(store);
  store.transactionYielding = async (steps, opts) => {
    const t0 = performance.now();
    try {
      return await inner(steps, opts);
    } finally {
      open.push([t0, performance.now()]);
    }
  };
  // The collector's pauses, to say how much of the longest blocks they were (the bare runs' garbage is collected
  // whenever the heap fills, on the daemon's time too).
  const pauses: Array<[number, number]> = [];
  const gcObserver = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) pauses.push([e.startTime, e.startTime + e.duration]);
  });
  gcObserver.observe({ entryTypes: ['gc'] });
  let last = performance.now();
  let ticked: Array<() => void> = [];
  const timer = setInterval(() => {
    const now = performance.now();
    if (now - last > 15) gaps.push([last, now]);
    last = now;
    for (const resolve of ticked) resolve();
    ticked = [];
  }, 5);
  return {
    /** Longest a transaction stayed open, and the longest block while one was open and outside; starts afresh. */
    take(): { txn: number; inside: number; outside: number; insideGc: number; outsideGc: number; outsideAt: number } {
      const txn = Math.max(0, ...open.map(([a, b]) => b - a));
      const overlaps = (runs: Array<[number, number]>) => ([a, b]: [number, number]) => runs.some(([x, y]) => a < y && b > x);
      const daemons = gaps.filter((g) => !overlaps(bare)(g));
      const longest = (list: Array<[number, number]>) => list.reduce<[number, number] | undefined>((m, g) => (!m || g[1] - g[0] > m[1] - m[0] ? g : m), undefined);
      // The collector's time inside a block.
      const gcIn = (g: [number, number] | undefined) =>
        g ? pauses.reduce((sum, [x, y]) => sum + Math.max(0, Math.min(y, g[1]) - Math.max(x, g[0])), 0) : 0;
      const inBlock = longest(daemons.filter(overlaps(open)));
      const outBlock = longest(daemons.filter((g) => !overlaps(open)(g)));
      const span = (g: [number, number] | undefined) => (g ? g[1] - g[0] : 0);
      open.length = 0;
      gaps.length = 0;
      bare.length = 0;
      const r = { txn, inside: span(inBlock), outside: span(outBlock), insideGc: gcIn(inBlock), outsideGc: gcIn(outBlock), outsideAt: outBlock?.[0] ?? NaN };
      pauses.length = 0;
      return r;
    },
    /**
     * Resolves at the timer's next turn: a block is noted only when the timer runs after it, so a phase's last block
     * (its last bare run's insert, say) would otherwise be counted in the next phase, outside any of its bare runs.
     */
    settle: () => new Promise<void>((resolve) => ticked.push(resolve)),
    /** Runs and times one run of the bare baseline. */
    async bare<T>(run: () => T | Promise<T>): Promise<T> {
      const t0 = performance.now();
      try {
        return await run();
      } finally {
        bare.push([t0, performance.now()]);
      }
    },
    stop: () => {
      clearInterval(timer);
      gcObserver.disconnect();
    },
  };
}

/** The run a block at `at` fell in, and how far into it; the checkpointer's start after the first run's. */
function where(at: number, starts: readonly number[], checkpointerAt: number): E2eResult['outsideWhere'] {
  let run = -1;
  for (let i = 0; i < starts.length; i++) if (starts[i]! <= at) run = i;
  const first = starts[0] ?? NaN;
  return { run, afterMs: run >= 0 ? at - starts[run]! : null, checkpointerMs: checkpointerAt >= first ? checkpointerAt - first : null };
}

const input = JSON.parse(process.argv[2] ?? '{}') as E2eInput;
const lines: PollLine[] = [];
/** When the daemon's checkpointer started its worker (performance.now()), if it did. */
let checkpointerAt = NaN;
const log = pollLog(lines, (msg) => {
  if (msg === 'checkpointer_started') checkpointerAt = performance.now();
});
// The markets poll's limit is the world's markets: the query brings each one's newest row, as the bare request asks for
// (the quick run's 2,000 markets under the §8 limit of 10,000 read five rows a market, against the bare request's one).
const config = loadBenchConfig({ ...input, rules: 'starter', polls: ['markets', 'positions', 'benchmarks'], marketsLimit: input.markets });
const daemon = await startDaemon({ config, log, consoleOut: { write: () => true } });
try {
  // The scheduler ran every poll once at start; these wait for those runs.
  await Promise.all(['markets', 'positions', 'benchmarks'].map((p) => daemon.pollNow(p)));
  // The markets poll's bare parts (the B1): the query fetched and JSON.parse'd, its rows in one prepared insert
  // (as JSON, one table), and one gauge set per row.
  const bareMarkets = bareDb(`${input.dbPath}.bare-markets`);
  const gauge = new Gauge({ name: 'bare_market_utilization', help: 'bare', labelNames: ['market_id'], registers: [new Registry()] });
  const parts = { fetch: [] as number[], insert: [] as number[], gauge: [] as number[] };
  const bare = () =>
    probe.bare(async () => {
      const t0 = performance.now();
      const res = await request(new URL(config.source.graphql_path, input.baseUrl), {
        dispatcher: bareAgent,
        reset: true,
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', 'x-api-key': input.apiKey },
        body: metricsBody(input.markets),
      });
      const bytes = await res.body.arrayBuffer();
      const body = JSON.parse(new TextDecoder().decode(bytes)) as { data?: { metrics?: Array<Record<string, unknown>> } };
      const rows = body.data?.metrics ?? [];
      const t1 = performance.now();
      const at = Date.now();
      bareMarkets.insert(rows.map((row) => ({ kind: 'market' as const, entity: String(row.market_id), at, row })));
      const t2 = performance.now();
      for (const row of rows) gauge.labels(String(row.market_id)).set(Number(row.utilization));
      parts.fetch.push(t1 - t0);
      parts.insert.push(t2 - t1);
      parts.gauge.push(performance.now() - t2);
      if (rows.length === 0) throw new Error('the bare metrics query returned no rows');
    });
  lines.length = 0;
  // How long the poll holds the event loop at once is how long /metrics and /healthz wait.
  const probe = blockProbe(daemon.store);
  probe.take();
  const marketStarts: number[] = [];
  const markets = await timePair(
    {
      run: () => {
        marketStarts.push(performance.now());
        return daemon.pollNow('markets');
      },
    },
    { run: bare },
    input.reps,
  );
  await probe.settle();
  // The collector's entries come in a later phase of the loop than the timer's turn.
  await nextTurn();
  const marketsBlocks = probe.take();
  const marketLines = lines.filter((l) => l.poll === 'markets').slice(input.reps.warmup);
  assertAllOk(lines, 'markets', input.reps.warmup + input.reps.runs);
  const bareStore = bareDb(`${input.dbPath}.bare`);
  const walk: number[] = [];
  const insert: number[] = [];
  let bareRows = 0;
  const bareParts = () =>
    probe.bare(async () => {
      const rows: Array<{ kind: 'position'; entity: string; at: number; row: unknown }> = [];
      const t0 = performance.now();
      const at = Date.now();
      await barePositions({ url: input.baseUrl, apiKey: input.apiKey }, (page) => {
        for (const row of page) rows.push({ kind: 'position', entity: String((row as { id?: unknown }).id), at, row });
      });
      const t1 = performance.now();
      bareStore.insert(rows);
      walk.push(t1 - t0);
      insert.push(performance.now() - t1);
      bareRows = rows.length;
    });
  const positionRuns = Math.max(1, Math.ceil(input.reps.runs / 2));
  const positions = await timePair({ run: () => daemon.pollNow('positions') }, { run: bareParts }, { warmup: 0, runs: positionRuns });
  await probe.settle();
  // The collector's entries come in a later phase of the loop than the timer's turn.
  await nextTurn();
  const positionsBlocks = probe.take();
  probe.stop();
  bareStore.db.close();
  const rows = assertAllOk(lines, 'positions', positionRuns);
  const mem = process.memoryUsage();
  const db = daemon.store.db;
  db.pragma('wal_checkpoint(TRUNCATE)');
  const byKind = db
    .prepare<[], { kind: string; n: number; fieldBytes: number }>(
      `SELECT json_extract(e.value, '$.kind') AS kind, count(*) AS n, avg(length(h.vals)) AS fieldBytes
       FROM reading_history h JOIN history_entities e ON e.id = h.entity WHERE h.shape != 0 GROUP BY 1`,
    )
    .all();
  const history = byKind.reduce((sum, k) => sum + k.n, 0);
  const polls = (db.prepare("SELECT count(*) AS n FROM poll_runs WHERE poll = 'markets' AND ok = 1").get() as { n: number }).n;
  const bytes = statSync(daemon.store.path).size;
  const alerts = daemon.store.db.prepare("SELECT count(*) AS n FROM alerts WHERE state IN ('pending', 'firing')").get() as { n: number } | undefined;
  // Last, so that nothing above is perturbed: markets polls one after another, scraped all along by another process.
  let scrapes: E2eResult['scrapes'];
  if (input.scrapeWhilePolling) {
    if (daemon.url === undefined) throw new Error('the bench config has no HTTP listener');
    // Three times the timed runs at least, and on until `minScrapes` scrapes' time has passed: a full run's p99 is over
    // 100+ scrapes, not their maximum (polls of ~0.5 s gave 76–86 scrapes in 15 polls, 2026-11-27).
    let scrapedPolls = 0;
    const before = lines.length;
    const r = await scrapeWhile(`${daemon.url}/metrics`, SCRAPE_EVERY_MS, async () => {
      const until = performance.now() + (input.minScrapes ?? 0) * SCRAPE_EVERY_MS;
      while (scrapedPolls < 3 * input.reps.runs || performance.now() < until) {
        await daemon.pollNow('markets');
        scrapedPolls++;
      }
    });
    assertAllOk(lines.slice(before), 'markets', scrapedPolls);
    scrapes = { ms: r.scrapes, polls: scrapedPolls };
  }
  bareMarkets.db.close();
  const result: E2eResult = {
    markets: { subject: markets.subject, baseline: markets.baseline, ...parts },
    positions: { subject: positions.subject, baseline: positions.baseline, rows, bareRows, walk, insert },
    lines: marketLines,
    loopMaxMs: { markets: Math.max(marketsBlocks.inside, marketsBlocks.outside), positions: Math.max(positionsBlocks.inside, positionsBlocks.outside) },
    txnMaxMs: { markets: marketsBlocks.txn, positions: positionsBlocks.txn },
    insideMaxMs: { markets: marketsBlocks.inside, positions: positionsBlocks.inside },
    outsideMaxMs: { markets: marketsBlocks.outside, positions: positionsBlocks.outside },
    outsideWhere: where(marketsBlocks.outsideAt, marketStarts, checkpointerAt),
    gcInLongestMs: {
      inside: { markets: marketsBlocks.insideGc, positions: positionsBlocks.insideGc },
      outside: { markets: marketsBlocks.outsideGc, positions: positionsBlocks.outsideGc },
    },
    rssMb: mem.rss / 1e6,
    heapUsedMb: mem.heapUsed / 1e6,
    history: { rows: history, bytes, polls, byKind: Object.fromEntries(byKind.map((k) => [k.kind, { rows: k.n, fieldBytes: k.fieldBytes }])) },
    alerts: alerts?.n ?? 0,
    ...(scrapes ? { scrapes } : {}),
  };
  process.send?.(result);
} finally {
  await daemon.stop();
  await bareAgent.close();
}
