/**
 * The poll kinds: one module per kind, each `{ kind, run }`. Adding a kind is one schema in schemas.ts, one module,
 * and one line in {@link pollKinds}. The schemas are the config side's (zod): the daemon runs polls of a config already
 * loaded, and this registry imports them as types only, so the daemon never loads zod (B6s).
 */
import type { PollConfig, PollConfigOf } from './schemas.js';
import type { PollContext, PollData } from './context.js';
import { metricsPoll } from './metrics.js';
import { assetsPoll, holdingsPoll, positionsPoll } from './lists.js';
import { performancePoll } from './performance.js';
import { benchmarksPoll } from './benchmarks.js';

export type { PollContext, PollData } from './context.js';

/** The name of a poll kind. */
export type PollKindName = PollConfig['kind'];

/** A poll kind: how one run of a poll of its config (schemas.ts) turns the data service into readings. */
export interface PollKind<K extends PollKindName> {
  kind: K;
  /** One run; a failed run throws a SourceError (see failureReason for its metric reason). */
  run(cfg: PollConfigOf<K>, ctx: PollContext): Promise<PollData>;
}

/** Any one poll kind. */
export type AnyPollKind = { [K in PollKindName]: PollKind<K> }[PollKindName];

/** Every poll kind. */
export const pollKinds = [metricsPoll, positionsPoll, assetsPoll, holdingsPoll, performancePoll, benchmarksPoll] as const satisfies readonly AnyPollKind[];

// Every kind of the config schema has a module, checked at build time.
type Missing = Exclude<PollKindName, (typeof pollKinds)[number]['kind']>;
const _everyKindHasAModule: Missing extends never ? true : Missing = true;
void _everyKindHasAModule;

/** Indexes poll kinds by name, refusing a name registered twice. */
export function indexPollKinds(list: readonly AnyPollKind[]): ReadonlyMap<PollKindName, AnyPollKind> {
  const byName = new Map<PollKindName, AnyPollKind>();
  for (const k of list) {
    if (byName.has(k.kind)) throw new Error(`poll kind "${k.kind}" is registered twice`);
    byName.set(k.kind, k);
  }
  return byName;
}

/** The poll kinds by name. */
export const pollKindByName = indexPollKinds(pollKinds);

/** Runs one poll of whatever kind its config names. */
export function runPoll(cfg: PollConfig, ctx: PollContext): Promise<PollData> {
  const kind = pollKindByName.get(cfg.kind);
  if (!kind) throw new Error(`unknown poll kind "${cfg.kind}"`);
  return (kind as PollKind<typeof cfg.kind>).run(cfg as never, ctx);
}
