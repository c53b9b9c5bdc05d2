import { describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { DEFAULT_NETWORKS, getScenario, scenarios, startSimulator, World } from '../src/simulator/index.js';
import { unscaledOraclePrice } from '../src/simulator/markets.js';
import { call, gql, normalize } from './simulator-helpers.js';

const T0 = Date.UTC(2026, 2, 10, 12, 0, 0); // noon UTC: today's benchmark day is complete in a calm world

const worldOf = (scenario: string, timeScale = 1, startedAt = T0) =>
  new World({ seed: 1, markets: 40, positions: 300, networks: DEFAULT_NETWORKS, scenario: getScenario(scenario), startedAt, timeScale });

type Probe = (w: World, now: number, calm: World) => boolean;

const cache = new WeakMap<World, Map<number, ReturnType<World['metricsAt']>>>();
/** world.metricsAt, computed once per (world, time): several probes read the same moment. */
function metricsAt(w: World, now: number) {
  let m = cache.get(w);
  if (!m) cache.set(w, (m = new Map()));
  let rows = m.get(now);
  if (!rows) m.set(now, (rows = w.metricsAt(now)));
  return rows;
}

function newestDay(w: World, network: string, now: number) {
  const { first, count, firstHistoryDay } = w.benchmarkDayStarts(network, now);
  return w.benchmarkDay(network, 'usd', first + (count - 1) * 86_400, firstHistoryDay, now);
}

/** One probe per effect kind: true while the world shows what that kind of rule looks for. */
const probes: Record<string, Probe> = {
  utilization_spike: (w, now) => metricsAt(w, now).some((r) => r.utilization > 0.95),
  apy_jump: (w, now, calm) => {
    const base = metricsAt(calm, now);
    return metricsAt(w, now).some((r, i) => r.utilization <= 0.9 && r.borrow_apy - base[i]!.borrow_apy > 0.02 && r.borrow_apy > base[i]!.borrow_apy * 1.5);
  },
  oracle_freeze: (w, now) => metricsAt(w, now).some((r) => r.timestamp - r.oracle_last_update > 20),
  unverified_positions: (w, now) => w.positionsAt(now).some((p) => !p.verified && p.value_usd > 10_000),
  benchmark_stale: (w, now) => w.networks.some((n) => newestDay(w, n.name, now).isStale),
  benchmark_incomplete: (w, now) => w.networks.some((n) => !newestDay(w, n.name, now).isComplete),
  price_deviation: (w, now) => metricsAt(w, now).some((r) => Math.abs(unscaledOraclePrice(r) / r.service_price - 1) > 0.02),
};
/** Seconds an effect needs before its probe can see it (an oracle's lag has to grow). */
const settle: Record<string, number> = { oracle_freeze: 25 };

describe('scenario registry', () => {
  it('lists every scenario with a description and a timeline', () => {
    expect(scenarios.map((s) => s.name)).toEqual(['calm', 'utilization_spike', 'apy_jump', 'oracle_stale', 'unverified', 'benchmark_stale', 'price_deviation', 'flaky', 'incidents', 'demo']);
    for (const s of scenarios) {
      expect(s.description.length).toBeGreaterThan(10);
      if (s.name !== 'calm') expect(s.timeline.length).toBeGreaterThan(0);
    }
    expect(() => getScenario('nope')).toThrow(/known: calm/);
  });

  it('makes demo fire every rule kind within 20 s and resolve all of it by 55 s', () => {
    const demo = scenarios.find((s) => s.name === 'demo')!;
    expect(new Set(demo.timeline.map((e) => e.effect))).toEqual(new Set(Object.keys(probes)));
    expect(Math.max(...demo.timeline.map((e) => e.from))).toBeLessThanOrEqual(20);
    expect(Math.max(...demo.timeline.map((e) => e.to ?? Infinity))).toBeLessThanOrEqual(55);
    expect(Math.min(...demo.timeline.map((e) => e.to ?? Infinity))).toBeLessThanOrEqual(40);
  });
});

const moving = scenarios.filter((s) => s.timeline.length > 0 && s.name !== 'flaky');
const cases = moving.flatMap((s) => s.timeline.map((e) => ({ scenario: s.name, ...e })));

describe('scenarios move the world when their timeline says', () => {
  const calm = worldOf('calm');
  it.each(cases)('$scenario: $effect from $from s to $to s', ({ scenario, effect, from, to, repeatEvery }) => {
    const w = worldOf(scenario);
    const probe = probes[effect]!;
    const at = (sec: number) => T0 + sec * 1000;
    const lead = settle[effect] ?? 2;
    expect(probe(w, at(0), calm)).toBe(false);
    expect(probe(w, at(from - 1), calm)).toBe(false);
    expect(probe(w, at(from + lead), calm)).toBe(true);
    expect(probe(w, at(to! - 1), calm)).toBe(true);
    expect(probe(w, at(to! + 1), calm)).toBe(false);
    if (repeatEvery) expect(probe(w, at(from + repeatEvery + lead), calm)).toBe(true);
  });

  it('freezes oracle_last_update at the start of the window, then lets it move again', () => {
    const w = worldOf('oracle_stale');
    const i = 5;
    const last = (sec: number) => w.metrics(i, T0 / 1000 + sec).oracle_last_update;
    const frozen = last(31);
    expect(last(600)).toBe(frozen);
    expect(last(1829)).toBe(frozen);
    expect(frozen).toBeLessThanOrEqual(T0 / 1000 + 30);
    expect(last(1835)).toBeGreaterThan(T0 / 1000 + 1820);
  });

  it('moves nothing past the thresholds in the calm world over a week', () => {
    const w = worldOf('calm');
    for (let now = T0; now < T0 + 7 * 86_400_000; now += 61 * 60_000) {
      for (const [kind, probe] of Object.entries(probes)) {
        if (kind === 'benchmark_incomplete') continue; // today is incomplete for the first 2 h of every day, by design
        expect(probe(w, now, w), `${kind} at ${new Date(now).toISOString()}`).toBe(false);
      }
      // no borrow-APY jump of 2 points and 50% over 10 minutes
      const before = metricsAt(w, now - 600_000);
      const jumped = metricsAt(w, now).filter((r, i) => r.borrow_apy - before[i]!.borrow_apy >= 0.02 && r.borrow_apy >= before[i]!.borrow_apy * 1.5);
      expect(jumped).toEqual([]);
    }
  });

  it('keeps today incomplete only while it is being indexed', () => {
    const w = worldOf('calm');
    const midnight = Date.UTC(2026, 2, 11);
    expect(newestDay(w, 'base', midnight + 3_600_000).isComplete).toBe(false);
    expect(newestDay(w, 'base', midnight + 3 * 3_600_000).isComplete).toBe(true);
    expect(newestDay(w, 'base', midnight + 3 * 3_600_000).timestamp).toBe(midnight / 1000);
  });

  it('stretches the timeline with timeScale, so a week replays several episodes', () => {
    const w = worldOf('utilization_spike', 60); // 30 s → 30 min, every hour → every 60 h
    let episodes = 0;
    let inside = false;
    for (let now = T0; now < T0 + 7 * 86_400_000; now += 15 * 60_000) {
      const spiking = probes.utilization_spike!(w, now, w);
      if (spiking && !inside) episodes++;
      inside = spiking;
    }
    expect(episodes).toBe(3);
    expect(probes.utilization_spike!(w, T0 + 29 * 60_000, w)).toBe(false);
    expect(probes.utilization_spike!(w, T0 + 31 * 60_000, w)).toBe(true);
  });
});

describe('demo scenario over HTTP', () => {
  it('shows every rule kind at t=30 s and none at t=60 s', async () => {
    const clock = new ManualClock(T0);
    const sim = await startSimulator({ clock, scenario: 'demo' });
    try {
      const look = async () => {
        const g = normalize((await gql(sim, '{ metrics(limit: 40) { market_id utilization borrow_apy oracle_price service_price oracle_last_update timestamp market { loan_asset_decimals collateral_asset_decimals } } }')).json) as any;
        const positions = (await call(sim.url + '/api/v1/positions?limit=500')).json.data.map((p: any) => normalize(p));
        const linea = (await call(`${sim.catalogUrl}/api/catalog/historical-benchmarks/linea?code=usd&fromTimestamp=${T0 / 1000 - 10 * 86_400}`)).json.data;
        const sonic = (await call(`${sim.catalogUrl}/api/catalog/historical-benchmarks/sonic?code=eth&fromTimestamp=${T0 / 1000 - 10 * 86_400}`)).json.data;
        const rows: any[] = g.data.metrics;
        return {
          utilization: rows.some((r) => r.utilization > 0.95),
          apy: rows.some((r) => r.utilization < 0.9 && r.borrow_apy > 0.08),
          oracle: rows.some((r) => r.timestamp - r.oracle_last_update > 15),
          deviation: rows.some((r) => Math.abs(Number(r.oracle_price) / 10 ** (36 + r.market.loan_asset_decimals - r.market.collateral_asset_decimals) / r.service_price - 1) > 0.02),
          unverified: positions.some((p: any) => p.verified === false && p.value_usd > 10_000),
          stale: linea[linea.length - 1].isStale === true && linea[linea.length - 1].timestamp <= T0 / 1000 - 3 * 86_400 + 86_400,
          incomplete: sonic[sonic.length - 1].isComplete === false,
        };
      };
      const none = { utilization: false, apy: false, oracle: false, deviation: false, unverified: false, stale: false, incomplete: false };
      expect(await look()).toEqual(none);
      clock.set(T0 + 30_000);
      expect(await look()).toEqual({ utilization: true, apy: true, oracle: true, deviation: true, unverified: true, stale: true, incomplete: true });
      clock.set(T0 + 60_000);
      expect(await look()).toEqual(none);
    } finally {
      await sim.close();
    }
  });
});
