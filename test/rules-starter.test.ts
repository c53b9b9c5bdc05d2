/** The starter rules judged on realistic readings: which rules a market's select picks, and what their annotations say. */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfigText } from '../src/config/load.js';
import type { Reading } from '../src/model.js';
import { renderAnnotations } from '../src/rules/annotations.js';
import { getRuleKind } from '../src/rules/registry.js';
import { evaluateExplained } from '../src/rules/rule-kind.js';
import { matchesSelect } from '../src/rules/select.js';
import { ruleReads } from '../src/rules/define.js';
import { benchmark, historyOf, HOUR, market, NOW, position } from './rules-helpers.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const cfg = loadConfigText(
  join(root, 'lookout.yaml'),
  ['source: { base_url: "http://127.0.0.1:9" }', 'polls:', '  - { name: m, kind: metrics, cron: "* * * * *" }', `rules: { files: [${JSON.stringify(join(root, 'rules', '*.yaml'))}] }`].join('\n'),
  { env: {}, dir: root },
);
const rules = cfg.rules.map((r) => r.rule);

function pair(loan: string, collateral: string, fields: Record<string, unknown> = {}, at = NOW): Reading {
  const m = market(
    {
      block: 123,
      oracle_price_scaled: 3030,
      service_price: 3000,
      total_borrowed_usd: 9_612_000,
      total_supplied_usd: 10_000_000,
      oracle_last_update: NOW - 2 * HOUR,
      ...fields,
      market: { chain: 'base', loan_asset_symbol: loan, collateral_asset_symbol: collateral, oracle: '0x1234567890abcdef1234567890abcdef1234abcd', loan_asset_decimals: 6, collateral_asset_decimals: 18 },
    },
    at,
    'morpho-base-0x1234567890abcdef1234567890abcdef12345678',
  );
  return { ...m, labels: { ...m.labels, loan_asset_symbol: loan, collateral_asset_symbol: collateral } };
}

/** Names of the rules that select `reading` and judge it a breach. */
function breaches(reading: Reading, history = historyOf([])): string[] {
  return rules
    .filter((r) => ruleReads(getRuleKind(r.kind)!, r).includes(reading.kind) && matchesSelect(r.select, reading))
    .filter((r) => getRuleKind(r.kind)!.evaluate({ rule: r, reading, now: NOW, history, active: false }).status === 'breach')
    .map((r) => r.name);
}

