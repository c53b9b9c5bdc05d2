import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { startSimulator, type Simulator } from '../src/simulator/index.js';
import { parseQuery } from '../src/simulator/graphql-parse.js';
import { unscaledOraclePrice } from '../src/simulator/markets.js';
import { gql } from './simulator-helpers.js';

const T0 = Date.UTC(2026, 2, 10, 12, 0, 30);
const NOW_SEC = T0 / 1000;

describe('GraphQL metrics over HTTP', () => {
  let sim: Simulator;
  const clock = new ManualClock(T0);
  beforeAll(async () => {
    sim = await startSimulator({ clock, formats: 'canonical', markets: 25 });
  });
  afterAll(() => sim.close());

  it.each(['/yields/graphql', '/api/graphql'])('%s returns only the selected fields', async (path) => {
    const a = await gql(sim, 'query Recent($limit: Int, $where: metrics_bool_exp) { metrics(limit: $limit, where: $where) { market_id utilization market { chain loan_asset_symbol } } }', { limit: 10, where: { created_at: { _gt: '2026-03-10' } } }, path);
    expect(a.status).toBe(200);
    expect(a.json.errors).toBeUndefined();
    const rows = a.json.data.metrics;
    expect(rows).toHaveLength(10);
    for (const r of rows) {
      expect(Object.keys(r)).toEqual(['market_id', 'utilization', 'market']);
      expect(Object.keys(r.market)).toEqual(['chain', 'loan_asset_symbol']);
      expect(r.market_id).toMatch(/^morpho-[a-z]+-0x[0-9a-f]{40}$/);
    }
  });

  it('serves a time series per market: the newest row is the current truth', async () => {
    const a = await gql(sim, '{ metrics(where: {created_at: {_gt: "2026-03-10T11:55:00Z"}}) { market_id created_at timestamp utilization borrow_apy oracle_price service_price market { loan_asset_decimals collateral_asset_decimals } } }');
    const rows = a.json.data.metrics;
    // now (12:00:30) and the samples at 12:00, 11:59, 11:58, 11:57, 11:56 for each of the 25 markets.
    expect(rows).toHaveLength(25 * 6);
    const newest = new Map<string, any>();
    for (const r of rows) {
      const cur = newest.get(r.market_id);
      if (!cur || r.timestamp > cur.timestamp) newest.set(r.market_id, r);
      expect(Date.parse(r.created_at) / 1000).toBeGreaterThan(Date.UTC(2026, 2, 10, 11, 55) / 1000);
    }
    const truth = sim.world.metricsAt(T0);
    expect(newest.size).toBe(25);
    for (const t of truth) {
      const r = newest.get(t.market_id);
      expect(r.created_at).toBe(new Date(T0).toISOString());
      expect(r.utilization).toBe(t.utilization);
      expect(r.oracle_price).toBe(t.oracle_price);
      expect(BigInt(r.oracle_price) > 2n ** 53n).toBe(true);
      // service_price is the oracle price unscaled, within the oracle's small standing bias.
      expect(Math.abs(unscaledOraclePrice({ ...t, oracle_price: r.oracle_price }) / r.service_price - 1)).toBeLessThan(0.005);
    }
  });

  it('respects created_at _gt/_lt windows, market_id _eq and limit, with literals', async () => {
    const id = sim.world.markets[3]!.marketId;
    const a = await gql(sim, `{ metrics(limit: 4, where: {market_id: {_eq: "${id}"}, created_at: {_gt: "2026-03-10T10:00:00Z", _lt: "2026-03-10T11:00:00Z"}}) { market_id created_at } }`);
    const rows = a.json.data.metrics;
    expect(rows.map((r: any) => r.created_at)).toEqual(['2026-03-10T10:59:00.000Z', '2026-03-10T10:58:00.000Z', '2026-03-10T10:57:00.000Z', '2026-03-10T10:56:00.000Z']);
    expect(rows.every((r: any) => r.market_id === id)).toBe(true);
    const none = await gql(sim, '{ metrics(where: {market_id: {_eq: "morpho-base-0xnope"}}) { id } }');
    expect(none.json).toEqual({ data: { metrics: [] } });
  });

  it('answers the current rows only when no created_at window is given', async () => {
    const a = await gql(sim, '{ metrics { market_id } }');
    // now (12:00:30) plus the 12:00:00 sample.
    expect(a.json.data.metrics).toHaveLength(50);
  });

  it.each([
    ['a syntax error', '{ metrics(limit: 5) { id ', /Syntax Error/],
    ['an unknown field', '{ metrics { id utilisation } }', /Cannot query field "utilisation"/],
    ['an unknown nested field', '{ metrics { market { symbol } } }', /Cannot query field "symbol" on type "markets"/],
    ['an unknown root field', '{ markets { id } }', /Cannot query field "markets"/],
    ['an unknown where field', '{ metrics(where: {chain: {_eq: "base"}}) { id } }', /chain/],
    ['an undefined variable', 'query { metrics(limit: $n) { id } }', /Variable "\$n" is not defined/],
    ['a missing required variable', 'query($n: Int!) { metrics(limit: $n) { id } }', /required type "Int!"/],
    ['a bad date', '{ metrics(where: {created_at: {_gt: "yesterday"}}) { id } }', /invalid value/],
    ['market without a selection', '{ metrics { market } }', /must have a selection/],
    ['a fragment', '{ metrics { ...F } }', /Fragments are not supported/],
  ])('answers %s with HTTP 200, errors and no data', async (_name, query, message) => {
    const a = await gql(sim, query);
    expect(a.status).toBe(200);
    expect(a.json.data).toBeUndefined();
    expect(a.json.errors).toHaveLength(1);
    expect(a.json.errors[0].message).toMatch(message);
  });

  it('answers 400 to a body without a query string', async () => {
    const res = await fetch(sim.url + '/api/graphql', { method: 'POST', headers: { 'x-api-key': 'sim-key' }, body: 'not json' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).errors[0].message).toEqual(expect.any(String));
  });

  it('caps rows at maxGraphqlRows whatever limit says', async () => {
    const small = await startSimulator({ clock, maxGraphqlRows: 7 });
    try {
      const a = await gql(small, '{ metrics(limit: 1000, where: {created_at: {_gt: "2026-03-01"}}) { id } }');
      expect(a.json.data.metrics).toHaveLength(7);
    } finally {
      await small.close();
    }
  });

  it('sees every field in the interface list', async () => {
    const a = await gql(sim, '{ metrics(limit: 1) { block id borrow_apy supply_apy utilization service_price oracle_price total_borrowed total_borrowed_usd total_supplied total_supplied_usd market_id created_at oracle_last_update timestamp market { collateral_asset collateral_asset_decimals chain collateral_asset_symbol loan_asset loan_asset_decimals loan_asset_symbol market_address oracle } } }');
    const r = a.json.data.metrics[0];
    expect(r.timestamp).toBeLessThan(NOW_SEC);
    expect(r.oracle_last_update).toBeLessThanOrEqual(r.timestamp);
    expect(r.utilization).toBeGreaterThan(0.4);
    expect(r.utilization).toBeLessThan(0.9);
    expect(r.borrow_apy).toBeGreaterThan(r.supply_apy);
    expect(r.total_borrowed).toMatch(/^\d+$/);
    expect(BigInt(r.total_borrowed) < BigInt(r.total_supplied)).toBe(true);
    expect([6, 8, 18]).toContain(r.market.loan_asset_decimals);
  });
});

