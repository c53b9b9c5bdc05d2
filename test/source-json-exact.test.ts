/**
 * parseJsonExact and its steps against a plain oracle, over many seeded random JSON texts: long integer literals
 * outside strings (signed, in arrays, objects, at the top, with whitespace around) arrive as their exact digits;
 * digits inside strings (after `:`, `,`, `[`, escaped quotes), fractions and exponents with long digit runs are
 * left as JSON.parse reads them.
 */
import { describe, expect, it } from 'vitest';
import { mayHoldLongInteger, parseJsonExact, parseJsonExactSteps } from '../src/source/json.js';
import { hash32 } from '../src/simulator/random.js';
import { runSync } from '../src/yielding.js';

/** The oracle: every string skipped whole by a regex, every long integer literal outside them quoted. */
const oracle = (text: string): unknown =>
  JSON.parse(text.replace(/"(?:[^"\\]|\\.)*"|(?<![\w.+-])-?\d{16,}(?![\d.eE])/g, (m) => (m.charCodeAt(0) === 34 ? m : `"${m}"`)));

/** A seeded source of small random choices. */
function randomOf(seed: number): (n: number) => number {
  let i = 0;
  return (n) => hash32(seed, i++) % n;
}

const digits = (pick: (n: number) => number, n: number): string => {
  let s = String(1 + pick(9));
  while (s.length < n) s += String(pick(10));
  return s;
};

/** A JSON number's text: short or long integers, fractions and exponents with long digit runs. */
function numberText(pick: (n: number) => number): string {
  const sign = pick(3) === 0 ? '-' : '';
  const whole = pick(2) === 0 ? digits(pick, 1 + pick(5)) : digits(pick, 15 + pick(25));
  switch (pick(4)) {
    case 0:
      return `${sign}${whole}.${digits(pick, 1 + pick(20))}`;
    case 1:
      return `${sign}${whole}e${pick(2) ? '-' : '+'}${digits(pick, 1 + pick(2))}`;
    default:
      return sign + whole;
  }
}

/** A JSON string's text: digit runs after `:`, `,`, `[`, escaped quotes and backslashes. */
function stringText(pick: (n: number) => number): string {
  const parts = ['a', ':', ',', '[', ' ', '\\"', '\\\\', '-', '}', ']', 'é'];
  let s = '';
  for (let i = pick(6); i > 0; i--) s += pick(2) ? parts[pick(parts.length)] : digits(pick, 1 + pick(22));
  return `"${s}"`;
}

const ws = (pick: (n: number) => number): string => (pick(4) === 0 ? ' \n'.slice(0, 1 + pick(2)) : '');

function valueText(pick: (n: number) => number, depth: number, wide = false): string {
  const kind = wide ? 4 : depth > 3 ? pick(4) : pick(7);
  if (kind === 0) return numberText(pick);
  if (kind === 1) return stringText(pick);
  if (kind === 2) return ['true', 'false', 'null'][pick(3)]!;
  if (kind === 3) return numberText(pick);
  const n = wide ? 300 : pick(5);
  const items: string[] = [];
  for (let i = 0; i < n; i++) {
    const v = ws(pick) + valueText(pick, depth + 1) + ws(pick);
    items.push(kind === 4 ? v : `${ws(pick)}${stringText(pick)}${ws(pick)}:${v}`);
  }
  return kind === 4 ? `[${items.join(',')}]` : `{${items.join(',')}}`;
}

describe('parseJsonExact over random texts', () => {
  it('gives what the oracle gives, in one go and in steps, for 2,000 texts', () => {
    for (let seed = 1; seed <= 2_000; seed++) {
      const pick = randomOf(seed);
      // Every tenth text is a document around a wide array, which the steps parse in parts.
      const text = seed % 10 === 0 ? `{"data":{"rows":${valueText(pick, 0, true)}}}` : ws(pick) + valueText(pick, 0) + ws(pick);
      const want = oracle(text);
      expect(parseJsonExact(text), `seed ${seed}: ${text.slice(0, 200)}`).toEqual(want);
      expect(runSync(parseJsonExactSteps(text, 0)), `seed ${seed} in steps`).toEqual(want);
      // The quick test never says no to a text that holds a long integer outside its strings.
      if (!mayHoldLongInteger(text)) expect(JSON.parse(text), `seed ${seed}: no long integer`).toEqual(want);
    }
  });

  it('skips the scan for digit runs inside strings only (the hex addresses of a positions page), never for a literal', () => {
    const page = (wallet: string) => `{"data":[{"id":"pos_fd6a0a5d75d865a1","wallet":"${wallet}","chain":"base"}],"page_info":{"has_more":true}}`;
    expect(mayHoldLongInteger(page('0x4d2fc2b0696ade3253a178e7059509152530480b'))).toBe(false);
    expect(mayHoldLongInteger(page('1234567890123456'))).toBe(false);
    for (const literal of ['1234567890123456', '-1234567890123456', '123456789012345678901234567890']) {
      for (const text of [literal, ` ${literal}`, `[${literal}]`, `[1,\n ${literal}]`, `{"a": ${literal}}`, `{"a":"x","b":${literal}}`]) {
        expect(mayHoldLongInteger(text), text).toBe(true);
        expect(parseJsonExact(text), text).toEqual(JSON.parse(text.replace(/-?\d{16,}/, (m) => `"${m}"`)));
      }
    }
  });
});

describe('parseJsonExact on text that is not JSON', () => {
  it.each(['[01234567890123456789]', '[-00000000000000001]', '{"a":00000000000000000012}', '[0123]'])('refuses %s as JSON.parse does', (text) => {
    expect(() => JSON.parse(text)).toThrow();
    expect(() => parseJsonExact(text)).toThrow();
    expect(() => runSync(parseJsonExactSteps(text, 0))).toThrow();
  });
});
