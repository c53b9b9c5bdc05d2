/**
 * A list row's reading, field by field, over seeded rows of every list kind: the known fields in every form the readers
 * take (and some they refuse), extras of every JSON type before, between and after them, `balance`, and a member named
 * `__proto__`. What each field of the reading must be is worked out here from the row itself, not from the reader
 * lists the parser is built from: extras first in the row's order (normalized), then the known fields in the kind's
 * order, each the value its own reader gives alone (`readX` of src/source/read), null when absent or unreadable.
 */
import { describe, expect, it } from 'vitest';
import { listReadings, type ListKind } from '../src/source/parse/lists.js';
import { readAmount } from '../src/source/read/amounts.js';
import { readBoolean } from '../src/source/read/booleans.js';
import { readInteger, readNumber, readString } from '../src/source/read/numbers.js';
import type { FieldRead } from '../src/source/read/result.js';
import { readTime } from '../src/source/read/times.js';
import { normalizeExtra } from '../src/source/values.js';
import { hash32 } from '../src/simulator/random.js';

const POLL = Date.UTC(2026, 10, 27, 12, 0, 0);

type Read = (v: unknown) => FieldRead<unknown>;
const COMMON: Array<[string, Read]> = [
  ['id', readString],
  ['wallet', readString],
  ['chain', readString],
  ['protocol', readString],
  ['asset', readString],
  ['value_usd', readNumber],
];
/** Each kind's own fields after the common ones, in the order the reading keeps them. */
const OWN: Record<ListKind, Array<[string, Read]>> = {
  position: [
    ['nav_usd', readNumber],
    ['pnl_usd', readNumber],
    ['verified', readBoolean],
  ],
  asset: [
    ['position_id', readString],
    ['type', readString],
    ['token_address', readString],
    ['decimals', readInteger],
    ['price_usd', readNumber],
  ],
  holding: [
    ['token_address', readString],
    ['decimals', readInteger],
    ['price_usd', readNumber],
  ],
};
const HELD = ['wallet_address', 'symbol', 'timestamp', 'updated_at', 'created_at'];

