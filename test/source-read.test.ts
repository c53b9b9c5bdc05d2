/**
 * One table per value family (SPEC §6): every accepted representation reads as the same value and says
 * how it was sent; every unreadable one is a field rejection with its reason — and, read through a
 * metrics row, never a row rejection.
 */
import { FormCounts, mergeForms, type SeenForms } from '../src/source/read/seen.js';
import { describe, expect, it } from 'vitest';
import { parseJsonExact } from '../src/source/json.js';
import { marketReadings } from '../src/source/parse/markets.js';
import { readAmount } from '../src/source/read/amounts.js';
import { readBoolean } from '../src/source/read/booleans.js';
import { readInteger, readNumber } from '../src/source/read/numbers.js';
import { readOraclePrice, type OraclePriceMode } from '../src/source/read/oracle.js';
import type { FieldRead } from '../src/source/read/result.js';
import { readTime } from '../src/source/read/times.js';

const value = <T>(r: FieldRead<T>): T | null => {
  if (!r.ok) throw new Error(`rejected: ${r.detail}`);
  return r.value;
};
const ABSENT_FORMS: Array<[string, unknown]> = [['null', null], ['missing', undefined], ['empty string', ''], ['blank string', '  ']];

/** A metrics row with one field replaced, read as the poll would read it. */
function readThrough(field: string, raw: unknown, mode: OraclePriceMode = 'auto') {
  const row: Record<string, unknown> = {
    market_id: 'morpho-base-0xabc',
    utilization: 0.5,
    timestamp: 1_736_942_400,
    market: { loan_asset_decimals: 6, collateral_asset_decimals: 18, loan_asset_symbol: 'USDC', collateral_asset_symbol: 'WETH' },
  };
  row[field] = raw;
  return marketReadings([row], 1_736_942_460_000, { oraclePrice: mode });
}

describe('numbers', () => {
  it.each([
    ['JSON number', 0.95, 'number'],
    ['numeric string', '0.95', 'numeric string'],
    ['padded string', ' 0.95 ', 'numeric string'],
    ['exponent string', '9.5e-1', 'numeric string with exponent'],
    ['exponent number', 9.5e-1, 'number'],
  ])('%s → 0.95', (_n, raw, how) => {
    expect(readNumber(raw)).toEqual({ ok: true, value: 0.95, seen: how });
  });
  it.each(ABSENT_FORMS)('%s is unknown, never 0', (_n, raw) => expect(readNumber(raw)).toEqual({ ok: true, value: null, seen: 'absent' }));
  it.each([['abc'], ['0x10'], [true], [{ v: 1 }], [[1]], [Number.NaN], ['1,5'], ['1e999']])('%j is a field rejection', (raw) => {
    expect(readNumber(raw)).toMatchObject({ ok: false, reason: 'not_a_number' });
    const { readings, rejected } = readThrough('utilization', raw);
    expect(readings).toHaveLength(1);
    expect(readings[0]!.fields.utilization).toBeNull();
    expect(rejected).toEqual([expect.objectContaining({ field: 'utilization', reason: 'not_a_number', entity: 'morpho-base-0xabc' })]);
  });
  it('integers refuse fractions with their own reason', () => {
    expect(value(readInteger('18'))).toBe(18);
    expect(readInteger(1.5)).toMatchObject({ ok: false, reason: 'not_an_integer' });
  });
});

describe('token amounts (USDC, 6 decimals)', () => {
  const BASE = '10154320986250';
  it.each([
    ['integer string (base units)', '10154320986250', 'integer base units'],
    ['JSON integer (base units)', 10154320986250, 'integer base units'],
    ['integer with exponent', '1.015432098625e13', 'integer base units'],
    ['integer with a zero fraction', '10154320986250.000', 'integer base units'],
    ['decimal token units', '10154320.98625', 'decimal token units'],
    ['decimal token units as a JSON number', 10154320.98625, 'decimal token units'],
  ])('%s → %s base units', (_n, raw, how) => {
    expect(readAmount(raw, 6)).toEqual({ ok: true, value: BASE, seen: how });
  });
  it('past 2^53 stays exact in both representations', () => {
    expect(value(readAmount('98765432109876543210000', 18))).toBe('98765432109876543210000');
    expect(value(readAmount('98765.43210987654321', 18))).toBe('98765432109876543210000');
  });
  it.each(ABSENT_FORMS)('%s is unknown', (_n, raw) => expect(value(readAmount(raw, 6))).toBeNull());
  it.each([
    ['abc', 6, 'not_an_amount'],
    [{ amount: 1 }, 6, 'not_an_amount'],
    ['10.5', null, 'needs_decimals'],
  ] as const)('%j (decimals %s) is a field rejection: %s', (raw, decimals, reason) => {
    expect(readAmount(raw, decimals)).toMatchObject({ ok: false, reason });
  });
  it('a bad amount in a row rejects the field, not the row', () => {
    const { readings, rejected } = readThrough('total_borrowed', 'lots');
    expect(readings[0]!.fields.utilization).toBe(0.5);
    expect(rejected).toEqual([expect.objectContaining({ field: 'total_borrowed', reason: 'not_an_amount' })]);
  });
});

