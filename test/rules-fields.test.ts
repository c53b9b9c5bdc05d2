/**
 * The fields and labels a rule may name (src/rules/fields.ts) are what `lookout check` holds a rule's `select`,
 * templates and `threshold` field against: a name missing there refuses a good rule, a stale one lets a typo through
 * to render a blank at 3 a.m. The oracle is the real thing: the readings the client makes of the simulator's answers
 * over loopback (markets, positions, benchmarks), field by field and label by label.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Reading, ReadingKind } from '../src/model.js';
import { aReading, closest, didYouMean, fieldType, isKnownLabel, knownFields, knownLabels, type FieldType } from '../src/rules/fields.js';
import { listReadings } from '../src/source/parse/lists.js';
import { simulatedReadings } from './metrics-simulated.js';

const T0 = Date.UTC(2026, 0, 5);

let byKind: Map<ReadingKind, Reading[]>;
beforeAll(async () => {
  const polls = await simulatedReadings({ markets: 30, positions: 200 });
  byKind = new Map();
  for (const r of [...polls.values()].flat()) byKind.set(r.kind, [...(byKind.get(r.kind) ?? []), r]);
}, 60_000);

/** Every dotted path into a reading's fields (objects and their members), with the type of each value seen. */
function pathsOf(readings: readonly Reading[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const visit = (v: unknown, path: string) => {
    if (v === null || v === undefined) return; // unknown this time (SPEC §6): says nothing of the type
    const type = typeof v === 'object' ? 'object' : typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v) ? 'numeric string' : typeof v;
    out.set(path, (out.get(path) ?? new Set()).add(type));
    if (typeof v === 'object' && !Array.isArray(v)) for (const [k, m] of Object.entries(v)) visit(m, `${path}.${k}`);
  };
  for (const r of readings) for (const [k, v] of Object.entries(r.fields)) visit(v, k);
  return out;
}

/** What a value of each known type may arrive as: a number may come as a decimal string (token amounts, raw prices). */
const accepts: Record<FieldType, readonly string[]> = { number: ['number', 'numeric string'], string: ['string', 'numeric string'], boolean: ['boolean'], object: ['object'] };

describe('the fields and labels a rule may name', () => {
  for (const kind of ['market', 'position', 'benchmark'] as const) {
    it(`${kind}: exactly the fields the client reads from the service, each of its type`, () => {
      const readings = [...(byKind.get(kind) ?? [])];
      // The times a position row may carry: the simulator sends none, a service may (the same parser reads them).
      if (kind === 'position') readings.push(...listReadings('position', [{ id: 'p-times', verified: true, timestamp: 1_700_000_000, updated_at: '2024-05-01T10:00:00Z', created_at: 1_700_000_000_000 }], T0).readings);
      const seen = pathsOf(readings);
      expect(seen.size).toBeGreaterThan(5);
      expect([...seen.keys()].sort()).toEqual(Object.keys(knownFields[kind]!).sort());
      for (const [path, types] of seen) {
        for (const t of types) expect({ path, type: t }).toEqual({ path, type: expect.toBeOneOf([...accepts[fieldType(kind, path) as FieldType]]) });
      }
    });

    it(`${kind}: exactly the labels the client puts on a reading (and the poll's name)`, () => {
      const names = new Set((byKind.get(kind) ?? []).flatMap((r) => Object.keys(r.labels)));
      names.delete('poll');
      expect([...names].sort()).toEqual([...knownLabels[kind]!].sort());
      for (const n of names) expect(isKnownLabel(kind, n)).toBe(true);
      expect(isKnownLabel(kind, 'loan_symbol')).toBe(false);
    });
  }

  it('a reading kind without a list is not checked: every field and label may be named', () => {
    expect(fieldType('asset', 'anything.at.all')).toBe('unknown');
    expect(isKnownLabel('holding', 'anything')).toBe(true);
    expect(fieldType('market', 'utilisation')).toBeUndefined();
  });

  it('suggests the closest name: a small edit away, or one holding every word of it; nothing for a name far from all', () => {
    const names = Object.keys(knownFields.market!);
    expect(closest('utilisation', names)).toBe('utilization');
    expect(closest('borow_apy', names)).toBe('borrow_apy');
    expect(closest('loan_symbol', names)).toBe('market.loan_asset_symbol');
    expect(closest('blok', names)).toBe('block');
    expect(closest('xyzzy', names)).toBeUndefined();
    // Four characters or fewer: one edit at most ('idxx' is two from 'id').
    expect(closest('idxx', ['id', 'market.oracle'])).toBeUndefined();
    expect(closest('idx', ['id', 'market.oracle'])).toBe('id');
    // Of two at the same distance, the first listed.
    expect(closest('blocc', ['block', 'blocs'])).toBe('block');
    // Words: empty ones (a leading or doubled separator) ask for nothing, and a name of no word matches nothing.
    expect(closest('_loan__symbol', names)).toBe('market.loan_asset_symbol');
    expect(closest('._', ['id', 'market'])).toBeUndefined();
    expect(didYouMean('xyzzy', names)).toBe('');
    expect(didYouMean('utilisation', names)).toBe(" (did you mean 'utilization'?)");
    expect(didYouMean('utilization', names)).toBe('');
    expect(aReading('asset')).toBe('an asset reading');
    expect(aReading('market')).toBe('a market reading');
  });
});
