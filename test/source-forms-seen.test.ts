/**
 * The forms seen per field, as a poll reports them (`lookout probe`): counted for the rows a poll keeps — not a
 * duplicate's, not a row without an identity's — in the order first seen, nested market members under `market.`.
 */
import { describe, expect, it } from 'vitest';
import { listReadings } from '../src/source/parse/lists.js';
import { marketReadings } from '../src/source/parse/markets.js';

describe('forms seen', () => {
  it('counts the kept rows of a list, not a duplicate or a row with nothing to identify it', () => {
    const { readings, rejected, seen } = listReadings(
      'position',
      [
        { id: 'a', value_usd: '1', nav_usd: 2, verified: 'true' },
        { id: 'a', value_usd: 3, nav_usd: '7', verified: false }, // the same entity again: rejected, not counted
        { value_usd: '5', nav_usd: 1 }, // nothing identifies it: rejected, not counted
        { id: 'b', value_usd: 4, nav_usd: '1e3', pnl_usd: 'lots' },
      ],
      1,
    );
    expect(readings.map((r) => r.entity)).toEqual(['a', 'b']);
    expect(rejected.map((r) => [r.reason, r.entity, r.field])).toEqual([
      ['duplicate', 'a', undefined],
      ['missing_id', undefined, undefined],
      ['not_a_number', 'b', 'pnl_usd'],
    ]);
    expect(seen).toEqual({
      id: { string: 2 },
      value_usd: { 'numeric string': 1, number: 1 },
      nav_usd: { number: 1, 'numeric string with exponent': 1 },
      verified: { 'string true/false': 1 },
    });
    expect(Object.keys(seen)).toEqual(['id', 'value_usd', 'nav_usd', 'verified']);
    expect(Object.keys(seen.value_usd!)).toEqual(['numeric string', 'number']);
  });

  it('counts a market row once per market, its nested members under market.', () => {
    const market = { chain: 'base', loan_asset_decimals: '6', collateral_asset_decimals: 18 };
    const { seen } = marketReadings(
      [
        { market_id: 'm1', utilization: 0.5, market, timestamp: 1_700_000_000 },
        { market_id: 'm1', utilization: '0.9', market, timestamp: 1_600_000_000 }, // older: not the reading
        { market_id: 'm2', utilization: '0.25', market: { chain: 'mainnet' }, timestamp: '1700000000000' },
      ],
      1,
    );
    expect(seen).toEqual({
      'market.chain': { string: 2 },
      'market.loan_asset_decimals': { 'numeric string': 1 },
      'market.collateral_asset_decimals': { number: 1 },
      utilization: { number: 1, 'numeric string': 1 },
      timestamp: { 'Unix seconds': 1, 'Unix milliseconds (string)': 1 },
    });
  });
});
