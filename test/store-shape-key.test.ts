import { describe, expect, it } from 'vitest';
import { shapeText } from '../src/store/codec.js';
import { shapeKeyer } from '../src/store/shape-key.js';
import { hash32 } from '../src/simulator/random.js';

type Parts = [Record<string, string>, Record<string, unknown>, Record<string, string>?];

describe('shape keys', () => {
  // Each pair differs in its shape (its stored text) and must get different keys; each reading keeps its key.
  const pairs: Array<[string, Parts, Parts]> = [
    ['a label value', [{ chain: 'base' }, { v: 1 }], [{ chain: 'eth' }, { v: 1 }]],
    ['a label key', [{ chain: 'base' }, { v: 1 }], [{ net: 'base' }, { v: 1 }]],
    ['a text between a label and a field', [{ a: 'x', b: 'y' }, { v: 1 }], [{ a: 'x' }, { b: 'y', v: 1 }]],
    ['a text field', [{}, { w: '0xa', v: 1 }], [{}, { w: '0xb', v: 1 }]],
    ['a nested object', [{}, { m: { t: 1 }, v: 1 }], [{}, { m: { t: 2 }, v: 1 }]],
    ['which field is packed, same texts', [{}, { a: 'x', b: 1 }], [{}, { a: 1, b: 'x' }]],
    ['the field order', [{}, { a: 1, b: 'x' }], [{}, { b: 'x', a: 1 }]],
    ['a field present or not', [{}, { a: 1, n: undefined }], [{}, { a: 1 }]],
    ['a text or a decimal string', [{}, { a: '12x', w: 'x' }], [{}, { a: '12', w: 'x' }]],
    ['the unreadable map', [{}, { a: null }, { a: 'not a number' }], [{}, { a: null }]],
    ['the unreadable reason', [{}, { a: null }, { a: 'not a number' }], [{}, { a: null }, { a: 'too long' }]],
    ['a lone surrogate', [{ s: '\ud800' }, {}], [{ s: '\ud801' }, {}]],
    ['where one text ends and the next starts', [{ a: 'xsy', b: '' }, {}], [{ a: 'x', b: 'ys' }, {}]],
    ['a nested member\'s lone surrogate', [{}, { m: { chain: '\ud800' } }], [{}, { m: { chain: '\ud801' } }]],
    ['a nested member\'s order', [{}, { m: { a: 'x', b: 'y' } }], [{}, { m: { b: 'y', a: 'x' } }]],
    ['a nested number or its text', [{}, { m: { d: 18 } }], [{}, { m: { d: '18' } }]],
    ['a text field that is one label\'s value or another\'s', [{ a: 'x', b: 'y' }, { w: 'x' }], [{ a: 'x', b: 'y' }, { w: 'y' }]],
    ['a text field that is a label\'s value or not', [{ a: 'x' }, { w: 'x' }], [{ a: 'x' }, { w: 'z' }]],
    ['a label\'s value, the field the same', [{ a: 'x' }, { w: 'x' }], [{ a: 'y' }, { w: 'y' }]],
    ['a string past ASCII or its UTF-8 bytes', [{ s: '\u00e9' }, {}], [{ s: '\u00c3\u00a9' }, {}]],
    ['a wide code unit or two ASCII ones', [{ s: '\u4141' }, {}], [{ s: 'AA' }, {}]],
    ['a wide string or the same ending in ASCII', [{ s: '\u00e9a', t: 'b' }, {}], [{ s: '\u00e9', t: 'ab' }, {}]],
    ['a number or the text of its bytes', [{}, { m: { d: 1 } }], [{}, { m: { d: '\u0000\u0000\u0000\u0000\u0000\u0000\u00f0?' } }]],
  ];
  for (const [what, a, b] of pairs) {
    it(`tells shapes apart by ${what}`, () => {
      const key = shapeKeyer();
      expect(shapeText(...a)).not.toBe(shapeText(...b));
      const ka = key(...a);
      const kb = key(...b);
      expect(ka).toBeTypeOf('string');
      expect(kb).not.toBe(ka);
      expect(key(...a)).toBe(ka);
      expect(key(...b)).toBe(kb);
    });
  }

  it('gives equal shapes one key whatever the packed values, and keeps layout numbers past its recent ones', () => {
    const key = shapeKeyer();
    const reading = (i: number, v: number): Parts => [{ chain: 'base' }, { [`f${i}`]: v, w: '0xa' }];
    const first = Array.from({ length: 20 }, (_, i) => key(...reading(i, i)));
    expect(new Set(first).size).toBe(20);
    // 20 layouts in turn (more than are kept for matching): each gets its key again, the values aside.
    expect(Array.from({ length: 20 }, (_, i) => key(...reading(i, i + 100)))).toEqual(first);
  });

  it('tells apart and keeps keys longer than its buffer starts with (it grows, for ASCII and for wide strings)', () => {
    const key = shapeKeyer();
    const long = 'x'.repeat(2_000);
    const wide = '\u00e9'.repeat(600);
    const parts: Parts[] = [
      [{ a: `${long}1` }, { v: 1 }],
      [{ a: `${long}2` }, { v: 1 }],
      [{ a: `${wide}1` }, { w: `${long}` }],
      [{ a: `${wide}2` }, { w: `${long}` }],
    ];
    const keys = parts.map((p) => key(...p));
    expect(new Set(keys).size).toBe(4);
    // Each again, after the buffer grew: the same key.
    expect(parts.map((p) => key(...p))).toEqual(keys);
    expect(key({ a: 'short' }, { v: 1 }, undefined)).not.toBe(keys[0]);
  });

  it('has no key for labels that are not all strings (their text decides)', () => {
    const key = shapeKeyer();
    expect(key({ a: undefined as unknown as string }, { v: 1 }, undefined)).toBeUndefined();
    expect(key({ a: null as unknown as string }, { v: 1 }, undefined)).toBeUndefined();
  });

  it('finds a text among this reading\'s labels only, never among an earlier reading\'s with more of them', () => {
    // The keyer reuses its arrays from reading to reading: after a reading with two labels, the second label's value
    // is still there, past this reading's one label. Taken for this reading's label, it would give the two readings
    // below, of different shapes, one key.
    const key = shapeKeyer();
    key({ a: 'x', b: 'y' }, { w: 's' }, undefined);
    const withY = key({ a: 'x' }, { w: 'y' }, undefined);
    key({ a: 'x', b: 'z' }, { w: 's' }, undefined);
    const withZ = key({ a: 'x' }, { w: 'z' }, undefined);
    expect(withY).not.toBe(withZ);
    // And the same reading keyed again after one with no label left over gets its key again.
    key({ a: 'q' }, { w: 's' }, undefined);
    expect(key({ a: 'x' }, { w: 'y' }, undefined)).toBe(withY);
  });

  it('keys a reading by its own members, not ones its prototype chain shows (a polluted Object.prototype)', () => {
    const key = shapeKeyer();
    const clean = key({ a: 'x' }, { w: 's', v: 1 }, undefined);
    Object.defineProperty(Object.prototype, 'polluted', { value: 'p', enumerable: true, configurable: true, writable: true });
    try {
      expect(key({ a: 'x' }, { w: 's', v: 1 }, undefined)).toBe(clean);
      expect(key.last.keys).toEqual(['w', 'v']);
    } finally {
      delete (Object.prototype as Record<string, unknown>).polluted;
    }
  });
});

