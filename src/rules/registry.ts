/**
 * The rule kinds lookout knows: one module per kind under ./kinds, one line here. The config schema is assembled
 * from this list (src/config/load.ts), so a new kind is its module plus a line below.
 */
import { apyJump } from './kinds/apy-jump.js';
import { oracleLag } from './kinds/oracle-lag.js';
import { priceDeviation } from './kinds/price-deviation.js';
import { staleBenchmark } from './kinds/stale-benchmark.js';
import { threshold } from './kinds/threshold.js';
import { unverifiedPosition } from './kinds/unverified-position.js';
import { utilizationAbove } from './kinds/utilization-above.js';
import type { RuleKind } from './rule-kind.js';

/** Builds a registry from kind modules, refusing two kinds of the same name (and `source_down`, which the engine owns). */
export function buildRegistry<K extends RuleKind>(kinds: readonly K[]): readonly K[] {
  const seen = new Set<string>(['source_down']);
  for (const k of kinds) {
    if (seen.has(k.kind)) throw new Error(`rule kind '${k.kind}' is registered twice (or reserved)`);
    seen.add(k.kind);
  }
  return Object.freeze([...kinds]);
}

/** Every rule kind, in the order `lookout check` lists them. */
export const ruleKinds: readonly RuleKind[] = buildRegistry([
  utilizationAbove,
  apyJump,
  oracleLag,
  unverifiedPosition,
  staleBenchmark,
  threshold,
  priceDeviation,
] satisfies readonly RuleKind[]);

const byName = new Map(ruleKinds.map((k) => [k.kind, k]));

/** The rule kind called `name`, or undefined. */
export function getRuleKind(name: string): RuleKind | undefined {
  return byName.get(name);
}
