/** The `positions`, `assets` and `holdings` polls: a cursor walk to the end, one reading per row. */
import { listReader, type ListKind } from '../parse/lists.js';
import { runYielding } from '../../yielding.js';
import type { PollConfigOf } from './schemas.js';
import { ENDPOINTS } from '../client.js';
import { failIfAllRejected, keepShard, type PollContext, type PollData } from './context.js';

type ListPoll = 'positions' | 'assets' | 'holdings';

const readingKind: Record<ListPoll, ListKind> = { positions: 'position', assets: 'asset', holdings: 'holding' };

/** The list parameters the three kinds share. */
type ListParams = PollConfigOf<'positions'>['params'];

function runner(kind: ListPoll) {
  return async (cfg: { params: ListParams }, ctx: PollContext): Promise<PollData> => {
    // Each page read as it arrives: its raw rows are garbage before the next page comes (not 50,000 held at once).
    const reader = listReader(readingKind[kind], ctx.now);
    let rows = 0;
    const onPage = async (page: unknown[]) => {
      rows += page.length;
      await runYielding(reader.add(page));
    };
    const walk = await ctx.client[kind]({ ...cfg.params }, { signal: ctx.signal, onPage });
    ctx.log.debug('list walked', { kind, rows, pages: walk.pages });
    const data = failIfAllRejected(`GET ${ENDPOINTS[kind]}`, rows, reader.result());
    return keepShard(data, ctx.shard);
  };
}

/** The `positions` poll kind. */
export const positionsPoll = { kind: 'positions', run: runner('positions') } as const;
/** The `assets` poll kind. */
export const assetsPoll = { kind: 'assets', run: runner('assets') } as const;
/** The `holdings` poll kind. */
export const holdingsPoll = { kind: 'holdings', run: runner('holdings') } as const;
