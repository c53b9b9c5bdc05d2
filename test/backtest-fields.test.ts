/**
 * A backtest decodes from stored history only the fields its rules read (src/rules/reading-fields.ts): replayed so
 * and with every field decoded, the same history gives the very same events, data errors and resolution parts —
 * over 5-minute buckets, sealed hourly chunks and the head, for every rule kind that judges markets or positions,
 * with select keys on labels and fields, annotations that read fields the kind does not, unreadable fields and a
 * poll whose runs are not recorded, and for stale_benchmark (benchmark days, looking back through history). The
 * fields only annotations read are decoded for the readings that are described (src/alerts/engine.ts `described`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replay, type ReplayOptions } from '../src/backtest/index.js';
import type { Reading } from '../src/model.js';
import { judgedFields, readingFields } from '../src/rules/reading-fields.js';
import type { Store } from '../src/store/index.js';
import { defaults, HOUR, market, MIN, rule, tempDirs, tempStore } from './alerts-helpers.js';

const T0 = Date.UTC(2025, 1, 3);
const END = T0 + 6 * HOUR;
/** Folded into buckets before this (two hours), every reading after it (the last hour in the head). */
const CUTOFF = T0 + 2 * HOUR;
const MARKETS = ['m1', 'm2', 'm3', 'm4'];

/** A deterministic pseudo-random number in [0, 1). */
function rand(...xs: number[]): number {
  let h = 2166136261;
  for (const x of xs) h = Math.imul(h ^ (x | 0), 16777619) ^ Math.imul(x / 4294967296, 2654435761);
  h = Math.imul(h ^ (h >>> 15), 2246822507);
  return ((h ^ (h >>> 13)) >>> 0) / 4294967296;
}

function markets(i: number, t: number): Reading[] {
  return MARKETS.map((id, e) => {
    const wave = Math.sin((i + 17 * e) / 9);
    const r = market(id, t - 5_000, {
      utilization: Math.round((0.86 + 0.1 * wave + 0.01 * rand(e, i)) * 1e6) / 1e6,
      borrow_apy: Math.round((0.05 + (rand(e, Math.floor(i / 20)) < 0.3 ? 0.04 : 0) + 0.002 * rand(e, i, 1)) * 1e6) / 1e6,
      supply_apy: Math.round(0.03 * rand(e, i, 2) * 1e6) / 1e6,
      total_borrowed: `${Math.floor(rand(e, i, 3) * 1e9)}000000000`,
      oracle_price_scaled: 3000 + (rand(e, Math.floor(i / 15), 4) < 0.2 ? 120 : 0) + rand(e, i, 5),
      service_price: 3000,
      oracle_last_update: t - 5_000 - (rand(e, Math.floor(i / 12), 6) < 0.25 ? 20 * MIN : MIN),
      lltv: e === 3 ? 0.77 : 0.86,
      block: 1_000 + i,
    });
    // Now and then the service sends m2's utilization unreadably (the shape carries the reason).
    if (e === 1 && i % 37 === 5) return { ...r, fields: { ...r.fields, utilization: null }, unreadable: { utilization: 'not a number' } };
    return r;
  });
}

function positions(i: number, t: number): Reading[] {
  return ['p1', 'p2', 'p3'].map((id, e) => ({
    kind: 'position' as const,
    entity: id,
    at: t - 2_000,
    labels: { wallet: `0xw${e}`, chain: 'base', protocol: 'morpho', asset: 'USDC', position_id: id, verified: String(e !== 0) },
    fields: { id, wallet: `0xw${e}`, chain: 'base', verified: e !== 0 || rand(e, i) < 0.5, value_usd: Math.round(rand(e, i, 9) * 2_000_00) / 100, apy: 0.04 },
  }));
}

