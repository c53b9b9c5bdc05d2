/**
 * Benchmarks 1 and 2: the data-service client over loopback. The simulator runs in a child process, so
 * the time of generating a response falls on the subject and the baseline alike.
 */
import { silentLogger } from '../log.js';
import { createDataServiceClient } from '../source/client.js';
import { parseJsonExact } from '../source/json.js';
import { marketReadings } from '../source/parse/markets.js';
import { runPoll } from '../source/polls/registry.js';
import { marketsPoll, positionsPoll, type Bench, type BenchContext } from './context.js';
import { bareMetricsText, barePositions, sourceConfigFor } from './sim.js';
import { summarize, timePair } from './stats.js';

const count = (n: number) => n.toLocaleString('en-US');

async function metricsOverHttp(ctx: BenchContext): Promise<void> {
  const sim = await ctx.simulator();
  const client = createDataServiceClient(sourceConfigFor(sim), { log: silentLogger });
  let rows = 0;
  try {
    const t = await timePair(
      {
        run: async () => {
          const d = await runPoll(marketsPoll, { client, signal: AbortSignal.timeout(120_000), now: Date.now(), log: silentLogger });
          rows = d.readings.length;
        },
      },
      { run: async () => JSON.parse(await bareMetricsText(sim, ctx.markets)) },
      ctx.heavyReps,
    );
    if (rows !== ctx.markets) throw new Error(`metrics poll gave ${rows} readings, expected ${ctx.markets}`);
    ctx.row({ name: 'client.metrics', n: `${count(rows)} markets`, subject: summarize(t.subject), baseline: summarize(t.baseline), baselineName: 'undici POST + JSON.parse' });
  } finally {
    await client.close();
  }
}

async function metricsCpu(ctx: BenchContext): Promise<void> {
  const sim = await ctx.simulator();
  const text = await bareMetricsText(sim, ctx.markets);
  const now = Date.now();
  const t = await timePair(
    {
      run: () => {
        const body = parseJsonExact(text) as { data: { metrics: unknown[] } };
        return marketReadings(body.data.metrics, now);
      },
    },
    { run: () => JSON.parse(text) },
    ctx.reps,
  );
  ctx.row({ name: 'client.metrics.parse', n: `${count(ctx.markets)} rows, ${(text.length / 1e6).toFixed(1)} MB`, subject: summarize(t.subject), baseline: summarize(t.baseline), baselineName: 'JSON.parse' });
}

async function positionsOverHttp(ctx: BenchContext): Promise<void> {
  const sim = await ctx.simulator();
  const client = createDataServiceClient(sourceConfigFor(sim), { log: silentLogger });
  let rows = 0;
  let bare = { rows: 0, pages: 0 };
  try {
    const t = await timePair(
      {
        run: async () => {
          const d = await runPoll(positionsPoll, { client, signal: AbortSignal.timeout(300_000), now: Date.now(), log: silentLogger });
          rows = d.readings.length;
        },
      },
      { run: async () => (bare = await barePositions(sim)) },
      ctx.heavyReps,
    );
    if (rows !== bare.rows) throw new Error(`positions poll gave ${rows} readings, the bare walk ${bare.rows} rows`);
    ctx.row({ name: 'client.positions', n: `${count(rows)} rows, ${bare.pages} pages`, subject: summarize(t.subject), baseline: summarize(t.baseline), baselineName: 'undici GET pages + JSON.parse' });
  } finally {
    await client.close();
  }
}

/** The client benchmarks. */
export const clientBenches: Bench[] = [
  { name: 'client.metrics', about: 'metrics poll of 10,000 markets over loopback (fetch, parse, normalize) vs a bare undici POST + JSON.parse', run: metricsOverHttp },
  { name: 'client.metrics.parse', about: 'parse + normalize of the 10,000-market response body, no network, vs JSON.parse', run: metricsCpu },
  { name: 'client.positions', about: 'positions poll of 50,000 rows (100 pages of 500) vs bare undici GETs + JSON.parse', run: positionsOverHttp },
];
