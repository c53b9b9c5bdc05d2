/**
 * The edges of reading numbers and amounts field by field (SPEC §6): which texts are numbers at all, exact decimal
 * arithmetic at the exponent bounds and at half a base unit, and what a field rejection says — its reason, a short and
 * safe detail, and the fingerprint that logs it once per entity and field until what the service sends changes.
 */
import { describe, expect, it } from 'vitest';
import { leanAmount, readAmount } from '../src/source/read/amounts.js';
import { shiftToInteger, shiftToNumber, toDecimal } from '../src/source/read/decimal.js';
import { readBoolean } from '../src/source/read/booleans.js';
import { RowReader, isObject, unreadableOf } from '../src/source/read/fields.js';
import { FormCounts } from '../src/source/read/seen.js';
import { leanInteger, leanNumber, readInteger, readNumber, readString } from '../src/source/read/numbers.js';
import { readOraclePrice } from '../src/source/read/oracle.js';
import { fingerprint, preview } from '../src/source/read/result.js';
import { readTime, toEpochMs } from '../src/source/read/times.js';

describe('numeric text', () => {
  it.each([
    ['1', 1],
    ['+1', 1],
    ['-1', -1],
    ['1.', 1],
    ['.5', 0.5],
    ['.25', 0.25],
    ['-.5', -0.5],
    ['1.5e3', 1500],
    ['1E3', 1000],
    ['1e+3', 1000],
    ['15e-1', 1.5],
    ['007', 7],
    ['\t2.5\n', 2.5],
  ])('%j is the number %d', (text, n) => {
    expect(readNumber(text)).toMatchObject({ ok: true, value: n });
  });

  it.each([['.'], ['+'], ['-'], ['e3'], ['1e'], ['1e+'], ['1.2.3'], ['x1'], ['1x'], ['1 2'], ['--1'], ['1e3.5'], ['Infinity'], ['NaN'], ['0x1A'], ['1_000']])(
    '%j is no number: a field rejection, for numbers and amounts alike',
    (text) => {
      expect(readNumber(text)).toMatchObject({ ok: false, reason: 'not_a_number' });
      expect(readAmount(text, 6)).toMatchObject({ ok: false, reason: 'not_an_amount' });
    },
  );
});