describe('a list row read field by field', () => {
  it('keeps only a row\'s own members as extras, whatever Object.prototype shows', () => {
    Object.defineProperty(Object.prototype, 'polluted', { value: 'p', enumerable: true, configurable: true, writable: true });
    try {
      const { readings } = listReadings('position', [{ id: 'p1', chain: 'base', apy: '0.5' }], POLL);
      expect(Object.keys(readings[0]!.fields)).not.toContain('polluted');
      expect(Object.hasOwn(readings[0]!.fields, 'polluted')).toBe(false);
      expect(readings[0]!.fields.apy).toBe(0.5);
    } finally {
      delete (Object.prototype as Record<string, unknown>).polluted;
    }
  });

  for (const kind of ['position', 'asset', 'holding'] as const) {
    it(`keeps every ${kind} field as its own reader reads it, extras first in the row's order (2,000 seeded rows)`, () => {
      let i = 0;
      const pick = <T>(xs: readonly T[]): T => xs[hash32(21, kind, i++) % xs.length]!;
      const known = [...COMMON, ...OWN[kind]];
      const values: Record<string, unknown[]> = {
        string: ['a', 'USDC', ' ', '', 7, null, true, { x: 1 }],
        number: [1.5, '2.5e-1', ' 3 ', '0x10', 'n/a', null, '', false],
        boolean: [true, false, 'true', 'no', 1, null, 'maybe'],
        time: [1_795_780_561, '2026-11-27T11:56:01.000Z', '2026-11-27T11:56:01+02:00', 'yesterday', null],
      };
      const kindOf = (read: Read) => (read === readString ? 'string' : read === readBoolean ? 'boolean' : 'number');
      const extras = (): unknown => pick(['0.25', '007', 'text', 12, null, [1, '2'], { a: '1e1' }, '99999999999999999999']);
      for (let n = 0; n < 2_000; n++) {
        // Members in a shuffled order, some left out, extras among them.
        const members: Array<[string, unknown]> = [];
        for (const [k, read] of known) if (pick([true, true, false])) members.push([k, k === 'id' ? `${kind}-${n}` : pick(values[kindOf(read)]!)]);
        if (pick([true, false])) members.push(['timestamp', pick(values.time!)]);
        if (pick([true, false])) members.push(['wallet_address', pick(['0xw', null, 3])]);
        if (pick([true, false])) members.push(['symbol', pick(['WETH', ''])]);
        if (kind !== 'position' || pick([true, false])) members.push(['balance', pick(['1000000', '1.5', 'x', null])]);
        const extrasCount = pick([0, 1, 3]);
        for (let e = 0; e < extrasCount; e++) members.push([pick(['apy', 'debt_usd', 'note', '__proto__', 'z']), extras()]);
        if (pick([true, false])) members.push([pick(['updated_at', 'created_at']), pick(values.time!)]);
        for (let j = members.length - 1; j > 0; j--) {
          const k = hash32(22, kind, n, j) % (j + 1);
          [members[j], members[k]] = [members[k]!, members[j]!];
        }
        // JSON.parse makes a row as the service's would: `__proto__` an own member, the last of a repeated name kept.
        const raw = JSON.parse(`{${members.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`) as Record<string, unknown>;

        const { readings, rejected } = listReadings(kind, [raw], POLL);
        if (readings.length === 0) continue; // nothing identified it: rejected, as listReadings' own tests show
        const fields = readings[0]!.fields;
        const ownNames = new Set([...known.map(([k]) => k), ...HELD, 'balance']);
        const extraNames = Object.keys(raw).filter((k) => !ownNames.has(k));
        const keptKnown = known.map(([k]) => k);
        const expectedOrder = [...extraNames, ...keptKnown, ...(kind === 'position' ? [] : ['balance'])];
        expect(Object.keys(fields).slice(0, expectedOrder.length), JSON.stringify(raw)).toEqual(expectedOrder);
        for (const k of extraNames) expect(Object.getOwnPropertyDescriptor(fields, k)?.value, k).toEqual(normalizeExtra(raw[k]));
        for (const [k, read] of known) {
          if (k === 'wallet' || k === 'asset') continue; // filled from wallet_address / symbol when absent (listReadings' own tests)
          const r = read(raw[k]);
          expect(fields[k], `${k} of ${JSON.stringify(raw)}`).toEqual(r.ok ? r.value : null);
        }
        if (kind !== 'position') {
          const decimals = readInteger(raw.decimals);
          const b = readAmount(raw.balance, decimals.ok ? decimals.value : null);
          expect(fields.balance, JSON.stringify(raw)).toEqual(b.ok ? b.value : null);
        } else expect(Object.hasOwn(fields, 'balance')).toBe(false);
        for (const k of ['timestamp', 'updated_at', 'created_at']) {
          const t = readTime(raw[k]);
          if (t.ok && t.value !== null) expect(fields[k], k).toBe(t.value);
          else expect(Object.hasOwn(fields, k), k).toBe(false);
        }
        // Each field that did not read is a rejection of that field, with the reason its own reader gives.
        const refused = [...known, ['timestamp', readTime] as [string, Read], ['updated_at', readTime] as [string, Read], ['created_at', readTime] as [string, Read]]
          .filter(([k]) => k !== 'wallet_address')
          .flatMap(([k, read]) => {
            const r = read(raw[k]);
            return r.ok ? [] : [`${k}: ${r.reason}`];
          });
        const fieldRejections = rejected.filter((x) => x.field !== undefined && x.field !== 'balance' && x.field !== 'wallet_address' && x.field !== 'symbol');
        expect(fieldRejections.map((x) => `${x.field}: ${x.reason}`).sort(), JSON.stringify(raw)).toEqual(refused.sort());
      }
    });
  }
});