describe('oracle_price (WETH in USDC: 36 + 6 − 18 = 24)', () => {
  const SCALED = '3012550000000000000000000000';
  it.each([
    ['auto', SCALED, 'scaled integer'],
    ['auto', '3.01255e27', 'scaled integer'],
    ['auto', 3012.55, 'unit price'],
    ['auto', '3012.55', 'unit price'],
    ['auto', '3012', 'unit price'],
    ['scaled', SCALED, 'scaled integer'],
    ['unit', '3012.55', 'unit price'],
  ] as const)('%s: %j → 3012.55 (%s)', (mode, raw, how) => {
    const r = readOraclePrice(raw, mode, 6, 18);
    expect(r).toMatchObject({ ok: true, seen: how });
    const v = value(r)!;
    expect(v.unit).toBeCloseTo(raw === '3012' ? 3012 : 3012.55, 9);
    if (raw !== '3012') expect(v.raw).toBe(SCALED);
  });
  it('what is known of a market is kept as it was while rows repeat it, and updated member by member when they tell something new', () => {
    const market = { loan_asset_decimals: 6, collateral_asset_decimals: 18, chain: 'base', loan_asset_symbol: 'USDC', oracle: '0xo1' };
    const known = new Map();
    marketReadings([{ market_id: 'm', timestamp: 1, market }], 1, { known });
    const first = known.get('m');
    expect(first).toMatchObject({ chain: 'base', oracle: '0xo1', loan_asset_decimals: 6 });
    // The same again, as a new object of the next poll's parse: the one kept stays (a copy per poll is garbage to collect).
    marketReadings([{ market_id: 'm', timestamp: 2, market: { ...market } }], 2, { known });
    marketReadings([{ market_id: 'm', timestamp: 3, market: { chain: 'base', oracle: null } }], 3, { known });
    expect(known.get('m')).toBe(first);
    marketReadings([{ market_id: 'm', timestamp: 4, market: { oracle: '0xo2', loan_asset_decimals: '8' } }], 4, { known });
    expect(known.get('m')).toEqual({ ...first, oracle: '0xo2', loan_asset_decimals: 8 });
    expect(first.oracle).toBe('0xo1');
  });

  it('a row without its market object borrows the decimals and labels from an older row of the answer, or from an earlier poll', () => {
    const market = { loan_asset_decimals: '6', collateral_asset_decimals: 18, chain: 'base', loan_asset_symbol: 'USDC', collateral_asset_symbol: 'WETH' };
    const known = new Map();
    const rows = [
      { market_id: 'm', timestamp: 1, market, oracle_price: SCALED },
      { market_id: 'm', timestamp: 2, oracle_price: SCALED, total_borrowed: '10.5' },
    ];
    const first = marketReadings(rows, 1, { known });
    expect(first.rejected).toEqual([]);
    expect(first.readings[0]!.fields).toMatchObject({ oracle_price_scaled: 3012.55, total_borrowed: '10500000' });
    const labels = { market_id: 'm', protocol: 'm', chain: 'base', loan_asset: 'USDC', loan_asset_symbol: 'USDC', collateral_asset: 'WETH', collateral_asset_symbol: 'WETH' };
    expect(first.readings[0]!.labels).toEqual(labels);
    const later = marketReadings([rows[1]], 1, { known });
    expect(later.readings[0]!.fields.oracle_price_scaled).toBe(3012.55);
    // the same labels, so the same alert (a reading without `chain` would be another alert)
    expect(later.readings[0]!.labels).toEqual(labels);
    const none = marketReadings([rows[1]], 1, { known: new Map() });
    expect(none.readings[0]!.fields.oracle_price_scaled).toBeNull();
    expect(none.rejected).toEqual([
      expect.objectContaining({ field: 'oracle_price', reason: 'needs_decimals' }),
      expect.objectContaining({ field: 'total_borrowed', reason: 'needs_decimals' }),
    ]);
    expect(none.readings[0]!.unreadable).toEqual({ oracle_price: 'needs_decimals', total_borrowed: 'needs_decimals' });
  });

  it('without the decimals a scaled price is unreadable (needs_decimals); a unit price still reads, with no scaled form', () => {
    expect(readOraclePrice(SCALED, 'auto', null, 18)).toMatchObject({ ok: false, reason: 'needs_decimals' });
    expect(value(readOraclePrice('3012.55', 'auto', null, null))).toEqual({ raw: null, unit: 3012.55 });
  });
  it.each(ABSENT_FORMS)('%s is unknown', (_n, raw) => expect(value(readOraclePrice(raw, 'auto', 6, 18))).toBeNull());
  it.each([
    ['a scaled integer of 330 digits (plain text, the fast path)', '1' + '0'.repeat(330), 'auto'],
    ['a scaled integer past a double (exponent form)', '1e400', 'scaled'],
    ['a unit price past a double', '1e400', 'unit'],
  ] as const)('%s is not a price: never Infinity', (_n, raw, mode) =>
    expect(readOraclePrice(raw, mode, 0, 36)).toMatchObject({ ok: false, reason: 'not_a_price' }),
  );
  it.each([
    ['auto', 'garbage', 'not_a_price'],
    ['auto', '-5', 'negative_price'],
    ['scaled', '3012.55', 'not_an_integer'],
    ['unit', true, 'not_a_price'],
  ] as const)('%s: %j is a field rejection: %s', (mode, raw, reason) => {
    expect(readOraclePrice(raw, mode, 6, 18)).toMatchObject({ ok: false, reason });
    const { readings, rejected } = readThrough('oracle_price', raw, mode);
    expect(readings[0]!.fields).toMatchObject({ oracle_price: null, oracle_price_scaled: null, utilization: 0.5 });
    expect(rejected).toEqual([expect.objectContaining({ field: 'oracle_price', reason })]);
  });
});

