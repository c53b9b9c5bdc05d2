import { describe, expect, it } from 'vitest';
import { benchmarkReading } from '../src/source/parse/benchmarks.js';
import { listReadings } from '../src/source/parse/lists.js';
import { marketReadings, marketsWithoutDecimals } from '../src/source/parse/markets.js';
import { performanceReadings } from '../src/source/parse/performance.js';
import { parseJsonExact } from '../src/source/json.js';

const POLL = Date.UTC(2026, 10, 22, 12, 0, 0);
const sec = (ms: number) => ms / 1000;

function metricsRow(over: Record<string, unknown> = {}, market: Record<string, unknown> = {}) {
  return {
    id: '1',
    block: 100,
    market_id: 'morpho-base-0xabc',
    utilization: 0.5,
    borrow_apy: 0.05,
    supply_apy: 0.02,
    oracle_price: '3022232490411010000000000001',
    service_price: 3022.1,
    total_borrowed: '78355826120811',
    total_supplied: '143857416635568',
    total_borrowed_usd: 78383673.34,
    total_supplied_usd: 143908542.75,
    created_at: new Date(POLL - 60_000).toISOString(),
    oracle_last_update: sec(POLL - 120_000),
    timestamp: sec(POLL - 62_000),
    market: {
      chain: 'base',
      loan_asset: '0xloan',
      loan_asset_symbol: 'USDC',
      loan_asset_decimals: 6,
      collateral_asset: '0xcoll',
      collateral_asset_symbol: 'WETH',
      collateral_asset_decimals: 18,
      market_address: '0xabc',
      oracle: '0xoracle',
      ...market,
    },
    ...over,
  };
}

