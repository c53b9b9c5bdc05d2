/**
 * The packed form of a reading's values is what every stored history, bucket and latest row holds: a lookout that
 * encodes a value differently from the one that wrote the file would still read its own rows back, and misread the
 * old ones. These bytes were written by the codec as it was when schema 9 shipped; any change to them needs a
 * migration, not a test update.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { setOwn } from '../src/own.js';
import { isPacked, packReading, packValues, packValuesFrom, readValue, Reader, unpackFields, Writer, writeMemoValues, writeValue, type Shape } from '../src/store/codec.js';

const BASE = 1795663233000;
const golden: Array<[unknown, string]> = [
  ['0', '06000100'],
  ['-0', '07022d30'], // kept as text: "-0" is not the same string as "0"
  ['1000', '06030101'],
  ['-25', '0e000119'],
  ['120028249183816', '0600066d2a4127d648'], // 15 digits: the widest the double path takes
  ['1200282491838160000000000000000000000', '0616066d2a4127d648'],
  ['9007199254740993', '06000720000000000001'], // 16 digits, 2^53 + 1: no double holds it
  ['12345678901234567', '0600072bdc545d6b4b87'],
  ['1234567890123456789', '060008112210f47de98115'], // 19 digits: the BigInt path
  ['-98765432109876543210000', '0e0408891087b8e3b70cb1'],
  [0.647567, '349e864f'],
  [1795663236000, '03f02e'],
  [42, '0254'],
  [-7, '020d'],
  [true, '09'],
  [false, '01'],
  [null, '00'],
  ['WETH', '070457455448'],
];

describe('the packed values codec', () => {
  it.each(golden)('%j is stored as the bytes earlier versions wrote, and read back the same', (value, hex) => {
    const w = new Writer();
    writeValue(w, value, BASE);
    const bytes = w.take();
    expect(bytes.toString('hex')).toBe(hex);
    expect(readValue(new Reader(bytes), BASE)).toEqual(value);
  });

  it('a reading packs its digit strings (and "-0", as text) as writeValue does, on both sides of 15 digits, and unpacks to the same strings', () => {
    const digits = fc
      .tuple(fc.bigInt({ min: 0n, max: 10n ** 30n }), fc.nat({ max: 20 }), fc.boolean())
      .map(([b, zeros, neg]) => `${neg && b !== 0n ? '-' : ''}${b}${b === 0n ? '' : '0'.repeat(zeros)}`);
    fc.assert(
      fc.property(fc.array(fc.oneof(digits, fc.constant('-0'), fc.constant('0')), { minLength: 1, maxLength: 6 }), (values) => {
        const fields = Object.fromEntries(values.map((v, i) => [`f${i}`, v]));
        const w = new Writer();
        const packed = packReading(w, {}, fields, undefined, BASE);
        const one = new Writer();
        for (const v of values) writeValue(one, v, BASE);
        expect(packed.vals.toString('hex')).toBe(one.take().toString('hex'));
        const shape = JSON.parse(packed.shape) as Shape;
        expect(shape.dyn).toEqual(values.map(() => 1));
        expect(unpackFields(shape, new Reader(packed.vals), BASE)).toEqual(fields);
      }),
      { numRuns: 2000, seed: 7 },
    );
  });

  it("a save's stored values taken from its memo's bytes are the bytes packValues writes (integers near the time, the moving fields, every form)", () => {
    const at = fc.integer({ min: 0, max: 2 ** 45 });
    const value = (time: number) =>
      fc.oneof(
        fc.integer({ min: time - 100_000, max: time + 100_000 }), // a difference from the reading's time
        fc.integer({ min: -(2 ** 31), max: 2 ** 31 }),
        fc.constantFrom(0, -0, NaN, Infinity, -Infinity, 2 ** 52, 2 ** 53 + 2, -(2 ** 60), 0.1, 0.647567, 52085279.95, 1e21),
        fc.double(),
        fc.integer({ min: 0, max: 10 ** 9 }).map((m) => m / 10 ** 4),
        fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map(String),
        fc.constantFrom('-0', '0', 'WETH', '007'),
        fc.boolean(),
        fc.constant(null),
        fc.constant({ nested: 1 }),
      );
    const reading = at.chain((time) =>
      fc.tuple(fc.constant(time), fc.array(fc.tuple(fc.constantFrom('a', 'b', 'c', 'timestamp', 'block', 'd', 'e'), value(time)), { maxLength: 9 })),
    );
    const w = new Writer();
    const spans: number[] = [];
    const moving = new Set(['timestamp', 'block']);
    fc.assert(
      fc.property(reading, fc.nat({ max: 5000 }), ([time, pairs], shape) => {
        const fields = Object.fromEntries(pairs);
        const keys = Object.keys(fields);
        const layout = { keys, packed: keys.map((k) => isPacked(fields[k])) };
        w.varint(shape);
        writeMemoValues(w, fields, layout, moving, spans);
        w.f64(time);
        const memo = w.takeKey();
        const want = packValues(w, fields, time, layout).toString('hex');
        expect(Buffer.from(packValuesFrom(w, fields, time, layout, memo, spans)).toString('hex')).toBe(want);
        // And with the values given beside the keys, as a save's shape key gives them: in arrays longer than the keys,
        // an earlier reading's entries left past them.
        const values = [...keys.map((k) => fields[k]), 'left over', 7];
        const packed = [...layout.packed, true, true];
        expect(Buffer.from(packValuesFrom(w, fields, time, { keys, packed, values }, memo, spans)).toString('hex')).toBe(want);
      }),
      { numRuns: 5000, seed: 11 },
    );
  });

  it("gives what was written as a view of one length's bytes, the same view again for that length, a new one once its buffer grew", () => {
    const w = new Writer();
    w.varint(300);
    const first = w.view();
    expect(Buffer.from(first).toString('hex')).toBe('ac02');
    w.truncate(0);
    w.varint(301);
    // The same view object, now showing the new bytes: valid until the next write, as every view is.
    expect(w.view()).toBe(first);
    expect(Buffer.from(w.view()).toString('hex')).toBe('ad02');
    const taken = w.takeView();
    expect(Buffer.from(taken).toString('hex')).toBe('ad02');
    expect(w.length).toBe(0);
    // Past its first 256 bytes the writer's buffer is replaced: a view of the old one would show stale bytes.
    for (let i = 0; i < 300; i++) w.byte(i & 0xff);
    w.truncate(2);
    const after = w.view();
    expect(after).not.toBe(first);
    expect([...after]).toEqual([0, 1]);
  });

  describe('decoding by layout (a decoder made per layout of keys)', () => {
    /** Packs `fields` as the store does and reads them back whole and through a pick. */
    const roundTrip = (fields: Record<string, unknown>, pick?: ReadonlySet<string>) => {
      const packed = packReading(new Writer(), {}, fields, undefined, BASE);
      const shape = JSON.parse(packed.shape) as Shape;
      const r = new Reader(packed.vals);
      const out = unpackFields(shape, r, BASE, pick);
      return { out, done: r.done };
    };
    const ownEntries = (o: Record<string, unknown>) => Object.getOwnPropertyNames(o).map((k) => [k, o[k]]);

    it('names a service sends are data, never code: quotes, backslashes, line separators, lone surrogates, __proto__, constructor', () => {
      const hostile = ['"}); globalThis.lookoutPwned = 1; ({"', "'; globalThis.lookoutPwned = 2; '", '\\', '\u2028a\u2029', '\ud800', '`${globalThis.lookoutPwned = 3}`', '', '__proto__', 'constructor', 'toString', '1', 'fixed', 'r', 'at'];
      const fields: Record<string, unknown> = {};
      hostile.forEach((k, i) => setOwn(fields, k, i % 3 === 0 ? `text ${i}` : i % 3 === 1 ? i * 1.5 : { nested: i }));
      for (const pick of [undefined, new Set(hostile), new Set(['__proto__', '"}); globalThis.lookoutPwned = 1; ({"', 'toString'])]) {
        const { out } = roundTrip(fields, pick);
        expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
        expect(ownEntries(out)).toEqual(ownEntries(fields).filter(([k]) => !pick || pick.has(k as string)));
      }
      expect((globalThis as { lookoutPwned?: number }).lookoutPwned).toBeUndefined();
    });

    it('any names and values, whole or picked, read back as written, in their order, past the layouts kept and wider than a decoder takes', () => {
      // Values as JSON carries them (no −0, NaN or infinities: the codec writes −0 as 0, as JSON does).
      const value = fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }).map((v) => (Object.is(v, -0) ? 0 : v)), fc.integer(), fc.string(), fc.boolean(), fc.constant(null), fc.record({ a: fc.nat() }));
      const entries = fc.uniqueArray(fc.tuple(fc.oneof(fc.string(), fc.constantFrom('__proto__', 'constructor', '0', '7')), value), { selector: ([k]) => k, maxLength: 80 });
      fc.assert(
        fc.property(entries, fc.func(fc.boolean()), (list, keep) => {
          const fields: Record<string, unknown> = {};
          for (const [k, v] of list) setOwn(fields, k, v);
          const whole = roundTrip(fields);
          expect(ownEntries(whole.out)).toEqual(ownEntries(fields));
          expect(whole.done).toBe(true);
          const pick = new Set(list.map(([k]) => k).filter((k) => keep(k)));
          expect(ownEntries(roundTrip(fields, pick).out)).toEqual(ownEntries(fields).filter(([k]) => pick.has(k as string)));
        }),
        { numRuns: 1500, seed: 23 },
      );
    });
  });
});

