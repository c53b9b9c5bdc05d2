/**
 * Benchmark 6: one full poll through the real daemon — fetch → store → evaluate → outbox → metrics — of
 * 10,000 markets (and of 50,000 positions), with the starter rules; RSS of the daemon's process after it. Last, GET /metrics
 * timed from another process while more markets polls run (target B5's p99).
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { POLL_INTERVAL_MS, type Bench, type BenchContext } from './context.js';
import type { E2eInput, E2eResult } from './e2e-child.js';
import type { DaemonMemory } from './daemon-child.js';
import { SCRAPE_EVERY_MS } from './scraper.js';
import { percentile, summarize } from './stats.js';
import { startChildSimulator } from './sim.js';
import { benchConfigYaml } from './config.js';
import { deployedEnv, mallocNote, startDaemonChild, type DaemonChild } from './daemon-proc.js';
import { assertPollsOk } from './poll-log.js';

/** B5's p99 is over at least this many scrapes in a full run (with fewer, it is their maximum). */
const MIN_SCRAPES = 120;

/** The small watch of target B6s: what the daemon costs for 200 markets (Prometheus + Alertmanager: ~85 MB together). */
const SMALL_MARKETS = 200;

async function runChild(input: E2eInput): Promise<E2eResult> {
  const entry = fileURLToPath(new URL('./e2e-entry.js', import.meta.url));
  const child = fork(entry, [JSON.stringify(input)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: deployedEnv() });
  let result: E2eResult | undefined;
  child.on('message', (m) => (result = m as E2eResult));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (!result) throw new Error(`the daemon child exited with ${String(code)} before reporting`);
  return result;
}

const median = (xs: number[]) => summarize(xs).median;
const gcMs = (g: { markets: number; positions: number }) => `${g.markets.toFixed(0)} / ${g.positions.toFixed(0)} ms`;
const where = (w: E2eResult['outsideWhere']) =>
  `${w.run < 0 || w.afterMs === null ? 'before the first run (or there was none)' : `${w.afterMs.toFixed(0)} ms into run ${w.run} (0: the warm-up)`}` +
  `; the checkpointer's worker started ${w.checkpointerMs === null ? 'before the markets runs (or not at all)' : `${w.checkpointerMs.toFixed(0)} ms after the first run's start`}`;

