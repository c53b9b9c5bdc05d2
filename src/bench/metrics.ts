/**
 * Benchmark 5: `/metrics` at 10,000 markets, 50,000 positions (aggregated) and every network's benchmarks.
 * Cold = the first scrape after a markets poll; warm = a repeat scrape. The market families' text is rendered by
 * setReadings (the poll), not by the first scrape after it, so metrics.setReadings carries that cost. Over HTTP the
 * baseline is node:http serving a static string of the same size.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { startHttpServer } from '../http/server.js';
import { silentLogger } from '../log.js';
import { createMetrics, type Metrics } from '../metrics/index.js';
import type { Reading } from '../model.js';
import { benchmarksPoll, marketsPoll, positionsPoll, type Bench, type BenchContext } from './context.js';
import { summarize, timePair } from './stats.js';

interface Loaded {
  metrics: Metrics;
  markets: Reading[];
  sizes: string;
}

/** Metrics fed with one poll of each kind, as the daemon's `after` stage does. */
async function loaded(ctx: BenchContext): Promise<Loaded> {
  const [markets, positions, benchmarks] = await Promise.all([ctx.readings(marketsPoll), ctx.readings(positionsPoll), ctx.readings(benchmarksPoll)]);
  const metrics = createMetrics({ version: 'bench' });
  const now = Date.now();
  metrics.setReadings('markets', markets, now);
  metrics.setReadings('positions', positions, now);
  metrics.setReadings('benchmarks', benchmarks, now);
  const sizes = `${markets.length / 1000}k mkt, ${positions.length / 1000}k pos, ${benchmarks.length} bm`;
  return { metrics, markets, sizes };
}

async function setReadings(ctx: BenchContext): Promise<void> {
  const { metrics, markets, sizes } = await loaded(ctx);
  const t = await timePair({ run: () => metrics.setReadings('markets', markets, Date.now()) }, undefined, ctx.reps);
  ctx.row({ name: 'metrics.setReadings', n: `${markets.length.toLocaleString('en-US')} markets`, subject: summarize(t.subject) });
  ctx.note(`metrics.*: one registry holding ${sizes} (positions aggregated by chain, protocol and verified).`);
}

async function scrape(ctx: BenchContext): Promise<void> {
  const { metrics, markets } = await loaded(ctx);
  const text = await metrics.scrape();
  const lines = text.split('\n');
  const series = lines.filter((l) => l !== '' && !l.startsWith('#')).length;
  const n = `${series.toLocaleString('en-US')} series, ${(text.length / 1e6).toFixed(1)} MB`;
  const bare = { run: () => lines.join('\n') };
  // exposition(): what GET /metrics sends (scrape() is the same text decoded into one string, for tests and tools).
  const cold = await timePair({ before: () => metrics.setReadings('markets', markets, Date.now()), run: async () => (await metrics.exposition()).release() }, bare, ctx.reps);
  ctx.row({ name: 'metrics.scrape.cold', n, subject: summarize(cold.subject), baseline: summarize(cold.baseline), baselineName: 'join of the same lines' });
  const warm = await timePair({ run: async () => (await metrics.exposition()).release() }, bare, ctx.reps);
  ctx.row({ name: 'metrics.scrape.warm', n, subject: summarize(warm.subject), baseline: summarize(warm.baseline), baselineName: 'join of the same lines' });
}

async function getText(url: string): Promise<string> {
  const res = await request(url);
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`GET ${url}: ${res.statusCode}`);
  return text;
}

async function overHttp(ctx: BenchContext): Promise<void> {
  const { metrics, markets } = await loaded(ctx);
  const server = await startHttpServer({
    listen: '127.0.0.1:0',
    metrics,
    log: silentLogger,
    ready: () => ({ ok: true }),
    alerts: () => [],
    polls: () => [],
    silences: { list: () => [], add: () => Promise.reject(new Error('read-only')) as never, expire: () => false },
  });
  const body = Buffer.from(await metrics.scrape());
  const bare = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': metrics.contentType, 'content-length': body.length });
    res.end(body);
  });
  await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
  const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}/metrics`;
  try {
    const t = await timePair(
      { before: () => metrics.setReadings('markets', markets, Date.now()), run: () => getText(`${server.url}/metrics`) },
      { run: () => getText(bareUrl) },
      ctx.reps,
    );
    ctx.row({ name: 'metrics.http', n: `GET /metrics, ${(body.length / 1e6).toFixed(1)} MB`, subject: summarize(t.subject), baseline: summarize(t.baseline), baselineName: 'node:http static string' });
  } finally {
    await server.close();
    await new Promise((resolve) => bare.close(resolve));
  }
}

/** The metrics benchmarks. */
export const metricsBenches: Bench[] = [
  { name: 'metrics.setReadings', about: 'setReadings of one 10,000-market poll (the per-poll cost of the metrics)', run: setReadings },
  { name: 'metrics.scrape', about: 'metrics.exposition() (the bytes /metrics sends) cold (first after a poll) and warm, at 10k markets + 50k positions + benchmarks, vs joining the same lines', run: scrape },
  { name: 'metrics.http', about: 'GET /metrics through startHttpServer (cold) vs node:http serving a same-size static string', run: overHttp },
];