describe('starter rules on realistic readings', () => {
  it.each([
    { name: 'USDC/WETH at 96% util, oracle 2h old, 1% off', reading: pair('USDC', 'WETH', { utilization: 0.9612 }), want: ['market-utilization-warning', 'market-utilization-critical', 'oracle-lag-volatile-1h'] },
    { name: 'USDC/WETH 2.5% off', reading: pair('USDC', 'WETH', { oracle_price_scaled: 3075 }), want: ['oracle-lag-volatile-1h', 'oracle-price-deviation-volatile'] },
    { name: 'USDT/USDC 1.5% off, oracle 2h old (24h feed)', reading: pair('USDT', 'USDC', { oracle_price_scaled: 1.015, service_price: 1 }), want: ['oracle-price-deviation-stable'] },
    { name: 'WETH/wstETH 1.2% off, oracle 27h old', reading: pair('WETH', 'wstETH', { oracle_price_scaled: 1.2, service_price: 1.18577, oracle_last_update: NOW - 27 * HOUR }), want: ['oracle-lag-eth-24h', 'oracle-price-deviation-lst'] },
    { name: 'WETH/cbBTC 1.5% off: within the volatile limit', reading: pair('WETH', 'cbBTC', { oracle_price_scaled: 30.45, service_price: 30 }), want: [] },
    { name: 'borrow APY 30%', reading: pair('USDC', 'WETH', { borrow_apy: 0.3, oracle_last_update: NOW }), want: ['market-borrow-apy-high'] },
  ])('$name', ({ reading, want }) => {
    expect(breaches(reading)).toEqual(want);
  });

  it('borrow APY up 2 points and 50% within the hour', () => {
    const h = historyOf([pair('USDC', 'WETH', { borrow_apy: 0.04 }, NOW - HOUR)]);
    expect(breaches(pair('USDC', 'WETH', { borrow_apy: 0.065, oracle_last_update: NOW }), h)).toEqual(['market-borrow-apy-jump']);
    expect(breaches(pair('USDC', 'WETH', { borrow_apy: 0.059, oracle_last_update: NOW }), h)).toEqual([]);
  });

  it.each([
    {
      rule: 'market-utilization-critical',
      reading: pair('USDC', 'WETH', { utilization: 0.9612 }),
      summary: 'WETH/USDC on base: utilization 96.12%, withdrawals at risk',
      description:
        'Market morpho…5678 has stayed above 95% utilization for 10m (96.12% now): of $10,000,000 supplied, $9,612,000 is borrowed. At 100% suppliers cannot withdraw until borrowers repay. Borrow APY 5%.',
    },
    {
      rule: 'market-borrow-apy-jump',
      reading: pair('USDC', 'WETH', { borrow_apy: 0.065 }),
      summary: 'WETH/USDC on base: borrow APY 4% → 6.5% within 1h',
      description: 'Borrow APY of market morpho…5678 rose 250 bps (63%) in 1h, from 4% to 6.5%. Utilization is 50%.',
    },
    {
      rule: 'oracle-lag-volatile-1h',
      reading: pair('USDC', 'WETH'),
      summary: 'WETH/USDC on base: oracle not updated for 2h',
      description:
        'The oracle 0x1234…abcd of market morpho…5678 last updated at 2025-01-15 10:00 UTC, 2h ago; its 1h heartbeat allows 1h 11m. Liquidations and borrows are priced with a stale value.',
    },
    {
      rule: 'oracle-price-deviation-volatile',
      reading: pair('USDC', 'WETH', { oracle_price_scaled: 3075 }),
      summary: 'WETH/USDC on base: oracle price off by 2.5%',
      description:
        'Market morpho…5678: the oracle prices WETH at 3075 USDC, the service at 3000 (2.5% apart, limit 2%). A wrong oracle price means wrong liquidations or bad debt.',
    },
    {
      rule: 'position-unverified',
      reading: position({ verified: false, value_usd: 25_000, nav_usd: 25_100, pnl_usd: -120.5, wallet: '0xabcdef0123456789abcdef0123456789abcdef01' }),
      summary: 'Unverified USDC position of $25,000 on base (morpho)',
      description: 'Position pos-1 of wallet 0xabcd…ef01 ($25,000, NAV $25,100, PnL -$121) is not verified against chain state; its figures cannot be trusted until it is.',
    },
    {
      rule: 'benchmark-stale',
      reading: benchmark({ day: Date.UTC(2025, 0, 13), isComplete: true }),
      summary: 'Benchmark base/usd: newest day 2025-01-13 is too_old',
      description:
        'The newest USD benchmark day on base is 2025-01-13, 2d 12h old (limit 1d 12h); complete: true, stale: false, incomplete for 0s (limit 6h). Reasons: stale = the service stopped indexing the network, too_old = no newer day arrived, incomplete = the day is not finishing indexing.',
    },
  ])('annotations of $rule', ({ rule: name, reading, summary, description }) => {
    const r = rules.find((x) => x.name === name)!;
    const history = historyOf([pair('USDC', 'WETH', { borrow_apy: 0.04 }, NOW - HOUR)]);
    const verdict = evaluateExplained(getRuleKind(r.kind)!, { rule: r, reading, now: NOW, history, active: false });
    expect(verdict.status).toBe('breach');
    expect(renderAnnotations(r, reading, verdict)).toEqual({ summary, description });
  });
});