describe('shape keys over random readings', () => {
  /** A seeded source of small random choices. */
  const randomOf = (seed: number) => {
    let i = 0;
    return (n: number) => hash32(seed, i++) % n;
  };
  // Few choices each, so that many readings share a shape, and many differ from one by a single part.
  const LABEL_KEYS = ['chain', 'asset'];
  const LABEL_VALUES = ['base', '', '\ud800', 'a"b', '\u00e9', '\u4141'];
  const FIELD_KEYS = ['a', 'b', '__proto__', 'market'];
  const VALUES: unknown[] = [0, 1, -0, 0.5, 1e21, null, undefined, true, '12', '-0', '-12', '012', '12x', '', '\u00e9', { t: 1 }, [1]];
  // Objects as a market's nested `market` member is (strings and numbers), and the ones next to it that a key must
  // still tell apart: lone surrogates (UTF-8 merges them), strings that read as other parts, members JSON leaves out
  // or writes alike, nesting, `toJSON`, no prototype.
  const OBJECTS: unknown[] = [
    { chain: 'base', decimals: 18 },
    { chain: 'base', decimals: '18' },
    { decimals: 18, chain: 'base' },
    { chain: '\ud800' },
    { chain: '\ud801' },
    { '\ud800': 'x' },
    { '\ud801': 'x' },
    { chain: 's4:base' },
    { chain: 'base', 's4:base': '' },
    { chain: 'base}' },
    { a: NaN },
    { a: null },
    { a: Infinity },
    { a: undefined },
    {},
    { a: true, b: false },
    { a: { b: 'c' } },
    { a: ['b'] },
    { toJSON: () => 'x' },
    'x',
    Object.assign(Object.create(null) as object, { chain: 'base' }),
    '\ud800',
    '\ud801',
    'o}',
  ];
  const REASONS = ['not_a_number', 'needs_decimals'];

  function readingOf(pick: (n: number) => number): Parts {
    const labels: Record<string, string> = {};
    for (const k of LABEL_KEYS) if (pick(2)) labels[k] = LABEL_VALUES[pick(LABEL_VALUES.length)]!;
    const fields: Record<string, unknown> = {};
    const keys = FIELD_KEYS.filter(() => pick(2) === 1);
    if (pick(2)) keys.reverse();
    for (const k of keys) {
      const value = k === 'market' && pick(2) === 0 ? OBJECTS[pick(OBJECTS.length)] : VALUES[pick(VALUES.length)];
      Object.defineProperty(fields, k, { value, enumerable: true, writable: true, configurable: true });
    }
    const unreadable: Record<string, string> | undefined = pick(3) === 0 ? {} : undefined;
    if (unreadable && pick(2)) unreadable[keys[0] ?? 'a'] = REASONS[pick(REASONS.length)]!;
    return [labels, fields, unreadable];
  }

  it('gives equal keys only to readings of equal shape text (60,000 seeded readings, one keyer)', () => {
    const key = shapeKeyer();
    const textOfKey = new Map<string, string>();
    for (let seed = 1; seed <= 60_000; seed++) {
      const parts = readingOf(randomOf(seed));
      const k = key(...parts);
      if (k === undefined) continue;
      const text = shapeText(...parts);
      const had = textOfKey.get(k);
      if (had !== undefined) expect(text, `seed ${seed}: the key of ${had}`).toBe(had);
      textOfKey.set(k, text);
    }
    // Not vacuous: many readings met a shape again.
    expect(textOfKey.size).toBeLessThan(30_000);
    expect(textOfKey.size).toBeGreaterThan(500);
  });
});
