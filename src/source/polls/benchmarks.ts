/** The `benchmarks` poll: the newest historical benchmark day per network and code. */
import type { Reading, Rejection } from '../../model.js';
import { mergeForms, type SeenForms } from '../read/seen.js';
import { benchmarkReading } from '../parse/benchmarks.js';
import { inShard } from '../shard.js';
import type { PollConfigOf } from './schemas.js';
import { allOrNothing, type PollContext, type PollData } from './context.js';

async function run(cfg: PollConfigOf<'benchmarks'>, ctx: PollContext): Promise<PollData> {
  const networks = cfg.networks === 'all' ? (await ctx.client.networks({ signal: ctx.signal })).map((n) => n.name) : cfg.networks;
  const pairs = [...new Set(networks)].flatMap((network) => cfg.codes.map((code) => ({ network, code })));
  const mine = pairs.filter((p) => inShard(`${p.network}/${p.code}`, ctx.shard));
  const fromTimestamp = Math.floor((ctx.now - cfg.lookback) / 1000);
  const results = await allOrNothing(
    mine.map(({ network, code }) => async (signal: AbortSignal) => {
      const walk = await ctx.client.benchmarks({ network, code, fromTimestamp, perPage: cfg.per_page }, { signal });
      return benchmarkReading(network, code, walk.rows);
    }),
    ctx.signal,
  );
  const readings: Reading[] = [];
  const rejected: Rejection[] = [];
  const seen: SeenForms = {};
  for (const r of results) {
    if (r.reading) readings.push(r.reading);
    rejected.push(...r.rejected);
    mergeForms(seen, r.seen);
  }
  return { readings, rejected, seen };
}

/** The `benchmarks` poll kind. */
export const benchmarksPoll = { kind: 'benchmarks', run } as const;
