/** The `positions`, `assets` and `holdings` polls: a cursor walk to the end, one reading per row. */
import { listReadingsSteps, type ListKind } from '../parse/lists.js';
import { runYielding } from '../../yielding.js';
import { pollSchemas, type PollConfigOf } from './schemas.js';
import { ENDPOINTS } from '../client.js';
import { failIfAllRejected, keepShard, type PollContext, type PollData } from './context.js';

type ListPoll = 'positions' | 'assets' | 'holdings';

const readingKind: Record<ListPoll, ListKind> = { positions: 'position', assets: 'asset', holdings: 'holding' };

/** The list parameters the three kinds share. */
type ListParams = PollConfigOf<'positions'>['params'];

function runner(kind: ListPoll) {
  return async (cfg: { params: ListParams }, ctx: PollContext): Promise<PollData> => {
    const walk = await ctx.client[kind]({ ...cfg.params }, { signal: ctx.signal });
    ctx.log.debug('list walked', { kind, rows: walk.rows.length, pages: walk.pages });
    const data = failIfAllRejected(`GET ${ENDPOINTS[kind]}`, walk.rows.length, await runYielding(listReadingsSteps(readingKind[kind], walk.rows, ctx.now)));
    return keepShard(data, ctx.shard);
  };
}

/** The `positions` poll kind. */
export const positionsPoll = { kind: 'positions', schema: pollSchemas.positions, run: runner('positions') } as const;
/** The `assets` poll kind. */
export const assetsPoll = { kind: 'assets', schema: pollSchemas.assets, run: runner('assets') } as const;
/** The `holdings` poll kind. */
export const holdingsPoll = { kind: 'holdings', schema: pollSchemas.holdings, run: runner('holdings') } as const;