describe('times', () => {
  const MS = Date.UTC(2025, 0, 15, 12, 0, 0);
  it.each([
    ['Unix seconds', 1_736_942_400, 'Unix seconds'],
    ['Unix seconds as a string', '1736942400', 'Unix seconds (string)'],
    ['Unix milliseconds', MS, 'Unix milliseconds'],
    ['Unix milliseconds as a string', String(MS), 'Unix milliseconds (string)'],
    ['ISO-8601 UTC', '2025-01-15T12:00:00Z', 'ISO-8601 UTC'],
    ['ISO-8601 with fraction', '2025-01-15T12:00:00.000Z', 'ISO-8601 UTC'],
    ['ISO-8601 with offset', '2025-01-15T14:00:00+02:00', 'ISO-8601 with offset'],
    ['ISO-8601 with compact offset', '2025-01-15T07:00:00-0500', 'ISO-8601 with offset'],
    ['ISO-8601 without zone (UTC)', '2025-01-15T12:00:00', 'ISO-8601 without zone (read as UTC)'],
    ['ISO-8601 with a space', '2025-01-15 12:00:00', 'ISO-8601 without zone (read as UTC)'],
    ['RFC 3339 lower-case t and z', '2025-01-15t12:00:00z', 'ISO-8601 UTC'],
    ['ISO-8601 with an hours-only offset', '2025-01-15T14:00:00+02', 'ISO-8601 with offset'],
    ['ISO-8601 with a decimal comma', '2025-01-15T12:00:00,000Z', 'ISO-8601 UTC'],
    ['ISO-8601 without seconds', '2025-01-15T12:00Z', 'ISO-8601 UTC'],
    ['ISO-8601 with nanoseconds', '2025-01-15T12:00:00.000000000Z', 'ISO-8601 UTC'],
  ])('%s → 2025-01-15T12:00Z', (_n, raw, how) => {
    expect(readTime(raw)).toEqual({ ok: true, value: MS, seen: how });
  });
  it.each(ABSENT_FORMS)('%s is unknown', (_n, raw) => expect(value(readTime(raw))).toBeNull());
  it.each([['yesterday'], ['2025-13-45T99:00:00Z'], ['2025-01-15T12Z'], ['2025-01-15T12:00:00+2'], [true], [{}]])('%j is a field rejection', (raw) => {
    expect(readTime(raw)).toMatchObject({ ok: false, reason: 'not_a_time' });
  });
  // The JS date parser reads both (the whole text must be one of the forms above, not merely hold one): an expanded
  // year, and a zone on a bare date.
  it.each([['+002025-01-15'], ['2025-01-15Z']])('%j, which Date.parse reads, is a field rejection', (raw) => {
    expect(Date.parse(raw)).toBe(Date.UTC(2025, 0, 15));
    expect(readTime(raw)).toMatchObject({ ok: false, reason: 'not_a_time' });
  });
  it('a number the JSON text overflows to Infinity (1e400) is a field rejection, not a time', () => {
    const body = parseJsonExact('{"a": 1e400, "b": -1e400}') as { a: unknown; b: unknown };
    expect([body.a, body.b]).toEqual([Infinity, -Infinity]);
    expect(readTime(body.a)).toMatchObject({ ok: false, reason: 'not_a_time' });
    expect(readTime(body.b)).toMatchObject({ ok: false, reason: 'not_a_time' });
  });
  it('an unreadable timestamp falls back to created_at, then to the poll time, flagged by a field rejection', () => {
    const toCreated = marketReadings([{ market_id: 'm', timestamp: 'soon', created_at: '2025-01-15T12:00:00Z' }], 1);
    expect(toCreated.readings[0]!.at).toBe(MS);
    expect(toCreated.rejected).toEqual([expect.objectContaining({ field: 'timestamp', reason: 'not_a_time' })]);
    const toPoll = marketReadings([{ market_id: 'm', timestamp: 'soon', created_at: 'later' }], 42);
    expect(toPoll.readings[0]!.at).toBe(42);
    expect(toPoll.rejected.map((r) => r.field)).toEqual(['created_at', 'timestamp']);
  });
});

