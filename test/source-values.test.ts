import { describe, expect, it } from 'vitest';
import { parseJsonExact } from '../src/source/json.js';
import { parseRetryAfter } from '../src/source/http.js';
import { fnv1a } from '../src/source/shard.js';
import { readAmount } from '../src/source/read/amounts.js';
import { readBoolean } from '../src/source/read/booleans.js';
import { readInteger, readNumber, readString } from '../src/source/read/numbers.js';
import { readOraclePrice } from '../src/source/read/oracle.js';
import type { FieldRead } from '../src/source/read/result.js';
import { readTime, toEpochMs } from '../src/source/read/times.js';
import { normalizeExtra } from '../src/source/values.js';
import { NUMERIC } from '../src/source/read/result.js';
import { mulberry32 } from '../src/simulator/random.js';

type Reader<T> = (v: unknown) => FieldRead<T>;
const ok = <T>(reader: Reader<T>, v: unknown): T | null => {
  const r = reader(v);
  if (!r.ok) throw new Error(`rejected ${JSON.stringify(v)}: ${r.detail}`);
  return r.value;
};
const fails = (reader: Reader<unknown>, v: unknown) => !reader(v).ok;
const num = readNumber;
const int = readInteger;
const bool = readBoolean;
const str = readString;
const time = readTime;
/** An amount whose token decimals are unknown: only integer base units read. */
const baseUnits: Reader<string> = (v) => readAmount(v, null);
/** The unit price of a scaled oracle price: oracle_price / (1e36 × 10^(loan − collateral decimals)). */
const scaleOraclePrice = (price: string | null, loan: number | null, collateral: number | null): number | null => {
  if (price === null) return null;
  const r = readOraclePrice(price, 'scaled', loan, collateral);
  if (!r.ok) return null;
  return r.value === null ? null : r.value.unit;
};

describe('liberal scalars', () => {
  it.each([
    ['a number', 0.95, 0.95],
    ['a numeric string', '0.95', 0.95],
    ['padded string', ' 12 ', 12],
    ['exponent string', '1.5e3', 1500],
    ['null', null, null],
    ['absent', undefined, null],
    ['empty string', '', null],
  ])('num accepts %s', (_name, input, expected) => {
    expect(ok(num, input)).toBe(expected);
  });

  it.each([['abc'], ['0x10'], [true], [{ value: 1 }], [Number.NaN], ['1,5']])('num refuses %j', (input) => {
    expect(fails(num, input)).toBe(true);
  });

  it('int refuses fractions', () => {
    expect(ok(int, '18')).toBe(18);
    expect(fails(int, 1.5)).toBe(true);
  });

  it.each([
    ['true', true],
    ['FALSE', false],
    [1, true],
    [0, false],
    [true, true],
  ])('bool reads %j', (input, expected) => {
    expect(ok(bool, input)).toBe(expected);
  });

  it('bool refuses yes/no', () => {
    expect(fails(bool, 'yes')).toBe(true);
  });

  it('str turns numeric ids into text', () => {
    expect(ok(str, 42)).toBe('42');
    expect(fails(str, { id: 1 })).toBe(true);
  });
});

describe('times', () => {
  const ms = Date.UTC(2026, 10, 22, 8, 30, 15);
  it.each([
    ['Unix seconds (number)', ms / 1000],
    ['Unix seconds (string)', String(ms / 1000)],
    ['Unix milliseconds (number)', ms],
    ['Unix milliseconds (string)', String(ms)],
    ['Unix microseconds', ms * 1000],
    ['ISO-8601 with Z', new Date(ms).toISOString()],
    ['ISO-8601 with offset', '2026-11-22T10:30:15+02:00'],
    ['ISO-8601 without zone (read as UTC)', '2026-11-22T08:30:15'],
    ['space-separated', '2026-11-22 08:30:15Z'],
  ])('%s → the same ms', (_name, input) => {
    expect(ok(time, input)).toBe(ms);
  });

  it('a date alone is 00:00 UTC', () => {
    expect(toEpochMs('2026-11-22')).toBe(Date.UTC(2026, 10, 22));
  });

  it.each([['yesterday'], ['2026-13-45T99:00:00Z'], [true]])('refuses %j', (input) => {
    expect(fails(time, input)).toBe(true);
  });
});