describe('GraphQL parser', () => {
  it.each([
    ['shorthand', '{ metrics { id } }'],
    ['named with variables and defaults', 'query Q($limit: Int = 5, $w: metrics_bool_exp!) { metrics(limit: $limit, where: $w) { id } }'],
    ['comments and commas', '# leading\n{ metrics(limit: 1,) { id, market_id # trailing\n } }'],
    ['aliases', '{ m: metrics { when: created_at } }'],
    ['escapes and block strings', '{ metrics(where: {market_id: {_eq: "a\\"b\\u0041"}}) { id } }'],
    ['lists and objects', '{ metrics(where: {market_id: {_in: ["a", "b"]}}, order_by: [{timestamp: desc}]) { id } }'],
  ])('parses %s', (_name, src) => {
    const op = parseQuery(src);
    expect(op.selections[0]!.selections!.length).toBeGreaterThan(0);
  });

  it('reads literal values exactly', () => {
    const op = parseQuery('query($x: Int = 3) { metrics(a: -1.5e2, b: "s\\n", c: true, d: null, e: ENUM, f: [1, 2], g: {h: $x}) { id } }');
    expect(op.variables).toEqual([{ name: 'x', type: 'Int', defaultValue: { kind: 'int', value: 3 } }]);
    expect(op.selections[0]!.args.map((a) => a.value)).toEqual([
      { kind: 'float', value: -150 },
      { kind: 'string', value: 's\n' },
      { kind: 'boolean', value: true },
      { kind: 'null' },
      { kind: 'enum', value: 'ENUM' },
      { kind: 'list', values: [{ kind: 'int', value: 1 }, { kind: 'int', value: 2 }] },
      { kind: 'object', fields: [{ name: 'h', value: { kind: 'variable', name: 'x' } }] },
    ]);
  });

  it.each([
    ['unclosed', '{ metrics { id }'],
    ['empty selection', '{ metrics { } }'],
    ['unterminated string', '{ metrics(where: "x) { id } }'],
    ['stray token', '{ metrics { id } } }'],
    ['bad character', '{ metrics { id % } }'],
    ['mutation', 'mutation { metrics { id } }'],
  ])('refuses %s', (_name, src) => {
    expect(() => parseQuery(src)).toThrow();
  });
});
