/**
 * The replay's batches by slot (src/backtest/batch.ts) answer as the maps keyed by `kind NUL entity` they replaced:
 * a run's batch, a merge of the poll's last batch with a run that stored fewer rows than it returned, and who returned
 * an entity last. Random runs (fast-check) of a few polls over a few entities of two kinds, entities read twice in a
 * run, vanished, and names holding a NUL or empty.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Slots, type Batch } from '../src/backtest/batch.js';
import type { Reading, ReadingKind } from '../src/model.js';

const key = (kind: string, entity: string) => `${kind}\u0000${entity}`;
const reading = (kind: ReadingKind, entity: string, n: number): Reading => ({ kind, entity, at: n, labels: {}, fields: { n } });

/** The replay as it was: maps keyed by string. */
class ByMaps {
  private readonly seenBy = new Map<string, { poll: string; kind: ReadingKind; entity: string }>();
  batchOf(readings: Reading[]): Map<string, Reading> {
    return new Map(readings.map((r) => [key(r.kind, r.entity), r]));
  }
  merge(carried: Map<string, Reading> | undefined, vanished: string[], fresh: Map<string, Reading>): Map<string, Reading> {
    const c = new Map(carried ?? []);
    for (const k of vanished) c.delete(k);
    return new Map([...c, ...fresh]);
  }
  see(poll: string, batch: Map<string, Reading>): void {
    for (const [k, r] of batch) if (this.seenBy.get(k)?.poll !== poll) this.seenBy.set(k, { poll, kind: r.kind, entity: r.entity });
  }
  lastSeenBy(poll: string) {
    return [...this.seenBy.values()].filter((s) => s.poll === poll);
  }
}

const entityArb = fc.tuple(fc.constantFrom<ReadingKind>('market', 'position'), fc.constantFrom('m1', 'm2', 'm3', 'a', 'a\u0000b', 'b', ''));
const runArb = fc.record({
  poll: fc.constantFrom('p1', 'p2', 'p3'),
  readings: fc.array(entityArb, { maxLength: 12 }),
  vanished: fc.array(entityArb, { maxLength: 4 }),
  complete: fc.boolean(),
});

describe('replay batches by slot', () => {
  it('answer as the maps they replaced: batches, merges, who saw an entity last', () => {
    fc.assert(
      fc.property(fc.array(runArb, { minLength: 1, maxLength: 25 }), (runs) => {
        const slots = new Slots();
        const maps = new ByMaps();
        const carry = new Map<string, Batch>();
        const carryMaps = new Map<string, Map<string, Reading>>();
        let n = 0;
        for (const run of runs) {
          const readings = run.readings.map(([kind, entity]) => reading(kind, entity, n++));
          const fresh = slots.batchOf(readings);
          const freshMap = maps.batchOf(readings);
          const freshValues = [...freshMap.values()];
          expect(fresh.readings.length).toBe(freshValues.length);
          fresh.readings.forEach((r, i) => expect(r).toBe(freshValues[i]));
          expect(fresh.slots.map((s) => key(s.kind, s.entity))).toEqual([...freshMap.keys()]);
          // The batch of a run whose entities do not repeat is the stored array itself.
          if (freshMap.size === readings.length) expect(fresh.readings).toBe(readings);
          const batch = run.complete
            ? fresh
            : slots.merge(
                carry.get(run.poll),
                run.vanished.map(([k, e]) => slots.of(k, e)),
                fresh,
              );
          const batchMap = run.complete ? freshMap : maps.merge(carryMaps.get(run.poll), run.vanished.map(([k, e]) => key(k, e)), freshMap);
          const batchValues = [...batchMap.values()];
          expect(batch.readings.length).toBe(batchValues.length);
          batch.readings.forEach((r, i) => expect(r).toBe(batchValues[i]));
          expect(batch.slots.map((s) => key(s.kind, s.entity))).toEqual([...batchMap.keys()]);
          carry.set(run.poll, batch);
          carryMaps.set(run.poll, batchMap);
          slots.see(run.poll, batch);
          maps.see(run.poll, batchMap);
          for (const p of ['p1', 'p2', 'p3']) expect(slots.lastSeenBy(p)).toEqual(maps.lastSeenBy(p));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('one slot per entity: the same kind and name meet the same slot, another kind or name another', () => {
    const slots = new Slots();
    const a = slots.of('market', 'x');
    expect(slots.of('position', 'y')).not.toBe(a);
    expect(slots.of('market', 'x')).toBe(a);
    expect(slots.of('position', 'x')).not.toBe(a);
    expect(slots.of('market', 'x ')).not.toBe(a);
  });
});
