/**
 * Child-process entry: runs the simulator in its own process, so serving 10,000 markets does not share
 * the bench's event loop (the data service is another machine in production). Started by {@link ./sim.ts}.
 *
 * Besides 'stop', the parent may send {@link OverrideRequest}: markets' utilization is held at a value from now
 * on (through the world's own override hook, so every other field and the timestamps move on as before), or let
 * go (`utilization: null`). The reply says when the change took effect, by this machine's clock.
 */
import { startSimulator } from '../simulator/index.js';

/** Holds (or, with null, releases) the utilization of `markets` (indices, or every market). */
export interface OverrideRequest {
  id: number;
  override: { markets: number[] | 'all'; utilization: number | null };
}

/** The answer to an {@link OverrideRequest}: when it took effect (ms) and the market_ids it touched. */
export interface OverrideReply {
  id: number;
  at: number;
  marketIds: string[];
}

const opts = JSON.parse(process.argv[2] ?? '{}') as { markets?: number; positions?: number; seed?: number; networks?: string[] };
const sim = await startSimulator({ ...opts, maxGraphqlRows: Math.max(50_000, opts.markets ?? 0) });

const held = new Map<number, number>();
let heldAll: number | undefined;
const scenario = sim.world.marketOverrides.bind(sim.world);
sim.world.marketOverrides = (index, nowMs) => {
  const u = held.get(index) ?? heldAll;
  const o = scenario(index, nowMs);
  return u === undefined ? o : { ...o, utilization: u };
};

function override(r: OverrideRequest['override']): OverrideReply['marketIds'] {
  const all = r.markets === 'all';
  if (all) {
    heldAll = r.utilization ?? undefined;
    held.clear();
  }
  const indices = all ? sim.world.markets.map((m) => m.index) : (r.markets as number[]);
  if (!all) {
    for (const i of indices) {
      if (r.utilization === null) held.delete(i);
      else held.set(i, r.utilization);
    }
  }
  return indices.map((i) => sim.world.markets[i]?.marketId ?? `#${i}`);
}

process.send?.({ url: sim.url, catalogUrl: sim.catalogUrl, apiKey: sim.apiKey });
process.on('message', (m: unknown) => {
  if (m === 'stop') void sim.close().then(() => process.exit(0));
  else if (typeof m === 'object' && m !== null && 'override' in m) {
    const req = m as OverrideRequest;
    const marketIds = override(req.override);
    process.send?.({ id: req.id, at: Date.now(), marketIds } satisfies OverrideReply);
  }
});
process.on('disconnect', () => void sim.close().then(() => process.exit(0)));
