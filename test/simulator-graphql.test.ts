import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { startSimulator, type Simulator } from '../src/simulator/index.js';
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
    ['an unknown fragment', '{ metrics { ...F } }', /Unknown fragment "F"/],
    ['a wrong argument type', '{ metrics(limit: "5") { id } }', /Int cannot represent non-integer value: "5"/],
    ['a wrong variable type', 'query($n: String) { metrics(limit: $n) { id } }', /Variable "\$n" of type "String" used in position expecting type "Int"/],
    ['a mutation', 'mutation { metrics { id } }', /Schema is not configured to execute mutation operation/],
    ['two operations and no operationName', 'query A { metrics { id } } query B { metrics { id } }', /Must provide operation name/],
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

describe('GraphQL as the reference implementation (graphql-js) reads it', () => {
  let sim: Simulator;
  const clock = new ManualClock(T0);
  beforeAll(async () => {
    sim = await startSimulator({ clock, formats: 'canonical', markets: 5 });
  });
  afterAll(() => sim.close());
  const id = () => sim.world.markets[2]!.marketId;

  it('answers under each alias, with the aliased fields', async () => {
    const a = await gql(sim, '{ m: metrics(limit: 2) { when: created_at util: utilization inner: market { c: chain } } n: metrics(limit: 1) { id } }');
    expect(Object.keys(a.json.data)).toEqual(['m', 'n']);
    expect(Object.keys(a.json.data.m[0])).toEqual(['when', 'util', 'inner']);
    expect(a.json.data.m[0].when).toBe(new Date(T0).toISOString());
    expect(Object.keys(a.json.data.m[0].inner)).toEqual(['c']);
    expect(a.json.data.n).toHaveLength(1);
  });

  it('applies a variable default, and a given variable over it', async () => {
    const q = 'query Q($limit: Int = 3, $w: metrics_bool_exp = {created_at: {_gt: "2026-03-10"}}) { metrics(limit: $limit, where: $w) { id } }';
    expect((await gql(sim, q)).json.data.metrics).toHaveLength(3);
    expect((await gql(sim, q, { limit: 7 })).json.data.metrics).toHaveLength(7);
  });

  it('reads a block string argument', async () => {
    const a = await gql(sim, `{ metrics(where: {market_id: {_eq: """${id()}"""}}) { market_id } }`);
    expect(a.json.data.metrics.map((r: any) => r.market_id)).toEqual([id(), id()]);
  });

  it('expands named and inline fragments and honours @skip / @include', async () => {
    const q = 'query($bare: Boolean!) { metrics(limit: 1) { ...Ids ... on metrics { utilization } market @skip(if: $bare) { chain } block @include(if: $bare) } } fragment Ids on metrics { id market_id }';
    const full = await gql(sim, q, { bare: false });
    expect(Object.keys(full.json.data.metrics[0])).toEqual(['id', 'market_id', 'utilization', 'market']);
    const bare = await gql(sim, q, { bare: true });
    expect(Object.keys(bare.json.data.metrics[0])).toEqual(['id', 'market_id', 'utilization', 'block']);
  });

  it('runs the operation operationName names', async () => {
    const res = await fetch(sim.url + '/api/graphql', {
      method: 'POST',
      headers: { 'x-api-key': 'sim-key', 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'query A { metrics(limit: 1) { id } } query B { metrics(limit: 2) { id } }', operationName: 'B' }),
    });
    expect(((await res.json()) as any).data.metrics).toHaveLength(2);
  });

  it('answers introspection from the schema written from the interface', async () => {
    const a = await gql(sim, '{ __type(name: "metrics") { fields { name } } }');
    const names = a.json.data.__type.fields.map((f: any) => f.name);
    expect(names).toEqual(['block', 'id', 'borrow_apy', 'supply_apy', 'utilization', 'service_price', 'oracle_price', 'total_borrowed', 'total_borrowed_usd', 'total_supplied', 'total_supplied_usd', 'market_id', 'created_at', 'oracle_last_update', 'timestamp', 'market']);
  });

  it('reports a bad variable value with its path, and no data', async () => {
    const a = await gql(sim, 'query($w: metrics_bool_exp) { metrics(where: $w) { id } }', { w: { market_id: { _eq: 5, _ne: 'x' } } });
    expect(a.json.data).toBeUndefined();
    const messages = a.json.errors.map((e: any) => e.message).join('\n');
    expect(messages).toMatch(/Variable "\$w" got invalid value 5 at "w.market_id._eq"; String cannot represent a non string value: 5/);
    expect(messages).toMatch(/Field "_ne" is not defined by type "String_comparison_exp"/);
  });
});
