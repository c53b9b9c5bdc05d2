/**
 * SPEC §6: a rule that needs a field the service sent unreadably has no data for that entity this time — its alert
 * keeps its state (no breach, no resolve, not absent) and the data error names the field — while rules that do not
 * need the field go on. One row per rule kind, each firing first, then fed a reading whose needed field is unreadable.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { fingerprint } from '../src/alerts/lifecycle.js';
import type { Reading } from '../src/model.js';
import { drive, engineFor, eventList, HOUR, market, MIN, outcome, rule, T0, tempDirs, tempStore } from './alerts-helpers.js';

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

const position = (at: number, fields: Record<string, unknown>): Reading => ({
  kind: 'position',
  entity: 'pos-1',
  at,
  labels: { chain: 'base', protocol: 'morpho', wallet: '0xw', position_id: 'pos-1' },
  fields: { id: 'pos-1', wallet: '0xw', chain: 'base', protocol: 'morpho', asset: 'USDC', value_usd: 1_000_000, verified: false, ...fields },
});

const benchmark = (at: number, fields: Record<string, unknown>): Reading => ({
  kind: 'benchmark',
  entity: 'base/usd',
  at,
  labels: { network: 'base', code: 'usd' },
  fields: { network: 'base', code: 'usd', day: at - 2 * HOUR, isComplete: true, isStale: true, days: 7, ...fields },
});

/** Marks `field` of a reading unreadable the way the client does: the value unknown, the reason in `unreadable`. */
const unreadable = (r: Reading, field: string, path: string, reason: string): Reading => ({
  ...r,
  fields: { ...r.fields, [path]: null },
  unreadable: { [field]: reason },
});

interface Row {
  name: string;
  rule: Record<string, unknown>;
  poll: [string, string];
  /** Readings before `firing` is checked (oldest first, one poll each). */
  fire: Reading[];
  /** The reading whose needed field is unreadable. */
  blind: Reading;
  reason: string;
}

const T1 = T0 + HOUR;
const rows: Row[] = [
  {
    name: 'utilization_above (utilization)',
    rule: { kind: 'utilization_above', threshold: 0.95 },
    poll: ['markets', 'metrics'],
    fire: [market('m1', T1, { utilization: 0.97 })],
    blind: unreadable(market('m1', T1 + MIN), 'utilization', 'utilization', 'not_a_number'),
    reason: 'utilization unreadable (not_a_number)',
  },
  {
    name: 'apy_jump (its field)',
    rule: { kind: 'apy_jump', window: '1h', min_change: 0.02 },
    poll: ['markets', 'metrics'],
    fire: [market('m1', T0, { borrow_apy: 0.05 }), market('m1', T1, { borrow_apy: 0.09 })],
    blind: unreadable(market('m1', T1 + MIN), 'borrow_apy', 'borrow_apy', 'not_a_number'),
    reason: 'borrow_apy unreadable (not_a_number)',
  },
  {
    name: 'oracle_lag (oracle_last_update)',
    rule: { kind: 'oracle_lag', max_lag: '10m' },
    poll: ['markets', 'metrics'],
    fire: [market('m1', T1, { oracle_last_update: T0 })],
    blind: unreadable(market('m1', T1 + MIN), 'oracle_last_update', 'oracle_last_update', 'not_a_time'),
    reason: 'oracle_last_update unreadable (not_a_time)',
  },
  {
    name: 'price_deviation (oracle_price)',
    rule: { kind: 'price_deviation', max_deviation: 0.01 },
    poll: ['markets', 'metrics'],
    fire: [market('m1', T1, { oracle_price_scaled: 3100, service_price: 3000 })],
    blind: unreadable(market('m1', T1 + MIN, { service_price: 3000 }), 'oracle_price', 'oracle_price_scaled', 'needs_decimals'),
    reason: 'oracle_price unreadable (needs_decimals)',
  },
  {
    name: 'threshold (its field)',
    rule: { kind: 'threshold', reading: 'market', field: 'supply_apy', op: '>', value: 0.1 },
    poll: ['markets', 'metrics'],
    fire: [market('m1', T1, { supply_apy: 0.2 })],
    blind: unreadable(market('m1', T1 + MIN), 'supply_apy', 'supply_apy', 'not_a_number'),
    reason: 'supply_apy unreadable (not_a_number)',
  },
  {
    name: 'unverified_position (verified)',
    rule: { kind: 'unverified_position', min_value_usd: 1000 },
    poll: ['positions', 'positions'],
    fire: [position(T1, {})],
    blind: unreadable(position(T1 + MIN, {}), 'verified', 'verified', 'not_a_boolean'),
    reason: 'verified unreadable (not_a_boolean)',
  },
  {
    // Without the engine's check this one would resolve: an unknown isStale on a recent day reads as "not stale".
    name: 'stale_benchmark (isStale)',
    rule: { kind: 'stale_benchmark' },
    poll: ['benchmarks', 'benchmarks'],
    fire: [benchmark(T1, {})],
    blind: unreadable(benchmark(T1 + MIN, {}), 'isStale', 'isStale', 'not_a_boolean'),
    reason: 'isStale unreadable (not_a_boolean)',
  },
];

describe('a field the service sent unreadably', () => {
  it.each(rows)('$name: the firing alert keeps its state and the data error names the field', (row) => {
    const store = tempStore(dirs);
    const r = rule({ name: 'r', severity: 'warning', ...row.rule });
    const engine = engineFor(store, [r]);
    const [poll, kind] = row.poll;
    for (const reading of row.fire) drive(store, engine, outcome(poll, kind, [reading], reading.at));
    const fp = fingerprint('r', row.fire[0]!.entity);
    expect(engine.repo.get(fp)?.state).toBe('firing');
    const before = engine.repo.get(fp)!;

    // Three polls in a row: neither a resolve nor absence (absent_for is 3), whatever the kind makes of a null.
    for (let i = 0; i < 3; i++) {
      const blind = { ...row.blind, at: row.blind.at + i * MIN };
      const res = drive(store, engine, outcome(poll, kind, [blind], blind.at));
      expect(eventList(res)).toEqual([]);
      expect(res.dataErrors).toEqual([{ rule: 'r', entity: row.fire[0]!.entity, reason: row.reason }]);
    }
    const after = engine.repo.get(fp)!;
    expect(after).toMatchObject({ state: 'firing', firing_since: before.firing_since, absent_polls: 0 });
    store.close();
  });

  it('leaves the rules that do not need the field alone: utilization fires while oracle_price is unreadable', () => {
    const store = tempStore(dirs);
    const engine = engineFor(store, [
      rule({ name: 'util', kind: 'utilization_above', severity: 'critical', threshold: 0.95 }),
      rule({ name: 'dev', kind: 'price_deviation', severity: 'warning', max_deviation: 0.01 }),
    ]);
    const reading = unreadable(market('m1', T1, { utilization: 0.99, service_price: 3000 }), 'oracle_price', 'oracle_price_scaled', 'not_a_price');
    const res = drive(store, engine, outcome('markets', 'metrics', [reading], T1));
    expect(eventList(res)).toEqual(['firing util/m1']);
    expect(res.dataErrors).toEqual([{ rule: 'dev', entity: 'm1', reason: 'oracle_price unreadable (not_a_price)' }]);
    store.close();
  });
});
