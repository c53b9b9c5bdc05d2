/** The `metrics` poll: the GraphQL metrics query → one `market` reading per market (its newest row). */
import { createdAfter } from '../graphql.js';
import type { MarketInfo } from '../../model.js';
import { marketReadingsSteps, marketsWithoutDecimalsSteps } from '../parse/markets.js';
import { runYielding } from '../../yielding.js';
import { inShard } from '../shard.js';
import type { PollConfigOf } from './schemas.js';
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
  // Asking about markets without decimals learns what the rows tell of their markets: the reading need not again.
  const learned = ctx.marketInfo ? rows.length : 0;
  if (ctx.marketInfo) rows = rows.concat(await askForMarketInfo(rows, after, ctx.marketInfo, ctx));
  const read = await runYielding(marketReadingsSteps(rows, ctx.now, { oraclePrice: ctx.oraclePrice ?? 'auto', known: ctx.marketInfo ?? new Map(), learned }));
  return keepShard(failIfAllRejected("GraphQL metrics", rows.length, read), ctx.shard);
}

/** Markets asked about per poll, at most; the rest wait for the next polls. */
const INFO_QUERIES_PER_POLL = 20;
/** A market asked about is not asked again sooner than this (a service that never sends the object costs little). */
const INFO_REASK_MS = 3_600_000;
/** When each market was last asked about, per daemon (its `marketInfo` map). */
const askedAt = new WeakMap<Map<string, MarketInfo>, Map<string, number>>();

/**
 * A service may leave a row's nested `market` object out (SPEC §6): a market none of whose rows so far carried its
 * token decimals gets one small query of its own, whose rows usually do — else its scaled oracle price and
 * token-unit amounts stay unreadable (needs_decimals) until one does. A failed query only leaves them unknown.
 */
async function askForMarketInfo(rows: readonly unknown[], after: string, known: Map<string, MarketInfo>, ctx: PollContext): Promise<unknown[]> {
  let asked = askedAt.get(known);
  if (!asked) askedAt.set(known, (asked = new Map()));
  const due = (await runYielding(marketsWithoutDecimalsSteps(rows, known)))
    .filter((id) => inShard(id, ctx.shard) && ctx.now - (asked.get(id) ?? -Infinity) >= INFO_REASK_MS)
    .slice(0, INFO_QUERIES_PER_POLL);
  const more = await Promise.all(
    due.map(async (marketId) => {
      asked.set(marketId, ctx.now);
      try {
        return await ctx.client.metrics({ limit: 20, createdAfter: after, marketId }, { signal: ctx.signal });
      } catch (err) {
        if (ctx.signal.aborted) throw err;
        ctx.log.debug('market_info_query_failed', { market_id: marketId, err });
        return [];
      }
    }),
  );
  return more.flat();
}

/** The `metrics` poll kind. */
export const metricsPoll = { kind: 'metrics', run } as const;