describe('exact big integers', () => {
  const huge = '115792089237316195423570985008687907853269984665640564039457';
  it.each([
    ['a decimal string', huge, huge],
    ['a safe JSON number', 12345, '12345'],
    ['a string with .0', '1000.000', '1000'],
    ['an exponent string', '1.5e36', '1500000000000000000000000000000000000'],
  ])('an amount in base units keeps %s exact', (_name, input, expected) => {
    expect(ok(baseUnits, input)).toBe(expected);
  });

  it.each([['12.5'], ['1.23e1'], ['abc']])('an amount in base units refuses %j', (input) => {
    expect(fails(baseUnits, input)).toBe(true);
  });

  it('parseJsonExact keeps integer literals above 2^53 exact and leaves other numbers alone', () => {
    const text = `{"oracle_price": 3022232490411010000000000001, "neg": -90071992547409931, "f": 0.12345678901234567, "e": 1e+21, "s": "12345678901234567890", "n": 42}`;
    const out = parseJsonExact(text) as Record<string, unknown>;
    expect(out.oracle_price).toBe('3022232490411010000000000001');
    expect(out.neg).toBe('-90071992547409931');
    expect(out.f).toBe(0.12345678901234567);
    expect(out.e).toBe(1e21);
    expect(out.s).toBe('12345678901234567890');
    expect(out.n).toBe(42);
  });

  it('parseJsonExact leaves digits inside strings (with escaped quotes) untouched', () => {
    expect(parseJsonExact('{"a":"x\\"12345678901234567890","b":[12345678901234567890]}')).toEqual({ a: 'x"12345678901234567890', b: ['12345678901234567890'] });
  });

  it('parseJsonExact leaves a long run of digits inside a string as sent, even where a value could start', () => {
    // `,`, `:` and `[` before the digits and `]`, `,` or `}` after them, all inside strings.
    const text = '{"note":"ids [12345678901234567890, 1]","k":"a:98765432109876543210}","v":12345678901234567890}';
    expect(parseJsonExact(text)).toEqual({ note: 'ids [12345678901234567890, 1]', k: 'a:98765432109876543210}', v: '12345678901234567890' });
  });

  it('parseJsonExact quotes long integers with whitespace around them, in arrays and at the top level', () => {
    expect(parseJsonExact('{"a" :\n\t 12345678901234567890 \r\n, "b": [ -12345678901234567890 ,1]}')).toEqual({ a: '12345678901234567890', b: ['-12345678901234567890', 1] });
    expect(parseJsonExact(' 12345678901234567890 ')).toBe('12345678901234567890');
    expect(parseJsonExact('[12345678901234567890]')).toEqual(['12345678901234567890']);
  });

  it('parseJsonExact throws on truncated JSON like JSON.parse', () => {
    expect(() => parseJsonExact('{"data":[{"id":12345678901234567')).toThrow(SyntaxError);
  });
});

describe('oracle price scaling', () => {
  it.each([
    // collateral WETH (18) in USDC (6): scale 1e36 × 10^(6 − 18) = 1e24
    ['WETH/USDC', '3022232490411010000000000000', 6, 18, 3022.23249041101],
    // collateral cbBTC (8) in USDC (6): scale 1e34
    ['cbBTC/USDC', '950123456789012345678901234567890123456', 6, 8, 95012.34567890123],
    // same decimals: scale 1e36, value above 2^53 with a tail no double can hold
    ['wstETH/WETH', '1189999999999999999999999999999999999', 18, 18, 1.19],
  ])('%s', (_name, price, loan, coll, expected) => {
    expect(scaleOraclePrice(price, loan, coll)).toBeCloseTo(expected, 10);
  });

  it('rounds once, from the exact integer', () => {
    // 2^53 + 1 at scale 1 (36 + 0 − 36): Number() of the exact decimal gives the correctly rounded double.
    expect(scaleOraclePrice('9007199254740993', 0, 36)).toBe(9007199254740992);
    expect(scaleOraclePrice('123456789012345678901234567890123456789', 18, 18)).toBe(Number('123.456789012345678901234567890123456789'));
  });

  it('a scaled price cannot be read without both decimals: a field rejection, never a guess', () => {
    expect(readOraclePrice('1000', 'scaled', null, 18)).toMatchObject({ ok: false, reason: 'needs_decimals' });
    expect(readOraclePrice('1000', 'scaled', 6, null)).toMatchObject({ ok: false, reason: 'needs_decimals' });
  });
});

describe('Retry-After', () => {
  const now = Date.UTC(2026, 0, 1, 12, 0, 0);
  it.each([
    ['delta seconds', '2', 2000],
    ['fractional seconds', '0.5', 500],
    ['an HTTP date', new Date(now + 7000).toUTCString(), 7000],
    ['a date in the past', new Date(now - 7000).toUTCString(), 0],
    ['garbage', 'soon', undefined],
    ['absent', undefined, undefined],
  ])('%s', (_name, value, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected);
  });
});