describe('market readings', () => {
  it('reads as if it learned every row itself when told how many rows were learned already (the metrics poll asks about markets without decimals first)', () => {
    // Two rows per market, told apart in a member (the last readable one wins); b and c without decimals until the
    // rows the poll asked about on their own, appended after the ones learned.
    const rows = [
      metricsRow({ market_id: 'a', timestamp: sec(POLL - 70_000) }, { chain: 'base' }),
      metricsRow({ market_id: 'a' }, { chain: 'Base' }),
      metricsRow({ market_id: 'b' }, { loan_asset_decimals: null }),
      metricsRow({ market_id: 'c' }, { collateral_asset_decimals: 'x' }),
    ];
    const asked = [metricsRow({ market_id: 'b', timestamp: sec(POLL - 90_000) }), metricsRow({ market_id: 'c', timestamp: sec(POLL - 90_000) })];
    const known = new Map();
    expect(marketsWithoutDecimals(rows, known)).toEqual(['b', 'c']);
    const told = marketReadings([...rows, ...asked], POLL, { known, learned: rows.length });
    const itself = new Map();
    expect(told).toEqual(marketReadings([...rows, ...asked], POLL, { known: itself }));
    expect(known).toEqual(itself);
    expect(told.readings.map((r) => r.labels.chain)).toEqual(['Base', 'base', 'base']);
    expect(told.readings.every((r) => typeof r.fields.oracle_price_scaled === 'number')).toBe(true);
  });

  it("fills a row's unknown market members from what is known, member by member, and leaves what is known as it was", () => {
    const known = new Map();
    marketReadings([metricsRow({ market_id: 'a' })], POLL, { known });
    const before = structuredClone(known.get('a'));
    // The next poll's row: its chain and decimals unreadable or absent, a new oracle, the object's other members as before.
    const next = metricsRow({ market_id: 'a' }, { chain: null, loan_asset_decimals: 'x', collateral_asset_decimals: undefined, oracle: '0xnew' });
    const { readings, rejected } = marketReadings([next], POLL, { known });
    const market = readings[0]!.fields.market as Record<string, unknown>;
    expect(market).toEqual({ ...before, oracle: '0xnew' });
    expect(readings[0]!.labels.chain).toBe('base');
    expect(rejected.map((r) => r.field)).toEqual(['market.loan_asset_decimals']);
    // What is known learned the new oracle and nothing else; the reading's object is its own, not the map's.
    expect(known.get('a')).toEqual({ ...before, oracle: '0xnew' });
    expect(market).not.toBe(known.get('a'));
  });

  it('one reading per market with the labels others depend on', () => {
    const { readings, rejected } = marketReadings([metricsRow()], POLL);
    expect(rejected).toEqual([]);
    expect(readings).toHaveLength(1);
    const r = readings[0]!;
    expect(r.kind).toBe('market');
    expect(r.entity).toBe('morpho-base-0xabc');
    expect(r.at).toBe(POLL - 62_000);
    expect(r.labels).toEqual({
      market_id: 'morpho-base-0xabc',
      chain: 'base',
      protocol: 'morpho',
      loan_asset: 'USDC',
      collateral_asset: 'WETH',
      loan_asset_symbol: 'USDC',
      collateral_asset_symbol: 'WETH',
    });
    expect(r.fields).toMatchObject({
      oracle_price: '3022232490411010000000000001',
      total_borrowed: '78355826120811',
      created_at: POLL - 60_000,
      oracle_last_update: POLL - 120_000,
      market: { loan_asset_decimals: 6, collateral_asset_decimals: 18 },
    });
    expect(r.fields.oracle_price_scaled).toBeCloseTo(3022.23249041101, 9);
  });

  it('takes the row with the newest timestamp, else created_at', () => {
    const rows = [
      metricsRow({ id: 'old', timestamp: sec(POLL - 600_000), utilization: 0.1 }),
      metricsRow({ id: 'new', timestamp: sec(POLL - 5_000), utilization: 0.9 }),
      metricsRow({ id: 'mid', timestamp: sec(POLL - 300_000), utilization: 0.5 }),
      metricsRow({ market_id: 'morpho-base-0xdef', id: 'c1', timestamp: undefined, created_at: POLL - 9_000 }),
      metricsRow({ market_id: 'morpho-base-0xdef', id: 'c2', timestamp: undefined, created_at: POLL - 1_000 }),
    ];
    const { readings } = marketReadings(rows, POLL);
    const byEntity = Object.fromEntries(readings.map((r) => [r.entity, r]));
    expect(byEntity['morpho-base-0xabc']!.fields.id).toBe('new');
    expect(byEntity['morpho-base-0xabc']!.fields.utilization).toBe(0.9);
    expect(byEntity['morpho-base-0xdef']!.fields.id).toBe('c2');
    expect(byEntity['morpho-base-0xdef']!.at).toBe(POLL - 1_000);
  });

  it('at falls back to the poll time; scaled price is null without decimals', () => {
    const { readings } = marketReadings([metricsRow({ timestamp: null, created_at: null }, { loan_asset_decimals: null })], POLL);
    expect(readings[0]!.at).toBe(POLL);
    expect(readings[0]!.fields.oracle_price_scaled).toBeNull();
  });

  it('a bad field of the newest row is unknown for that reading, the row is kept; bad older rows are not looked at', () => {
    const rows = [
      metricsRow({ timestamp: sec(POLL - 600_000) }),
      metricsRow({ timestamp: sec(POLL - 5_000), utilization: 'abc' }),
      metricsRow({ market_id: 'morpho-base-0xdef', timestamp: sec(POLL - 600_000), borrow_apy: 'abc' }),
      metricsRow({ market_id: 'morpho-base-0xdef', timestamp: sec(POLL - 5_000) }),
    ];
    const { readings, rejected } = marketReadings(rows, POLL);
    expect(readings.map((r) => r.entity)).toEqual(['morpho-base-0xabc', 'morpho-base-0xdef']);
    const abc = readings[0]!.fields as Record<string, unknown>;
    expect(abc.utilization).toBeNull();
    expect(abc.borrow_apy).not.toBeNull();
    expect(readings[1]!.fields.borrow_apy).not.toBeNull();
    expect(rejected).toEqual([
      { reason: 'not_a_number', entity: 'morpho-base-0xabc', field: 'utilization', sent: 's:abc', detail: 'utilization: expected a number, got "abc"' },
    ]);
  });

  it('a row without market_id is rejected as missing_id', () => {
    const { readings, rejected } = marketReadings([metricsRow({ market_id: undefined })], POLL);
    expect(readings).toEqual([]);
    expect(rejected[0]!.reason).toBe('missing_id');
  });
});