describe('amounts: exact decimal arithmetic', () => {
  it.each([
    ['a padded integer string', ' 12 ', '12', 'integer base units'],
    ['leading zeros', '000123', '123', 'integer base units'],
    ['a bare fraction of a token', '.5', '500000', 'decimal token units'],
    ['a whole number with a trailing point', '12.', '12', 'integer base units'],
    ['a negative amount', '-1.5', '-1500000', 'decimal token units'],
    ['zero with a sign', '-0', '0', 'integer base units'],
    ['a bigint past 2^53', 10n ** 25n + 1n, '10000000000000000000000001', 'integer base units'],
    ['an exponent that makes a whole number', '1.5e1', '15', 'integer base units'],
    ['an exponent that leaves a fraction', '15e-1', '1500000', 'decimal token units'],
  ])('%s → %s', (_what, raw, base, how) => {
    expect(readAmount(raw, 6)).toEqual({ ok: true, value: base, seen: how });
  });

  it('rounds to the nearest base unit, half away from zero', () => {
    expect(readAmount('0.0000005', 6)).toMatchObject({ ok: true, value: '1' });
    expect(readAmount('0.00000049', 6)).toMatchObject({ ok: true, value: '0' });
    expect(readAmount('0.0000015', 6)).toMatchObject({ ok: true, value: '2' });
    expect(readAmount('-0.0000025', 6)).toMatchObject({ ok: true, value: '-3' });
    expect(readAmount('-0.00000249', 6)).toMatchObject({ ok: true, value: '-2' });
  });

  it('reads exponents up to 400 either way and refuses larger ones (no 10^1000000 bigint from one field)', () => {
    expect(readAmount('1e400', 6)).toEqual({ ok: true, value: `1${'0'.repeat(400)}`, seen: 'integer base units' });
    expect(readAmount('1e401', 6)).toMatchObject({ ok: false, reason: 'not_an_amount' });
    expect(readAmount(`0.${'0'.repeat(400)}1`, 6)).toMatchObject({ ok: false, reason: 'not_an_amount' });
    expect(readAmount('1e-400', 6)).toEqual({ ok: true, value: '0', seen: 'decimal token units' });
    expect(readAmount('1e-401', 6)).toMatchObject({ ok: false, reason: 'not_an_amount' });
    // The bound counts the digits after the point too: 0.5e-399 is 5 × 10^-400.
    expect(readAmount('0.5e-399', 6)).toEqual({ ok: true, value: '0', seen: 'decimal token units' });
    expect(readAmount('0.05e-399', 6)).toMatchObject({ ok: false, reason: 'not_an_amount' });
  });

  it('keeps the sign of a decimal: -0 is zero, not negative; anything else with a minus is', () => {
    expect(toDecimal('-0')).toEqual({ negative: false, digits: 0n, exp: 0 });
    expect(toDecimal('-0.00')).toEqual({ negative: false, digits: 0n, exp: -2 });
    expect(toDecimal('-2.50')).toEqual({ negative: true, digits: 250n, exp: -2 });
    expect(toDecimal('2.5')).toEqual({ negative: false, digits: 25n, exp: -1 });
    expect(toDecimal(2.5)).toEqual({ negative: false, digits: 25n, exp: -1 });
    expect(toDecimal(-7n)).toEqual({ negative: true, digits: 7n, exp: 0 });
    expect(toDecimal(Number.POSITIVE_INFINITY)).toBeUndefined();
    expect(toDecimal(true)).toBeUndefined();
    expect(shiftToNumber(toDecimal('-2.5')!, 2)).toBe(-250);
    expect(shiftToInteger(toDecimal('-2.5')!, 0)).toBe(-3n);
    expect(shiftToInteger(toDecimal('25')!, -1)).toBe(3n);
  });

  it('an oracle price of -0 is a price of zero, not a negative one; -1 is refused', () => {
    expect(readOraclePrice('-0', 'unit', 6, 18)).toEqual({ ok: true, value: { raw: '0', unit: 0 }, seen: 'unit price' });
    expect(readOraclePrice('-1', 'unit', 6, 18)).toMatchObject({ ok: false, reason: 'negative_price' });
  });
});

describe('field rejections', () => {
  it('name the field, the entity, the reason and a short detail of what was sent', () => {
    const counts = new FormCounts();
    const r = new RowReader(counts);
    const row: Record<string, unknown> = { utilization: 'high', total_borrowed: { amount: 1 }, block: [1, 2] };
    r.start('morpho-base-0xabc');
    expect(r.read('market.utilization', row.utilization, leanNumber)).toBeNull();
    expect(r.took('market.total_borrowed', row.total_borrowed, leanAmount(row.total_borrowed, r.slot, 6))).toBeNull();
    expect(r.read('market.block', row.block, leanInteger)).toBeNull();
    expect(r.rejected).toEqual([
      { reason: 'not_a_number', entity: 'morpho-base-0xabc', field: 'market.utilization', detail: 'market.utilization: expected a number, got "high"', sent: 's:high' },
      {
        reason: 'not_an_amount',
        entity: 'morpho-base-0xabc',
        field: 'market.total_borrowed',
        detail: 'market.total_borrowed: expected a token amount, got an object',
        sent: 'j:{"amount":1}',
      },
      { reason: 'not_a_number', entity: 'morpho-base-0xabc', field: 'market.block', detail: 'market.block: expected an integer, got an array', sent: 'j:[1,2]' },
    ]);
    r.keep();
    expect(counts.toSeenForms()).toEqual({});
  });

  it('record how a read field was sent, and nothing for an absent one', () => {
    const counts = new FormCounts();
    const r = new RowReader(counts);
    r.start('m');
    expect(r.read('utilization', '0.5', leanNumber)).toBe(0.5);
    expect(r.read('block', null, leanInteger)).toBeNull();
    expect(r.rejected).toEqual([]);
    r.keep();
    expect(counts.toSeenForms()).toEqual({ utilization: { 'numeric string': 1 } });
  });

  it('show at most 40 characters of what was sent', () => {
    expect(preview('x'.repeat(38))).toBe(`"${'x'.repeat(38)}"`);
    expect(preview('x'.repeat(39))).toBe(`"${'x'.repeat(36)}...`);
    expect(preview(true)).toBe('true');
    expect(preview(null)).toBe('null');
    expect(preview([1])).toBe('an array');
    expect(preview({})).toBe('an object');
    expect(readNumber('y'.repeat(100))).toEqual({ ok: false, reason: 'not_a_number', detail: `expected a number, got "${'y'.repeat(36)}...` });
  });

  it('fingerprint what was sent: the text itself or its JSON, up to 200 characters, so a change logs again', () => {
    expect(fingerprint('12')).toBe('s:12');
    expect(fingerprint(12)).toBe('j:12');
    expect(fingerprint(undefined)).toBe('j:undefined');
    expect(fingerprint('z'.repeat(198))).toBe(`s:${'z'.repeat(198)}`);
    expect(fingerprint('z'.repeat(300))).toBe(`s:${'z'.repeat(198)}`);
    expect(fingerprint('z'.repeat(300))).toHaveLength(200);
    // A value JSON cannot write (a bigint, a cycle) still has a fingerprint, and reading it never throws.
    expect(fingerprint(10n)).toBe('x');
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(fingerprint(cycle)).toBe('x');
  });
});