describe('shard hash', () => {
  it('is FNV-1a (known vectors) and stable', () => {
    expect(fnv1a('')).toBe(0x811c9dc5);
    expect(fnv1a('a')).toBe(0xe40c292c);
    expect(fnv1a('foobar')).toBe(0xbf9cf968);
  });
});

describe('extra fields (no reader of their own) are normalized', () => {
  it.each([
    ['a number', 0.25, 0.25],
    ['numeric text', '0.25', 0.25],
    ['exponent text', '2.5e-1', 0.25],
    ['exponent text, upper case and signed', '-2.5E+2', -250],
    ['trailing zeros', '0.250', 0.25],
    ['integer text', '42', 42],
    ['an id with a leading zero stays text', '007', '007'],
    ['an integer past 2^53 stays exact text', '12345678901234567890', '12345678901234567890'],
    ['plain text', 'steakhouse', 'steakhouse'],
    ['hex stays text', '1e3a', '1e3a'],
  ])('%s', (_name, raw, want) => {
    expect(normalizeExtra(raw)).toEqual(want);
    expect(normalizeExtra({ nested: [raw] })).toEqual({ nested: [want] });
  });
});

/**
 * normalizeExtra as it was before its integer text got a path without a regex: the oracle the current one must agree
 * with on every text (and so on every value, text being the only case it changed).
 */
const INTEGER_TEXT = /^[+-]?\d+$/;
function oldNormalizeText(v: string): unknown {
  if (!NUMERIC.test(v)) return v;
  const n = Number(v);
  if (!Number.isFinite(n)) return v;
  return INTEGER_TEXT.test(v) ? (String(n) === v.replace(/^\+/, '') ? n : v) : n;
}

describe('extra fields: integer text takes the quick path with the same result', () => {
  /** A random text near the edges: signs, leading zeros, 0–330 digits (15, 16, 21, 22 often), fractions, exponents (and their parts alone), other characters. */
  function textOf(next: () => number): string {
    const pick = (n: number) => Math.floor(next() * n);
    const sign = ['', '', '-', '+', '--', '-+'][pick(6)]!;
    const lead = pick(5) === 0 ? '0'.repeat(1 + pick(3)) : '';
    const lengths = [0, 1, 1, 2, 5, 14, 15, 15, 16, 16, 17, 20, 21, 21, 22, 22, 23, 40, 308, 309, 310, 330];
    let body = '';
    const n = lengths[pick(lengths.length)]!;
    for (let i = 0; i < n; i++) body += String(i === 0 && pick(4) !== 0 ? 1 + pick(9) : pick(10));
    // Round numbers: 10^k and 9…9, where a double's shortest text equals the digits or rounds away.
    if (pick(6) === 0 && n > 0) body = pick(2) ? `1${'0'.repeat(n - 1)}` : '9'.repeat(n);
    const tail = ['', '', '', '.', '.5', '.000', 'e3', 'E-2', 'x', ' ', '\n', '٣', 'e', 'e+', '.e1', 'E+05', '.5e-7', 'e-'][pick(18)]!;
    const head = ['', '', '', '', ' ', '.', 'a'][pick(7)]!;
    return head + sign + lead + body + tail;
  }

  it('agrees with the old function on 20,000 seeded texts (numbers as the same number, -0 included)', () => {
    const next = mulberry32(20261126);
    let numbers = 0;
    for (let i = 0; i < 20_000; i++) {
      const v = textOf(next);
      const got = normalizeExtra(v);
      const want = oldNormalizeText(v);
      if (!Object.is(got, want)) expect({ v, got }).toEqual({ v, got: want });
      if (typeof got === 'number') numbers++;
    }
    // The texts reach both outcomes, not only text kept as it is.
    expect(numbers).toBeGreaterThan(2_000);
  });

  it.each([
    ['0', 0],
    ['-0', '-0'],
    ['00', '00'],
    ['-', '-'],
    ['', ''],
    ['999999999999999', 999999999999999],
    ['-999999999999999', -999999999999999],
    ['9999999999999999', '9999999999999999'],
    ['10000000000000000', 10000000000000000],
    ['100000000000000000000', 100000000000000000000],
    ['1000000000000000000000', '1000000000000000000000'],
    ['+42', 42],
  ])('%j', (raw, want) => {
    expect(Object.is(normalizeExtra(raw), want)).toBe(true);
    expect(Object.is(oldNormalizeText(raw), want)).toBe(true);
  });
});