/** Benchmark days of two networks, a poll every 10 minutes: days that age past the rule's max_age, stale or incomplete now and then. */
function benchmarks(i: number, t: number): Reading[] {
  return ['base/usd', 'eth/eth'].map((entity, e) => {
    const [network, code] = entity.split('/') as [string, string];
    const period = Math.floor((t + e * 2 * HOUR) / (4 * HOUR));
    const day = period * 4 * HOUR - e * 2 * HOUR - 30 * MIN;
    return {
      kind: 'benchmark' as const,
      entity,
      at: t - 3_000,
      labels: { network, code },
      fields: { network, code, day, isComplete: rand(e, period, 7) < 0.5, isStale: rand(e, i, 8) < 0.1, days: 7, tvl: Math.round(rand(e, i, 10) * 1e8) / 100 },
    };
  });
}

const rules = () => [
  rule({
    name: 'util',
    kind: 'utilization_above',
    threshold: 0.92,
    clear_below: 0.9,
    for: '3m',
    annotations: { summary: '{{market.collateral_asset_symbol}}/{{market.loan_asset_symbol}} {{utilization | pct}}; borrow {{borrow_apy | pct}}, {{total_borrowed}} borrowed' },
  }),
  rule({ name: 'jump', kind: 'apy_jump', field: 'borrow_apy', window: '20m', min_change: 0.02, annotations: { summary: '{{previous}} → {{value}} (supply {{supply_apy}})' } }),
  rule({ name: 'lag', kind: 'oracle_lag', max_lag: '10m', annotations: { summary: 'updated {{oracle_last_update}}, {{lag}} s ago' } }),
  rule({ name: 'dev', kind: 'price_deviation', max_deviation: 0.02, for: '2m' }),
  // Selected on a field (no label of that name) and on a label; a dotted field of a fixed object.
  rule({ name: 'lltv', kind: 'threshold', field: 'utilization', op: '>', value: 0.9, select: { lltv: '0.86', chain: 'base' } }),
  rule({ name: 'decimals', kind: 'threshold', field: 'market.loan_asset_decimals', op: '<', value: 6 }),
  rule({ name: 'unverified', kind: 'unverified_position', min_value_usd: 500, annotations: { summary: '{{wallet}} holds {{value_usd | usd}} (apy {{apy}})' } }),
  rule({ name: 'small', kind: 'threshold', reading: 'position', field: 'value_usd', op: '<', value: 300 }),
  rule({ name: 'stale', kind: 'stale_benchmark', max_age: '3h', incomplete_for: '20m', annotations: { summary: '{{reason}}: day {{day}} of {{network}} ({{tvl | usd}})' } }),
];

const dirs = tempDirs();
let store: Store;

beforeAll(() => {
  store = tempStore(dirs, 'history.db');
  for (let i = 0; T0 + i * MIN < END; i++) {
    const t = T0 + i * MIN + 30_000;
    const batch = markets(i, t);
    store.readings.savePoll('markets', batch, t);
    store.polls.record({ poll: 'markets', kind: 'metrics', ok: true, readings: batch, rejected: [], started_at: t - 1_000, finished_at: t });
    // The positions poll records no runs: its history is grouped by the time it was stored.
    if (i % 5 === 0) store.readings.savePoll('positions', positions(i, t + 10_000), t + 10_000);
    if (i % 10 === 0) {
      const days = benchmarks(i, t + 20_000);
      store.readings.savePoll('benchmarks', days, t + 20_000);
      store.polls.record({ poll: 'benchmarks', kind: 'benchmarks', ok: true, readings: days, rejected: [], started_at: t + 19_000, finished_at: t + 20_000 });
    }
  }
  store.readings.sealHistory(END);
  store.readings.downsample(CUTOFF);
});

afterAll(() => {
  store.close();
  dirs.cleanup();
});

const run = (decode: ReplayOptions['decode']) =>
  replay({ source: store, rules: rules(), alerting: { ...defaults.alerting, flap_threshold: 1_000 }, sourceDown: defaults.sourceDown, from: T0, to: END, includeSourceDown: true, decode });