describe('booleans', () => {
  it.each([
    [true, true],
    ['true', true],
    ['TRUE', true],
    ['True', true],
    ['1', true],
    [1, true],
    [false, false],
    ['false', false],
    ['FaLsE', false],
    ['0', false],
    [0, false],
  ])('%j → %s', (raw, want) => expect(value(readBoolean(raw))).toBe(want));
  it.each(ABSENT_FORMS)('%s is unknown', (_n, raw) => expect(value(readBoolean(raw))).toBeNull());
  it.each([['yes'], [2], ['2'], [{}]])('%j is a field rejection', (raw) => {
    expect(readBoolean(raw)).toMatchObject({ ok: false, reason: 'not_a_boolean' });
  });
});

describe('rows', () => {
  it('are rejected only when they cannot be attributed', () => {
    const { readings, rejected } = marketReadings([{ market_id: '' }, { market_id: null, utilization: 1 }, 'x', { market_id: 'm', utilization: 'bad', borrow_apy: 'bad' }], 1);
    expect(readings.map((r) => r.entity)).toEqual(['m']);
    expect(rejected.filter((r) => r.field === undefined).map((r) => r.reason)).toEqual(['missing_id', 'missing_id', 'missing_id']);
    expect(rejected.filter((r) => r.field !== undefined).map((r) => r.field)).toEqual(['utilization', 'borrow_apy']);
  });
  it('without the nested market object, unknown extra fields and all: read, no rejection', () => {
    const { readings, rejected } = marketReadings([{ market_id: 'm', utilization: '0.5', surprise: { a: 1 } }], 1);
    expect(rejected).toEqual([]);
    expect(readings[0]!.fields).toMatchObject({ utilization: 0.5, market: { loan_asset_decimals: null } });
  });
});

describe('seen forms (what lookout probe reports)', () => {
  it('counts each field’s representations across rows and merged parts', () => {
    const counts = new FormCounts();
    for (const [field, form] of [['utilization', 'number'], ['borrow_apy', 'string'], ['utilization', 'number']] as const) counts.add(field, form);
    const into: SeenForms = counts.toSeenForms();
    mergeForms(into, { utilization: { string: 2, number: 3 } });
    expect(into).toEqual({ utilization: { number: 5, string: 2 }, borrow_apy: { string: 1 } });
  });
});
