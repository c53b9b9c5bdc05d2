import { describe, expect, it } from 'vitest';
import { createMetrics } from '../src/metrics/index.js';
import { MarketFamily, MarketTable, type MarketRow } from '../src/metrics/market-table.js';
import { NOW, market, position, samples } from './metrics-fixtures.js';

/** A market row with the same value in every family. */
const row = (id: string, value: number): MarketRow => ({
  labels: { market_id: id, chain: 'ethereum', loan_asset: 'USDC', collateral_asset: 'WETH' },
  values: Array.from({ length: 7 }, () => value),
});

const utilization = (m: ReturnType<typeof createMetrics>) => m.registry.getMetricsAsArray().find((f) => f instanceof MarketFamily) as unknown as MarketFamily;

describe("the market families' kept bytes", () => {
  it('are kept from one scrape to the next, and replaced when a poll changes the markets', async () => {
    const m = createMetrics({ processMetrics: false });
    m.setReadings('markets', [market('m1', { utilization: 0.5 })], NOW);
    const kept = utilization(m).body();
    expect(utilization(m).body()).toBe(kept);
    m.setReadings('markets', [market('m1', { utilization: 0.6 })], NOW);
    expect(utilization(m).body()).not.toBe(kept);
    expect(samples(await m.scrape(), 'lookout_market_utilization_ratio').map((s) => s.value)).toEqual([0.6]);
  });

  it('stay as they are after a poll without markets (no 12 MB render for a positions poll), and go when the markets leave', async () => {
    const m = createMetrics({ processMetrics: false });
    m.setReadings('markets', [market('m1')], NOW);
    const kept = utilization(m).body();
    m.setReadings('positions', [position('p1', 'ethereum', 'aave', true, 10)], NOW);
    expect(utilization(m).body()).toBe(kept);
    m.setReadings('markets', [], NOW);
    expect(samples(await m.scrape(), 'lookout_market_utilization_ratio')).toEqual([]);
  });

  it("show a market two polls report with the last poll's values, and the other poll's when that one leaves", () => {
    const table = new MarketTable([]);
    const values = () =>
      [...table.families[0]!.body().toString('utf8').matchAll(/market_id="(\w+)".* (\S+)$/gm)].map((m) => `${m[1]}=${m[2]}`);
    table.replace('a', [row('m0', 1), row('m1', 1)]);
    table.replace('b', [row('m0', 2)]);
    expect(values()).toEqual(['m0=2', 'm1=1']);
    table.replace('a', [row('m0', 3), row('m1', 3)]);
    table.replace('b', [row('m0', 4)]);
    table.replace('b', []);
    expect(values()).toEqual(['m0=3', 'm1=3']);
    table.replace('b', [row('m0', 5)]);
    table.replace('a', [row('m1', 6)]);
    expect(values()).toEqual(['m0=5', 'm1=6']);
    table.forget('b');
    expect(values()).toEqual(['m1=6']);
    expect(table.size).toBe(1);
  });

  it('are not kept from a render the table changed under (a poll landing while another poll renders)', () => {
    const table = new MarketTable([]);
    table.replace('a', Array.from({ length: 1000 }, (_, i) => row(`m${i}`, 1)));
    const family = table.families[0]!;
    const steps = family.render();
    // Well into the render: m0's value has been read.
    for (let i = 0; i < 5; i++) expect(steps.next().done).toBe(false);
    table.replace('b', [row('m0', 2)]);
    while (!steps.next().done);
    expect(family.body().toString('utf8')).toContain('lookout_market_utilization_ratio{market_id="m0",chain="ethereum",loan_asset="USDC",collateral_asset="WETH"} 2\n');
  });
});
