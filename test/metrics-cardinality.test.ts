import { describe, expect, it } from 'vitest';
import { createMetrics } from '../src/metrics/index.js';
import { NOW, benchmark, market, outcome, position, samples } from './metrics-fixtures.js';

const MARKET_METRICS = [
  'lookout_market_utilization_ratio',
  'lookout_market_borrow_apy_ratio',
  'lookout_market_supply_apy_ratio',
  'lookout_market_oracle_lag_seconds',
  'lookout_market_oracle_price',
  'lookout_market_total_supplied_usd',
  'lookout_market_total_borrowed_usd',
];

async function marketIds(m: ReturnType<typeof createMetrics>, name = 'lookout_market_utilization_ratio'): Promise<string[]> {
  return samples(await m.scrape(), name)
    .map((s) => s.labels.market_id!)
    .sort();
}

/** What the daemon does after each run. */
function run(m: ReturnType<typeof createMetrics>, poll: string, ok: boolean, readings: ReturnType<typeof market>[]) {
  m.observePoll(outcome(poll, ok, { readings }), 0.1);
  if (ok) m.setReadings(poll, readings, NOW);
}

describe('cardinality: series follow the entities of the last successful poll', () => {
  it.each(MARKET_METRICS)('a market missing from a successful poll loses its %s series', async (name) => {
    const m = createMetrics({ processMetrics: false });
    run(m, 'markets', true, [market('m1'), market('m2'), market('m3')]);
    expect(await marketIds(m, name)).toEqual(['m1', 'm2', 'm3']);
    run(m, 'markets', true, [market('m2')]);
    expect(await marketIds(m, name)).toEqual(['m2']);
  });

  it('a failed poll removes nothing, and the next successful one does', async () => {
    const m = createMetrics({ processMetrics: false });
    run(m, 'markets', true, [market('m1'), market('m2')]);
    run(m, 'markets', false, []);
    expect(await marketIds(m)).toEqual(['m1', 'm2']);
    run(m, 'markets', true, [market('m1')]);
    expect(await marketIds(m)).toEqual(['m1']);
  });

  it('a market whose labels changed keeps only its new series', async () => {
    const m = createMetrics({ processMetrics: false });
    run(m, 'markets', true, [market('m1')]);
    run(m, 'markets', true, [market('m1', {}, { loan_asset: 'USDT' })]);
    const s = samples(await m.scrape(), 'lookout_market_utilization_ratio');
    expect(s.map((x) => x.labels.loan_asset)).toEqual(['USDT']);
  });

  it('a market reported by two polls stays until neither reports it', async () => {
    const m = createMetrics({ processMetrics: false });
    run(m, 'a', true, [market('m1'), market('m2')]);
    run(m, 'b', true, [market('m1')]);
    run(m, 'a', true, [market('m2')]);
    expect(await marketIds(m)).toEqual(['m1', 'm2']);
    run(m, 'b', true, []);
    expect(await marketIds(m)).toEqual(['m2']);
  });

  it('a vanished network loses its benchmark series; vanished position groups go too', async () => {
    const m = createMetrics({ processMetrics: false });
    m.setReadings('benchmarks', [benchmark('ethereum', 'USDC'), benchmark('base', 'USDC')], NOW);
    m.setReadings('positions', [position('p1', 'ethereum', 'aave', true, 1), position('p2', 'base', 'aave', false, 1)], NOW);
    m.setReadings('benchmarks', [benchmark('ethereum', 'USDC')], NOW);
    m.setReadings('positions', [position('p1', 'ethereum', 'aave', true, 1)], NOW);
    const text = await m.scrape();
    for (const name of ['lookout_benchmark_apy_ratio', 'lookout_benchmark_stale', 'lookout_benchmark_complete', 'lookout_benchmark_latest_day_timestamp_seconds']) {
      expect(new Set(samples(text, name).map((s) => s.labels.network))).toEqual(new Set(['ethereum']));
    }
    expect(samples(text, 'lookout_positions').map((s) => s.labels.chain)).toEqual(['ethereum']);
    expect(samples(text, 'lookout_positions_value_usd').map((s) => s.labels.chain)).toEqual(['ethereum']);
  });

  it('10,000 markets: set, then all but one vanish, and the scrape shrinks accordingly', async () => {
    const m = createMetrics({ processMetrics: false });
    const many = Array.from({ length: 10_000 }, (_, i) => market(`m${i}`, { utilization: i / 10_000 }));
    m.setReadings('markets', many, NOW);
    expect(samples(await m.scrape(), 'lookout_market_utilization_ratio')).toHaveLength(10_000);
    m.setReadings('markets', [many[1234]!], NOW);
    const left = samples(await m.scrape(), 'lookout_market_utilization_ratio');
    expect(left).toEqual([expect.objectContaining({ labels: expect.objectContaining({ market_id: 'm1234' }), value: 0.1234 })]);
  });
});

describe('setReadingsYielding: the same series as setReadings, with turns for the event loop while it reads', () => {
  it('exports what setReadings exports, and changes nothing before it ends', async () => {
    const readings = [
      ...Array.from({ length: 1000 }, (_, i) => market(`m${i}`, { utilization: i / 1000 })),
      ...Array.from({ length: 1000 }, (_, i) => position(`p${i}`, i % 2 ? 'ethereum' : 'base', 'aave', i % 3 === 0, i)),
      benchmark('ethereum', 'USDC'),
    ];
    const sync = createMetrics({ processMetrics: false });
    sync.setReadings('all', readings, NOW);
    const stepped = createMetrics({ processMetrics: false });
    stepped.setReadings('all', [market('gone')], NOW);
    const before = await stepped.scrape();
    let turns = 0;
    let midway: string | undefined;
    let stop = false;
    const tick = () => {
      turns++;
      if (turns === 3) void stepped.scrape().then((t) => (midway ??= t));
      if (!stop) setImmediate(tick);
    };
    setImmediate(tick);
    await stepped.setReadingsYielding('all', readings, NOW, 0);
    stop = true;
    expect(turns).toBeGreaterThanOrEqual(3);
    expect(midway).toBe(before);
    expect(await stepped.scrape()).toBe(await sync.scrape());
  });
});