async function e2e(ctx: BenchContext): Promise<void> {
  const sim = await ctx.simulator();
  const r = await runChild({ baseUrl: sim.url, catalogUrl: sim.catalogUrl, apiKey: sim.apiKey, dbPath: join(ctx.dir, 'daemon.db'), reps: ctx.heavyReps, markets: ctx.markets, scrapeWhilePolling: true, minScrapes: ctx.quick ? 0 : MIN_SCRAPES });
  const s = summarize(r.markets.subject);
  ctx.row({
    name: 'e2e.markets',
    n: `${ctx.markets.toLocaleString('en-US')} markets, 13 rules`,
    subject: s,
    baseline: summarize(r.markets.baseline),
    baselineName: 'undici POST + JSON.parse + prepared insert + gauge set',
  });
  if (r.positions.bareRows !== r.positions.rows) throw new Error(`the positions poll stored ${r.positions.rows} rows, the bare walk read ${r.positions.bareRows}`);
  ctx.row({
    name: 'e2e.positions',
    n: `${r.positions.rows.toLocaleString('en-US')} positions`,
    subject: summarize(r.positions.subject),
    baseline: summarize(r.positions.baseline),
    baselineName: 'undici GET pages + JSON.parse + prepared insert',
  });
  ctx.figure('loop_block_markets_ms', r.loopMaxMs.markets);
  ctx.figure('loop_block_positions_ms', r.loopMaxMs.positions);
  ctx.figure('txn_max_markets_ms', r.txnMaxMs.markets);
  ctx.figure('txn_max_positions_ms', r.txnMaxMs.positions);
  ctx.figure('inside_block_markets_ms', r.insideMaxMs.markets);
  ctx.figure('inside_block_positions_ms', r.insideMaxMs.positions);
  ctx.figure('outside_block_markets_ms', r.outsideMaxMs.markets);
  ctx.figure('outside_block_positions_ms', r.outsideMaxMs.positions);
  ctx.figure('rss_mb', r.rssMb);
  if (r.scrapes) {
    const { ms, polls } = r.scrapes;
    ctx.row({ name: 'e2e.metrics.polling', n: `/metrics while ${polls} mkt polls`, subject: summarize(ms) });
    ctx.figure('scrape_polling_p99_ms', percentile(ms, 0.99));
    ctx.note(
      `e2e.metrics.polling: another process GETs the daemon's /metrics every ${SCRAPE_EVERY_MS} ms (one at a time, to the last byte) while ${polls} markets polls run ` +
        `back to back, after the timed runs above: ${ms.length} scrapes, p99 ${percentile(ms, 0.99).toFixed(0)} ms${ms.length < 100 ? ' (under 100 scrapes: the p99 is the max)' : `, max ${Math.max(...ms).toFixed(0)} ms`}, ` +
        `${ms.filter((v) => v > 100).length} over 100 ms (a scrape waits at most for one slice of the poll's transaction, or a block of the event loop).`,
    );
  }
  ctx.figure('e2e_polls', r.history.polls);
  const evalMs = median(r.lines.map((l) => l.eval_ms));
  const runMs = median(r.lines.map((l) => l.duration_ms));
  const mb = (b: number) => `${(b / 1e6).toFixed(0)} MB`;
  ctx.note(
    `e2e.markets: the poll runner's own log says ${runMs.toFixed(0)} ms a run (median), of which rule evaluation ${evalMs.toFixed(0)} ms; ` +
      `a poll takes ${((100 * s.median) / POLL_INTERVAL_MS).toFixed(0)}% of the 30 s interval (p90 ${((100 * s.p90) / POLL_INTERVAL_MS).toFixed(0)}%). ` +
      `${r.alerts} alerts pending or firing. The event loop was held for up to ${r.loopMaxMs.markets.toFixed(0)} ms at once during the markets polls ` +
      `and ${r.loopMaxMs.positions.toFixed(0)} ms during the positions polls (/metrics and /healthz wait that long at most). ` +
      `The poll's store transaction stayed open (in slices) up to ${r.txnMaxMs.markets.toFixed(0)} ms markets, ${r.txnMaxMs.positions.toFixed(0)} ms positions; ` +
      `the longest block while it was open: ${r.insideMaxMs.markets.toFixed(0)} ms markets, ${r.insideMaxMs.positions.toFixed(0)} ms positions; ` +
      `outside it: ${r.outsideMaxMs.markets.toFixed(0)} ms markets, ${r.outsideMaxMs.positions.toFixed(0)} ms positions ` +
      `(of which the collector's pauses: inside ${gcMs(r.gcInLongestMs.inside)}, outside ${gcMs(r.gcInLongestMs.outside)}; ` +
      `the bare parts' garbage, made in this process, is collected on the daemon's time too). ` +
      `The markets polls' longest block outside began ${where(r.outsideWhere)}.`,
  );
  ctx.note(
    `e2e.markets: its bare parts, timed turn about with the poll — the query fetched and JSON.parse'd ${median(r.markets.fetch).toFixed(0)} ms, ` +
      `its rows in one prepared insert (as JSON, one table) ${median(r.markets.insert).toFixed(0)} ms, a gauge set per row ${median(r.markets.gauge).toFixed(1)} ms (medians, warm-up runs included).`,
  );
  ctx.note(
    `e2e.positions: its bare parts, timed turn about with the poll — every page fetched and JSON.parse'd ${median(r.positions.walk).toFixed(0)} ms, ` +
      `the same ${r.positions.bareRows.toLocaleString('en-US')} rows in one prepared insert (as JSON, one table) ${median(r.positions.insert).toFixed(0)} ms (medians).`,
  );
  ctx.note(
    `e2e: daemon process RSS ${r.rssMb.toFixed(0)} MB (heap used ${r.heapUsedMb.toFixed(0)} MB) after ${r.history.polls} markets polls and the positions polls; ` +
      `its DB ${mb(r.history.bytes)} for ${r.history.rows.toLocaleString('en-US')} history rows (${Object.entries(r.history.byKind)
        .map(([k, v]) => `${k} ${v.rows.toLocaleString('en-US')} of ${v.fieldBytes.toFixed(0)} bytes of packed values each`)
        .join(', ')}).`,
  );
}

/** What {@link watchSmall} measured. */
export interface SmallWatch {
  /** Each timed markets poll, ms, as seen in the child; the rule evaluation of each, ms. */
  ms: number[];
  evalMs: number[];
  /** RSS after each markets poll, MB. */
  rss: number[];
  /** The child's memory at the last sample. */
  last: DaemonMemory | undefined;
}

/**
 * B6s's watch: the daemon alone in a process of its own (src/bench/daemon-child.ts, nothing of the bench's baselines
 * beside it), with the starter rules, watching 200 markets and 1,000 positions: `rounds` markets polls (a positions poll
 * every fifth), its RSS after each. `atEnd` sees the child before it stops (tools/small-watch.mjs reads its mappings).
 */