describe('how each field was sent (what lookout probe reports), and what its rejection says', () => {
  const SCALED = '3012550000000000000000000000';
  it.each<[string, unknown, unknown]>([
    ['boolean', readBoolean(true), { ok: true, value: true, seen: 'boolean' }],
    ['boolean 1/0', readBoolean(0), { ok: true, value: false, seen: 'number 1/0' }],
    ['boolean text, padded and in any case', readBoolean(' TRUE '), { ok: true, value: true, seen: 'string true/false' }],
    ['boolean "1"', readBoolean('1'), { ok: true, value: true, seen: 'string "1"/"0"' }],
    ['boolean of another type', readBoolean(2), { ok: false, reason: 'not_a_boolean', detail: 'expected a boolean, got 2' }],
    ['boolean of other text', readBoolean('yes'), { ok: false, reason: 'not_a_boolean', detail: 'expected a boolean, got "yes"' }],
    ['string of a number', readString(12), { ok: true, value: '12', seen: 'number' }],
    ['string of NaN', readString(Number.NaN), { ok: false, reason: 'not_a_string', detail: 'expected a string, got NaN' }],
    ['string of an object', readString({}), { ok: false, reason: 'not_a_string', detail: 'expected a string, got an object' }],
    ['number', readNumber('x'), { ok: false, reason: 'not_a_number', detail: 'expected a number, got "x"' }],
    ['integer', readInteger(1.5), { ok: false, reason: 'not_an_integer', detail: 'expected an integer, got 1.5' }],
    ['amount without decimals', readAmount('1.5', null), { ok: false, reason: 'needs_decimals', detail: 'expected decimal token units with the token\'s decimals, got "1.5"' }],
    ['price', readOraclePrice('x', 'auto', 6, 18), { ok: false, reason: 'not_a_price', detail: 'expected an oracle price, got "x"' }],
    ['negative price', readOraclePrice('-1', 'auto', 6, 18), { ok: false, reason: 'negative_price', detail: 'expected a positive oracle price, got "-1"' }],
    ['scaled price with a fraction', readOraclePrice('1.5', 'scaled', 6, 18), { ok: false, reason: 'not_an_integer', detail: 'expected a scaled integer oracle price, got "1.5"' }],
    [
      'scaled price without decimals',
      readOraclePrice(SCALED, 'auto', 6, null),
      { ok: false, reason: 'needs_decimals', detail: `expected a scaled oracle price with the market's token decimals, got "${SCALED}"` },
    ],
    ['time', readTime(true), { ok: false, reason: 'not_a_time', detail: 'expected a time (Unix seconds, milliseconds or ISO-8601), got true' }],
    ['time as a date', readTime('2025-01-15'), { ok: true, value: Date.UTC(2025, 0, 15), seen: 'ISO-8601 date' }],
    ['time as padded Unix seconds', readTime(' 1736942400 '), { ok: true, value: 1_736_942_400_000, seen: 'Unix seconds (string)' }],
    ['time in words the JS date parser would take', readTime('Jan 15 2025'), { ok: false, reason: 'not_a_time', detail: 'expected a time (Unix seconds, milliseconds or ISO-8601), got "Jan 15 2025"' }],
  ])('%s', (_what, got, want) => {
    expect(got).toEqual(want);
  });

  it('tells Unix seconds, milliseconds and microseconds apart at exactly their bounds (1e11, 1e14)', () => {
    expect(readTime(1e11 - 1)).toEqual({ ok: true, value: (1e11 - 1) * 1000, seen: 'Unix seconds' });
    expect(readTime(1e11)).toEqual({ ok: true, value: 1e11, seen: 'Unix milliseconds' });
    expect(readTime(1e14 - 1)).toEqual({ ok: true, value: 1e14 - 1, seen: 'Unix milliseconds' });
    expect(readTime(1e14)).toEqual({ ok: true, value: 1e11, seen: 'Unix microseconds' });
  });

  it('auto takes an integer from 1e15 up as scaled, and unit mode never does', () => {
    expect(readOraclePrice('1000000000000000', 'auto', 6, 18)).toMatchObject({ ok: true, seen: 'scaled integer' });
    expect(readOraclePrice('999999999999999', 'auto', 6, 18)).toMatchObject({ ok: true, seen: 'unit price' });
    expect(readOraclePrice(SCALED, 'unit', 6, 18)).toEqual({ ok: true, value: { raw: `${SCALED}${'0'.repeat(24)}`, unit: 3.01255e27 }, seen: 'unit price' });
  });

  it('reads a date-time without a zone as UTC, whatever the host’s time zone', () => {
    const tz = process.env.TZ;
    process.env.TZ = 'America/New_York';
    try {
      // The test means something only where local time is not UTC. Setting TZ here takes effect in a forked worker, not
      // in a worker thread (Stryker's vitest runner uses threads; stryker.config.mjs sets a zone for its whole run):
      // where neither holds, say so rather than pass for nothing.
      expect(Date.parse('2025-01-15T12:00:00'), 'the host reads a zone-less date-time as UTC: the test proves nothing').not.toBe(Date.UTC(2025, 0, 15, 12));
      expect(readTime('2025-01-15T12:00:00')).toEqual({ ok: true, value: Date.UTC(2025, 0, 15, 12), seen: 'ISO-8601 without zone (read as UTC)' });
      expect(readTime('2025-01-15 12:00')).toEqual({ ok: true, value: Date.UTC(2025, 0, 15, 12), seen: 'ISO-8601 without zone (read as UTC)' });
    } finally {
      if (tz === undefined) delete process.env.TZ;
      else process.env.TZ = tz;
    }
  });

  it('a string is read as it came', () => {
    expect(readString(' abc ')).toEqual({ ok: true, value: ' abc ', seen: 'string' });
  });

  it('a time absent or unreadable is no time at all', () => {
    expect(toEpochMs(null)).toBeUndefined();
    expect(toEpochMs('soon')).toBeUndefined();
    expect(toEpochMs('2025-01-15')).toBe(Date.UTC(2025, 0, 15));
  });

  it('a rejection of the whole row names no field, so it makes no field unreadable; only plain objects are rows', () => {
    expect(unreadableOf([{ reason: 'missing_id', detail: 'no market_id' }])).toEqual({});
    expect(unreadableOf([{ reason: 'missing_id', detail: 'x' }, { reason: 'not_a_number', field: 'utilization', detail: 'y' }])).toEqual({ unreadable: { utilization: 'not_a_number' } });
    expect([isObject({}), isObject([]), isObject('x'), isObject(1), isObject(null)]).toEqual([true, false, false, false, false]);
  });
});