describe('list readings', () => {
  const position = (over: Record<string, unknown> = {}) => ({
    id: 'pos_1',
    wallet: '0xw',
    chain: 'base',
    protocol: 'morpho',
    asset: 'USDC',
    value_usd: '1000.5',
    nav_usd: 900,
    pnl_usd: -3,
    verified: 'false',
    apy: 0.05,
    ...over,
  });

  it('a position: entity = id, labels, normalized fields, extras kept', () => {
    const { readings } = listReadings('position', [position()], POLL);
    expect(readings[0]).toEqual({
      kind: 'position',
      entity: 'pos_1',
      at: POLL,
      labels: { chain: 'base', protocol: 'morpho', asset: 'USDC', wallet: '0xw', position_id: 'pos_1', verified: 'false' },
      fields: { id: 'pos_1', wallet: '0xw', chain: 'base', protocol: 'morpho', asset: 'USDC', value_usd: 1000.5, nav_usd: 900, pnl_usd: -3, verified: false, apy: 0.05 },
    });
  });

  it('an extra field named like a member every object inherits (constructor, toString, valueOf) is kept like any other', () => {
    const row = parseJsonExact(JSON.stringify({ ...position(), constructor: 5, toString: 'x', valueOf: '0.5' })) as Record<string, unknown>;
    const { readings, rejected } = listReadings('position', [row], POLL);
    expect(rejected).toEqual([]);
    expect(readings[0]!.fields).toMatchObject({ constructor: 5, toString: 'x', valueOf: 0.5 });
    expect(Object.keys(readings[0]!.fields)).toEqual(expect.arrayContaining(['constructor', 'toString', 'valueOf']));
  });

  it('an extra field named __proto__ is kept as a field, at every depth, and changes no prototype', () => {
    const text = JSON.stringify(position()).replace(/^\{/, '{"__proto__": {"note": "a", "__proto__": {"deep": "1.5"}}, ');
    const { readings, rejected } = listReadings('position', [parseJsonExact(text) as Record<string, unknown>], POLL);
    expect(rejected).toEqual([]);
    const fields = readings[0]!.fields;
    expect(Object.getPrototypeOf(fields)).toBe(Object.prototype);
    expect(Object.hasOwn(fields, '__proto__')).toBe(true);
    expect(fields.note).toBeUndefined(); // nothing shows through as an inherited field
    // The member, normalized like any other extra (its numeric text read as a number), and as JSON text.
    expect(JSON.stringify(fields)).toContain('"__proto__":{"note":"a","__proto__":{"deep":1.5}}');
  });

  it.each([
    ['all identifying fields', { id: undefined }, '0xw/base/morpho/USDC'],
    ['no protocol', { id: undefined, protocol: undefined }, '0xw/base/USDC'],
    ['wallet_address alias', { id: undefined, wallet: undefined, wallet_address: '0xv' }, '0xv/base/morpho/USDC'],
    ['numeric id', { id: 77 }, '77'],
  ])('position entity without a usable id: %s', (_name, over, entity) => {
    expect(listReadings('position', [position(over)], POLL).readings[0]!.entity).toBe(entity);
  });

  it('a bad field is unknown and a field rejection naming its entity; the row is kept', () => {
    const { readings, rejected } = listReadings('position', [position(), position({ id: 'pos_2', value_usd: 'abc' }), position({ id: 'pos_3' })], POLL);
    expect(readings.map((r) => r.entity)).toEqual(['pos_1', 'pos_2', 'pos_3']);
    expect(readings[1]!.fields).toMatchObject({ value_usd: null, nav_usd: 900 });
    expect(rejected).toEqual([{ reason: 'not_a_number', entity: 'pos_2', field: 'value_usd', sent: 's:abc', detail: expect.stringContaining('value_usd') }]);
  });

  it('a second row of the same entity is rejected as duplicate', () => {
    const { readings, rejected } = listReadings('position', [position(), position()], POLL);
    expect(readings).toHaveLength(1);
    expect(rejected[0]).toMatchObject({ reason: 'duplicate', entity: 'pos_1' });
  });

  it('a row with nothing to identify it is missing_id', () => {
    const { rejected } = listReadings('position', [{ value_usd: 3 }], POLL);
    expect(rejected[0]).toMatchObject({ reason: 'missing_id' });
  });

  it('assets: entity from position_id, token and type; symbol is the asset label; balance exact', () => {
    // JSON text, read as the client reads a body: a JS number literal would be rounded before the code saw it.
    const body = '[{"position_id": "pos_1", "wallet": "0xw", "chain": "base", "protocol": "morpho", "symbol": "WETH", "token_address": "0xt", "type": "collateral", "balance": 12345678901234567890123, "decimals": "18", "value_usd": 5},' +
      ' {"position_id": "pos_2", "wallet": "0xw", "chain": "base", "symbol": "WETH", "token_address": "0xt", "type": "collateral", "balance": "12345.678901234567890123", "decimals": 18}]';
    const { readings } = listReadings('asset', parseJsonExact(body) as unknown[], POLL);
    expect(readings[0]!.entity).toBe('pos_1/0xt/collateral');
    expect(readings[0]!.labels).toEqual({ chain: 'base', protocol: 'morpho', asset: 'WETH', wallet: '0xw', position_id: 'pos_1', type: 'collateral' });
    expect(readings[0]!.fields).toMatchObject({ asset: 'WETH', symbol: 'WETH', decimals: 18, value_usd: 5 });
    expect(readings[0]!.fields.balance, 'base units past 2^53, every digit kept').toBe('12345678901234567890123');
    expect(readings[1]!.fields.balance, 'decimal token units scaled by the decimals, exactly').toBe('12345678901234567890123');
  });

  it('holdings: entity wallet/chain/token; a time field sets at', () => {
    const row = { wallet: '0xw', chain: 'base', symbol: 'USDC', token_address: '0xt', balance: '1000000', value_usd: 1, timestamp: sec(POLL - 5_000) };
    const { readings } = listReadings('holding', [row], POLL);
    expect(readings[0]).toMatchObject({ kind: 'holding', entity: '0xw/base/0xt', at: POLL - 5_000, labels: { chain: 'base', asset: 'USDC', wallet: '0xw' } });
    expect(readings[0]!.fields.balance).toBe('1000000');
  });
});

describe('benchmark readings', () => {
  const DAY = 86_400;
  const day = (t: number, over: Record<string, unknown> = {}) => ({
    apy: { '1day': { base: 0.05, reward: 0.01, total: 0.06 }, '7day': null, '30day': { base: '0.04', reward: 0, total: 0.04 } },
    timestamp: t,
    isComplete: true,
    isStale: false,
    constituents: { '1day': [{}, {}], '7day': [], '30day': [{}] },
    ...over,
  });
  const t0 = 1_795_219_200;

  it('the newest day by timestamp, with days counted', () => {
    const { reading, rejected } = benchmarkReading('base', 'usd', [day(t0), day(t0 + 2 * DAY, { isComplete: false }), day(t0 + DAY)]);
    expect(rejected).toEqual([]);
    expect(reading).toEqual({
      kind: 'benchmark',
      entity: 'base/usd',
      at: (t0 + 2 * DAY) * 1000,
      labels: { network: 'base', code: 'usd' },
      fields: {
        network: 'base',
        code: 'usd',
        day: (t0 + 2 * DAY) * 1000,
        isComplete: false,
        isStale: false,
        apy: { '1day': { base: 0.05, reward: 0.01, total: 0.06 }, '7day': null, '30day': { base: 0.04, reward: 0, total: 0.04 } },
        constituents: { '1day': 2, '7day': 0, '30day': 1 },
        days: 3,
      },
    });
  });

  it("counts the forms seen of the newest day's fields only (what lookout probe reports), once each", () => {
    const { seen } = benchmarkReading('base', 'usd', [day(t0), day(t0 + 2 * DAY, { isStale: 'false' }), day(t0 + DAY)]);
    const total = (field: string) => Object.values(seen[field] ?? {}).reduce((n, c) => n + c, 0);
    for (const field of ['timestamp', 'isComplete', 'isStale', 'apy.1day.base', 'apy.30day.base']) expect(total(field), field).toBe(1);
    // The newest day sent isStale as a string, the others as a boolean: only its form is counted.
    expect(Object.keys(seen.isStale!)).toHaveLength(1);
    expect(seen.isStale).not.toEqual(benchmarkReading('base', 'usd', [day(t0)]).seen.isStale);
  });

  it('no days: no reading and no rejection', () => {
    expect(benchmarkReading('base', 'eth', [])).toEqual({ rejected: [], seen: {} });
  });

  it('a bad field of the newest day is unknown and a field rejection; the day is kept; older days are not looked at', () => {
    const badNewest = benchmarkReading('base', 'usd', [day(t0), day(t0 + DAY, { isStale: 'maybe', apy: { '1day': { base: 'x', total: 0.05 } } })]);
    expect(badNewest.reading?.fields.day).toBe((t0 + DAY) * 1000);
    expect((badNewest.reading?.fields.apy as any)['1day']).toEqual({ base: null, reward: null, total: 0.05 });
    expect(badNewest.rejected.map((r) => [r.entity, r.field, r.reason])).toEqual([
      ['base/usd', 'isStale', 'not_a_boolean'],
      ['base/usd', 'apy.1day.base', 'not_a_number'],
    ]);
    // Unknown, never false: an unreadable isStale must not read as "not stale" (that would resolve a stale alert).
    expect(badNewest.reading?.fields.isStale).toBeNull();
    expect(badNewest.reading?.unreadable).toEqual({ isStale: 'not_a_boolean', 'apy.1day.base': 'not_a_number' });
    const noFlags = benchmarkReading('base', 'usd', [day(t0 + DAY, { isComplete: undefined, isStale: null })]);
    expect(noFlags.reading?.fields).toMatchObject({ isComplete: null, isStale: null });
    const badOlder = benchmarkReading('base', 'usd', [day(t0, { apy: { '1day': { base: 'x' } } }), day(t0 + DAY)]);
    expect(badOlder.reading?.fields.day).toBe((t0 + DAY) * 1000);
    expect(badOlder.rejected).toEqual([]);
  });

  it('a day without a readable timestamp cannot be attributed: newest → no reading (entity named); older → only counted', () => {
    const badNewest = benchmarkReading('base', 'usd', [day(t0), day(t0 + DAY, { timestamp: 'later' })]);
    expect(badNewest.reading).toBeUndefined();
    expect(badNewest.rejected).toEqual([{ reason: 'missing_id', entity: 'base/usd', detail: expect.stringContaining('day #1 (newest)') }]);
    const badOlder = benchmarkReading('base', 'usd', [day(t0, { timestamp: null }), day(t0 + DAY)]);
    expect(badOlder.reading?.fields.day).toBe((t0 + DAY) * 1000);
    expect(badOlder.rejected).toEqual([{ reason: 'missing_id', detail: expect.stringContaining('base/usd day #0') }]);
  });
});

describe('performance readings', () => {
  it('organization and one reading per wallet', () => {
    const body = { data: { from: '2026-10-23', to: '2026-11-22', organization: { nav_usd: '100', pnl_usd: 5, roi: 0.05 }, wallets: [{ wallet: '0xw', nav_usd: 100, apy: '0.1', assets: [] }] } };
    const { readings, rejected } = performanceReadings(body, POLL);
    expect(rejected).toEqual([]);
    expect(readings.map((r) => [r.entity, r.labels])).toEqual([
      ['organization', { scope: 'organization' }],
      ['0xw', { scope: 'wallet', wallet: '0xw' }],
    ]);
    expect(readings[0]!.fields).toMatchObject({ from: '2026-10-23', to: '2026-11-22', nav_usd: 100, pnl_usd: 5, roi: 0.05 });
    expect(readings[1]!.fields).toMatchObject({ wallet: '0xw', apy: 0.1, assets: [] });
  });

  it('an unreadable figure is unknown and marked so on its reading (a threshold rule on it has no data)', () => {
    const body = { organization: { nav_usd: 'lots', pnl_usd: 5 }, wallets: [{ wallet: '0xw', roi: {} }] };
    const { readings, rejected } = performanceReadings(body, POLL);
    expect(rejected.map((r) => [r.entity, r.field, r.reason])).toEqual([
      ['organization', 'nav_usd', 'not_a_number'],
      ['0xw', 'roi', 'not_a_number'],
    ]);
    expect([readings[0]!.fields.nav_usd, readings[0]!.unreadable]).toEqual([null, { nav_usd: 'not_a_number' }]);
    expect([readings[1]!.fields.roi, readings[1]!.unreadable]).toEqual([null, { roi: 'not_a_number' }]);
  });

  it('a 404 (null body) gives nothing', () => {
    expect(performanceReadings(null, POLL)).toEqual({ readings: [], rejected: [], seen: {} });
  });
});