export async function watchSmall(opts: { dir: string; rounds: number; execArgv?: string[]; atEnd?: (daemon: DaemonChild) => Promise<void> }): Promise<SmallWatch> {
  const sim = await startChildSimulator({ markets: SMALL_MARKETS, positions: 1_000 });
  const polls = ['markets', 'positions', 'benchmarks'] as const;
  const daemon = await startDaemonChild(
    // As a watch of 200 markets is configured: the default limit (1,000 rows a query), not the §8 scale's 10,000.
    benchConfigYaml({ baseUrl: sim.url, catalogUrl: sim.catalogUrl, apiKey: sim.apiKey, dbPath: join(opts.dir, 'small.db'), rules: 'starter', polls: [...polls], marketsLimit: 'default' }),
    opts.execArgv ? { execArgv: opts.execArgv } : {},
  );
  try {
    // The scheduler runs every poll once at start; these wait for those runs.
    for (const p of polls) assertPollsOk((await daemon.poll(p)).lines, `e2e.small ${p}`);
    const r: SmallWatch = { ms: [], evalMs: [], rss: [], last: undefined };
    for (let i = 0; i < opts.rounds; i++) {
      const m = await daemon.poll('markets');
      assertPollsOk(m.lines, 'e2e.small markets');
      // The default limit must still bring every market's newest row (the simulator sends newest first).
      const short = m.lines.find((l) => l.rows !== SMALL_MARKETS);
      if (short) throw new Error(`e2e.small: a markets poll read ${short.rows} markets, not ${SMALL_MARKETS}`);
      r.ms.push(m.ms);
      r.evalMs.push(...m.lines.map((l) => l.eval_ms));
      if (i % 5 === 4) assertPollsOk((await daemon.poll('positions')).lines, 'e2e.small positions');
      const mem = await daemon.memory();
      r.rss.push(mem.rssMb);
      r.last = mem;
    }
    await opts.atEnd?.(daemon);
    return r;
  } finally {
    await daemon.stop();
    await sim.stop();
  }
}

/**
 * B6s: {@link watchSmall}'s RSS, the median of its samples. RSS swings by tens of MB with the garbage not yet
 * collected; one sample after the timed polls (as this bench took before) read anything from 203 to 318 MB.
 */
async function small(ctx: BenchContext): Promise<void> {
  const { ms, evalMs, rss, last } = await watchSmall({ dir: ctx.dir, rounds: ctx.quick ? 6 : 20 });
  // No ratio: the markets poll reads the time series up to its limit (1,000 rows, 5 per market), the bare request
  // would ask for the newest 200; this run is here for the RSS.
  ctx.row({ name: 'e2e.small', n: `${SMALL_MARKETS} markets, 13 rules`, subject: summarize(ms) });
  const r = summarize(rss);
  ctx.figure('rss_small_mb', r.median);
  ctx.note(
    `e2e.small: the daemon's process alone, RSS median ${r.median.toFixed(0)} MB (${r.min.toFixed(0)}–${r.max.toFixed(0)} MB over ${rss.length} samples, one after each markets poll; heap used ${(last?.heapUsedMb ?? NaN).toFixed(0)} MB at the last) ` +
      `watching ${SMALL_MARKETS} markets and 1,000 positions; a markets poll ${median(ms).toFixed(0)} ms, of which rule evaluation ${median(evalMs).toFixed(0)} ms. ` +
      (last ? `At the last sample: ${memoryParts(last)}. ` : '') +
      `Malloc: ${mallocNote()}.`,
  );
}

/** Where a daemon child's RSS is, in words (Linux; the /proc figures are NaN elsewhere). */
function memoryParts(m: DaemonMemory): string {
  const mb = (v: number) => `${v.toFixed(0)} MB`;
  return (
    `${mb(m.fileMb)} of mapped files (the node binary's pages: 34 MB in a bare Node), ${mb(m.anonMb)} private, of which V8's young generation ` +
    `${mb(m.youngMb)} committed (polls back to back keep it at its largest) and its old space ${mb(m.oldMb)} (${mb(m.oldUsedMb)} used, live or not yet collected)`
  );
}

/** The end-to-end benchmark. */
export const e2eBenches: Bench[] = [
  { name: 'e2e', about: 'startDaemon against the simulator; pollNow(markets) of 10,000 markets and pollNow(positions) of 50,000, with the starter rules; RSS; then GET /metrics from another process while markets polls run', run: e2e },
  { name: 'e2e.small', about: 'the same daemon watching 200 markets and 1,000 positions: its RSS (target B6s)', run: small },
];
