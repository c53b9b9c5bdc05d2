/** The `performance` poll: PnL, ROI, TWR, APR, APY for the organization and each wallet. */
import { performanceReadings } from '../parse/performance.js';
import type { PollConfigOf } from './schemas.js';
import { keepShard, type PollContext, type PollData } from './context.js';

async function run(cfg: PollConfigOf<'performance'>, ctx: PollContext): Promise<PollData> {
  const body = await ctx.client.performance(cfg.params, { signal: ctx.signal });
  return keepShard(performanceReadings(body, ctx.now), ctx.shard);
}

/** The `performance` poll kind. */
export const performancePoll = { kind: 'performance', run } as const;
