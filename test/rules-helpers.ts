/** Shared fixtures for the rule tests: readings, a HistoryView over an array, and rules parsed through the real schema. */
import type { Reading } from '../src/model.js';
import { ruleSchema } from '../src/config/load.js';
import { evaluateExplained, historyOf, type HistoryView, type RuleKind, type Verdict } from '../src/rules/rule-kind.js';

export { historyOf };
import type { RuleBase } from '../src/rules/schema.js';

/** 2025-01-15T12:00:00Z, the "now" of most rule tests. */
export const NOW = Date.UTC(2025, 0, 15, 12);
/** A minute in ms. */
export const MIN = 60_000;
/** An hour in ms. */
export const HOUR = 3_600_000;

/** A market reading with the labels the client sets; `fields` override the defaults. */
export function market(fields: Record<string, unknown> = {}, at = NOW, entity = 'morpho-base-0xabc123'): Reading {
  return {
    kind: 'market',
    entity,
    at,
    labels: { market_id: entity, chain: 'base', loan_asset_symbol: 'USDC', collateral_asset_symbol: 'WETH', protocol: 'morpho', loan_asset: '0xloan', collateral_asset: '0xcoll' },
    fields: {
      market_id: entity,
      utilization: 0.5,
      borrow_apy: 0.05,
      supply_apy: 0.04,
      market: { chain: 'base', loan_asset_symbol: 'USDC', collateral_asset_symbol: 'WETH', loan_asset_decimals: 6, collateral_asset_decimals: 18 },
      ...fields,
    },
  };
}

/** A position reading. */
export function position(fields: Record<string, unknown> = {}, at = NOW, entity = 'pos-1'): Reading {
  return {
    kind: 'position',
    entity,
    at,
    labels: { chain: 'base', protocol: 'morpho', asset: 'USDC', wallet: '0xwallet', position_id: entity, verified: String(fields.verified ?? 'true') },
    fields: { id: entity, wallet: '0xwallet', chain: 'base', protocol: 'morpho', asset: 'USDC', value_usd: 50_000, verified: true, ...fields },
  };
}

/** A benchmark reading of the newest day. */
export function benchmark(fields: Record<string, unknown> = {}, at = NOW, entity = 'base/usd'): Reading {
  const [network = 'base', code = 'usd'] = entity.split('/');
  return {
    kind: 'benchmark',
    entity,
    at,
    labels: { network, code },
    fields: { network, code, day: Date.UTC(2025, 0, 14), isComplete: true, isStale: false, days: 7, ...fields },
  };
}

/** An empty history. */
export const noHistory: HistoryView = historyOf([]);

/** A rule as written in YAML, parsed by the real rule schema (defaults applied, durations in ms). */
export function rule(raw: Record<string, unknown>): RuleBase {
  const r = ruleSchema.safeParse({ name: 'test-rule', ...raw });
  if (!r.success) throw new Error(`bad test rule: ${JSON.stringify(r.error.issues)}`);
  return r.data;
}

/** Evaluates `reading` with `kind` and `rule` (now = NOW, no history, inactive unless given), the verdict with its context. */
export function judge(
  kind: RuleKind,
  r: RuleBase,
  reading: Reading,
  opts: { now?: number; history?: HistoryView; active?: boolean } = {},
): Verdict {
  return evaluateExplained(kind, { rule: r, reading, now: opts.now ?? NOW, history: opts.history ?? noHistory, active: opts.active ?? false });
}
