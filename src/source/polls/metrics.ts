/** The `metrics` poll: the GraphQL metrics query → one `market` reading per market (its newest row). */
import { createdAfter } from '../graphql.js';
import { marketReadings } from '../parse/markets.js';
import { inShard } from '../shard.js';
import { pollSchemas, type PollConfigOf } from './schemas.js';
import { allOrNothing, failIfAllRejected, keepShard, type PollContext, type PollData } from './context.js';

/** Runs one metrics poll. With `markets` listed, one query per market (the interface's only market filter is `_eq`). */
async function run(cfg: PollConfigOf<'metrics'>, ctx: PollContext): Promise<PollData> {
  const after = createdAfter(ctx.now, cfg.lookback);
  let rows: unknown[];
  if (cfg.markets.length > 0) {
    const mine = [...new Set(cfg.markets)].filter((m) => inShard(m, ctx.shard));
    const perMarket = await allOrNothing(
      mine.map((marketId) => (signal: AbortSignal) => ctx.client.metrics({ limit: cfg.limit, createdAfter: after, marketId }, { signal })),
      ctx.signal,
    );
    const wanted = new Set(mine);
    rows = perMarket.flat().filter((r) => wanted.has((r as { market_id?: unknown })?.market_id as string));
  } else {
    rows = await ctx.client.metrics({ limit: cfg.limit, createdAfter: after }, { signal: ctx.signal });
    if (rows.length >= cfg.limit) {
      // The interface shows no paging for GraphQL: a full result may have left markets out.
      ctx.log.debug('metrics result reached the poll limit', { limit: cfg.limit, hint: 'raise the poll limit, or list markets' });
    }
  }
  return keepShard(failIfAllRejected("GraphQL metrics", rows.length, marketReadings(rows, ctx.now, { oraclePrice: ctx.oraclePrice ?? 'auto', known: ctx.marketInfo ?? new Map() })), ctx.shard);
}

/** The `metrics` poll kind. */
export const metricsPoll = { kind: 'metrics', schema: pollSchemas.metrics, run } as const;