describe('a backtest that decodes only the fields its rules read', () => {
  it('decodes fewer fields than every one', () => {
    const picked = readingFields(rules())!;
    // (`lag`, `previous`, `value`: names a template reads from the verdict, or from a field of that name where a verdict has none.)
    expect([...picked].sort()).toEqual([
      'apy', 'block', 'borrow_apy', 'chain', 'day', 'isComplete', 'isStale', 'lag', 'lltv', 'market', 'network', 'oracle_last_update', 'oracle_price_scaled',
      'previous', 'reason', 'service_price', 'supply_apy', 'total_borrowed', 'tvl', 'utilization', 'value', 'value_usd', 'verified', 'wallet',
    ]);
    const one = readingFields([rules()[0]!])!;
    expect([...one].sort()).toEqual(['block', 'borrow_apy', 'market', 'total_borrowed', 'utilization']);
    // A reading replayed so holds those fields only.
    const [r] = store.readings.iterateHistory(END - HOUR, END, { fields: one });
    expect(Object.keys(r!.fields).sort()).toEqual(['block', 'borrow_apy', 'market', 'total_borrowed', 'utilization']);
    // What the rule judges by: not what only its annotations read.
    const judged = judgedFields([rules()[0]!])!;
    expect([...judged].sort()).toEqual(['block', 'utilization']);
    expect([...judgedFields(rules())!].sort()).toEqual(['block', 'borrow_apy', 'chain', 'day', 'isComplete', 'isStale', 'lltv', 'market', 'oracle_last_update', 'oracle_price_scaled', 'service_price', 'utilization', 'value_usd', 'verified']);
    // Read with the rest to describe: those fields only, until described, then as read with every field the rule reads.
    const [lazy] = store.readings.iterateHistory(END - HOUR, END, { fields: judged, describe: one });
    expect(Object.keys(lazy!.fields).sort()).toEqual(['block', 'utilization']);
    expect(lazy!.stored).toBeDefined();
    const whole = store.readings.described(lazy!, one);
    // Decoded into the reading itself, once: its stored row let go.
    expect(whole).toBe(lazy);
    expect(whole.stored).toBeUndefined();
    expect(whole).toEqual(r);
    // A reading without its stored row is as it is.
    expect(store.readings.described(r!, new Set(['utilization']))).toBe(r);
    expect(Object.keys(r!.fields).sort()).toEqual(['block', 'borrow_apy', 'market', 'total_borrowed', 'utilization']);
  });

  it('replays the same events, data errors and resolution parts as with every field decoded, over buckets, chunks and the head', () => {
    const all = run('all');
    const picked = run('rules');
    // The history is what the test says it is: buckets, sealed chunks and head rows; every rule had something to do.
    expect(all.resolution.map((p) => p.resolution)).toEqual(['5m buckets', 'raw']);
    const n = (sql: string) => (store.db.prepare(sql).get() as { n: number }).n;
    expect(n(`SELECT count(*) AS n FROM reading_bucket_chunks`)).toBeGreaterThan(0);
    expect(n(`SELECT count(*) AS n FROM reading_history_chunks`)).toBeGreaterThan(0);
    expect(n(`SELECT count(*) AS n FROM reading_history`)).toBeGreaterThan(0);
    expect(all.grouping).toEqual(['poll_runs', 'timestamps']);
    const fired = new Set(all.events.filter((e) => e.type === 'firing').map((e) => e.alert.rule));
    expect([...fired].sort()).toEqual(['dev', 'jump', 'lag', 'lltv', 'small', 'stale', 'unverified', 'util']);
    for (const [part, from, to] of [['buckets', T0, CUTOFF], ['raw', CUTOFF, END]] as const) {
      const stale = all.events.filter((e) => e.alert.rule === 'stale' && e.at >= from && e.at < to);
      expect(new Set(stale.map((e) => e.type)), part).toEqual(new Set(['firing', 'resolved']));
    }
    expect(all.dataErrors).toBeGreaterThan(0);
    for (const [part, from, to] of [['buckets', T0, CUTOFF], ['raw', CUTOFF, END]] as const) {
      expect(all.events.filter((e) => e.at >= from && e.at < to && e.type === 'firing').length, part).toBeGreaterThan(5);
    }

    expect(picked.events.length).toBe(all.events.length);
    picked.events.forEach((e, i) => expect(e, `event ${i}`).toEqual(all.events[i]));
    expect({ ...picked, events: [] }).toEqual({ ...all, events: [] });
  });
});
