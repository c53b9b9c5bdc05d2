/** Readings of markets, positions and benchmarks fetched from the simulator through the real client and poll kinds. */
import { startSimulator } from '../src/simulator/index.js';
import { createDataServiceClient } from '../src/source/client.js';
import { runPoll } from '../src/source/polls/registry.js';
import { pollSchema } from '../src/source/polls/schemas.js';
import { silentLogger } from '../src/log.js';
import type { Reading } from '../src/model.js';
import { createMetrics, type Metrics } from '../src/metrics/index.js';
import { alert, outcome } from './metrics-fixtures.js';

/** One poll's readings, by poll name. */
export type SimulatedPolls = Map<string, Reading[]>;

/** Starts a simulator, runs a metrics, a positions and a benchmarks poll against it, and stops it. */
export async function simulatedReadings(opts: { markets?: number; positions?: number; now?: number } = {}): Promise<SimulatedPolls> {
  const now = opts.now ?? Date.now();
  const sim = await startSimulator({ markets: opts.markets ?? 40, positions: opts.positions ?? 300, clock: { now: () => now } });
  const client = createDataServiceClient(sourceConfig(sim.url, sim.catalogUrl));
  try {
    const ctx = { client, signal: AbortSignal.timeout(20_000), now, log: silentLogger };
    const out: SimulatedPolls = new Map();
    for (const raw of [
      { name: 'markets', kind: 'metrics', cron: '* * * * *' },
      { name: 'positions', kind: 'positions', cron: '* * * * *' },
      { name: 'benchmarks', kind: 'benchmarks', cron: '* * * * *' },
    ]) {
      const data = await runPoll(pollSchema.parse(raw), ctx);
      out.set(raw.name, data.readings);
    }
    return out;
  } finally {
    await client.close();
    await sim.close();
  }
}

function sourceConfig(baseUrl: string, catalogUrl: string) {
  return {
    base_url: baseUrl,
    catalog_url: catalogUrl,
    api_key: 'sim-key',
    graphql_path: '/yields/graphql',
    timeout: 5000,
    retries: 1,
    backoff: 10,
    max_backoff: 100,
    concurrency: 4,
    max_pages: 100,
  };
}

/** Metrics fed the way the daemon feeds them: simulator readings, poll outcomes, alerts, notifications. */
export async function fedMetrics(now = Date.now()): Promise<{ metrics: Metrics; polls: SimulatedPolls }> {
  const polls = await simulatedReadings({ now });
  const metrics = createMetrics({ version: '0.1.0' });
  for (const [poll, readings] of polls) {
    const rejected = [{ reason: 'invalid_field', detail: 'x' }, { reason: 'not_a_price', entity: 'm1', field: 'oracle_price', detail: 'x' }];
    metrics.observePoll(outcome(poll, true, { readings, rejected }), 0.3);
    metrics.setReadings(poll, readings, now);
  }
  metrics.observePoll(outcome('markets', false), 0.1);
  metrics.setAlerts([alert('util_high', 'm1', 'firing'), alert('util_high', 'm2', 'pending')]);
  metrics.observeEvaluation(0.004);
  metrics.notification('slack', 'sent');
  metrics.setOutboxPending(3);
  metrics.dataError('util_high', 'utilization_out_of_range');
  metrics.pollSkipped('markets');
  return { metrics, polls };
}
