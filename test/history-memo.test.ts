/**
 * The engine's look-back memo (src/alerts/history-memo.ts) against the store's own `historyAt`, on a real SQLite
 * file: after every change to history — a newer reading, a new revision of a time already stored, a reading older
 * than an answer, a write the memo was not told about, a rolled-back transaction, a prune — every question over a
 * grid of times (each stored time, one ms either side, far before and after) must get the row `historyAt` gives.
 * The memo answers from spans it remembered before the change, so a span kept too long shows as a wrong row here.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { HistoryMemo } from '../src/alerts/history-memo.js';
import type { Reading } from '../src/model.js';
import type { HistoryChanges } from '../src/store/history-changes.js';
import type { Store } from '../src/store/index.js';
import { engineFor, HOUR, MIN, T0, market, outcome, rule, tempDirs, tempStore } from './alerts-helpers.js';

const dirs = tempDirs();
afterEach(() => {
  dirs.cleanup();
  saved.clear();
});

const ENTITIES = ['m1', 'm2', 'm3'];

function setup(): { store: Store; memo: HistoryMemo } {
  const store = tempStore(dirs);
  return { store, memo: new HistoryMemo(store.readings, store.readings.historyChanges()) };
}

/** Every stored `at` of the entities, one ms either side, and times before and after all of them. */
function grid(store: Store): number[] {
  // Every time stored now, as a bucket too, and every time ever saved (a row folded into a bucket is still asked about).
  const ats = [
    ...(store.db.prepare('SELECT at FROM reading_history UNION SELECT at FROM reading_buckets').all() as Array<{ at: number }>).map((r) => r.at),
    ...saved,
  ];
  return [...new Set([T0 - 10 * HOUR, T0 + 10 * HOUR, ...ats.flatMap((a) => [a - 1, a, a + 1])])].sort((a, b) => a - b);
}

/** What the memo answers, and what the store answers, for every entity and time of the grid (forward, then backward). */
function answers(store: Store, memo: HistoryMemo): { memo: string[]; store: string[] } {
  const show = (r: Reading | undefined) => (r ? `${r.entity}@${r.at}:${JSON.stringify(r.fields.borrow_apy)}` : 'none');
  const out = { memo: [] as string[], store: [] as string[] };
  store.transaction(() => {
    memo.sync();
    const times = grid(store);
    for (const t of [...times, ...times.reverse()]) {
      for (const e of ENTITIES) {
        out.memo.push(`${e} t=${t}: ${show(memo.at('market', e, t))}`);
        out.store.push(`${e} t=${t}: ${show(store.readings.historyAt('market', e, t))}`);
      }
    }
  });
  return out;
}

function agree(store: Store, memo: HistoryMemo): void {
  const a = answers(store, memo);
  expect(a.memo).toEqual(a.store);
}

const saved = new Set<number>();
const save = (store: Store, readings: Reading[], now: number) => {
  for (const r of readings) saved.add(r.at);
  return store.transaction(() => store.readings.savePoll('markets', readings, now));
};
const apy = (entity: string, at: number, borrow_apy: number) => market(entity, at, { borrow_apy });

describe('HistoryMemo', () => {
  it('answers as historyAt does through newer readings, a revision of a stored time, older readings and boundaries', () => {
    const { store, memo } = setup();
    agree(store, memo); // empty history: nothing that old for anyone
    save(store, [apy('m1', T0, 0.01), apy('m2', T0 + MIN, 0.02)], T0 + MIN);
    agree(store, memo);
    // m1 again later; m3 for the first time, older than anything stored (an entity with no reading that old before).
    save(store, [apy('m1', T0 + 30 * MIN, 0.03), apy('m3', T0 - HOUR, 0.04)], T0 + 30 * MIN);
    agree(store, memo);
    // A new revision of m1's first time (same at, new value, a later poll): it wins wherever that time is the answer.
    save(store, [apy('m1', T0, 0.05)], T0 + 31 * MIN);
    agree(store, memo);
    // A reading between two stored times of m1 (the span of the older one must end at it), and one exactly at m2's.
    save(store, [apy('m1', T0 + 10 * MIN, 0.06), apy('m2', T0 + MIN, 0.07)], T0 + 32 * MIN);
    agree(store, memo);
    // A reading older than every answer remembered for m1 changes none of them.
    save(store, [apy('m1', T0 - 2 * HOUR, 0.08)], T0 + 33 * MIN);
    agree(store, memo);
  });

  it('sees rows written while it was not asked, and forgets what a rolled-back transaction showed it', () => {
    const { store, memo } = setup();
    save(store, [apy('m1', T0, 0.01), apy('m2', T0, 0.01)], T0);
    agree(store, memo);
    // Inside a transaction that then fails: the memo sees the new rows and remembers answers made of them.
    expect(() =>
      store.transaction(() => {
        // (None older than what was stored: the oldest time stays, so only the rolled-back row itself can tell.)
        store.readings.savePoll('markets', [apy('m1', T0 + 5 * MIN, 0.5), apy('m2', T0 + MIN, 0.5)], T0 + 5 * MIN);
        memo.sync();
        expect(memo.at('market', 'm1', T0 + 6 * MIN)?.fields.borrow_apy).toBe(0.5);
        expect(memo.at('market', 'm2', T0 + MIN)?.fields.borrow_apy).toBe(0.5);
        throw new Error('disk full');
      }),
    ).toThrow('disk full');
    // The next writer gets the rolled-back rows' ids, with other rows.
    save(store, [apy('m2', T0 + 7 * MIN, 0.02), apy('m3', T0, 0.03)], T0 + 7 * MIN);
    agree(store, memo);
  });

  it('forgets answers whose rows a prune deleted', () => {
    const { store, memo } = setup();
    save(store, [apy('m1', T0 - 3 * HOUR, 0.01), apy('m2', T0 - 3 * HOUR, 0.01)], T0 - 3 * HOUR);
    save(store, [apy('m1', T0, 0.02)], T0);
    agree(store, memo);
    expect(store.readings.prune(T0 - HOUR)).toBe(2);
    agree(store, memo);
  });

  it('answers as historyAt does when rows past raw_retention are folded into buckets', () => {
    const { store, memo } = setup();
    // Two minutes apart: a bucket holds several readings, so an answer from inside one changes when it is folded.
    for (let i = 0; i < 30; i++) save(store, ENTITIES.map((e, j) => apy(e, T0 + i * 2 * MIN, 0.01 * (i + j))), T0 + i * 2 * MIN);
    agree(store, memo);
    store.readings.downsample(T0 + 21 * MIN);
    agree(store, memo);
    save(store, [apy('m1', T0 + 65 * MIN, 0.5)], T0 + 65 * MIN);
    store.readings.downsample(T0 + 41 * MIN);
    agree(store, memo);
  });
});

describe('the engine keeps its look-back memo in step with the store', () => {
  it('a revision of the reading apy_jump looks back at, stored between two polls, is what the next poll judges against', () => {
    const store = tempStore(dirs);
    const engine = engineFor(store, [rule({ name: 'apy-up', kind: 'apy_jump', severity: 'warning', window: '1h', min_change: 0.02 })]);
    const save = (poll: string, at: number, apy: number, now: number) => store.transaction(() => store.readings.savePoll(poll, [market('m1', at, { borrow_apy: apy })], now));
    const judge = (at: number, apy: number) => {
      save('markets', at, apy, at);
      return store.transaction(() => engine.applyPoll(outcome('markets', 'metrics', [market('m1', at, { borrow_apy: apy })], at), at));
    };
    save('markets', T0, 0.05, T0);
    // An hour on: against the 5% of an hour ago, no jump (the memo now remembers that answer, and for how long it holds).
    expect(judge(T0 + HOUR, 0.05).events).toEqual([]);
    // The service corrects the old reading: it was 1%, not 5% (a new revision of the same time, stored by a backfill).
    save('backfill', T0, 0.01, T0 + HOUR + 30_000);
    // A minute on, looking back at T0 + 1 min: the newest reading at or before it is the revision, 1% → 5% is a jump.
    const next = judge(T0 + HOUR + MIN, 0.05);
    expect(next.events.map((e) => `${e.type} ${e.alert.entity}`)).toEqual(['firing m1']);
  });
});

/**
 * The memo over the real store, with its inputs counted: `at` is how many times it asked the store for an answer
 * (`historyAt`), `sinceRows` how many changed rows it read to decide which answers a change ends.
 */
function counted(store: Store): { memo: HistoryMemo; reads: { at: number; sinceRows: number } } {
  const changes = store.readings.historyChanges();
  const reads = { at: 0, sinceRows: 0 };
  const readings = {
    historyAt: (...a: Parameters<Store['readings']['historyAt']>) => (reads.at++, store.readings.historyAt(...a)),
    historyRange: (...a: Parameters<Store['readings']['historyRange']>) => store.readings.historyRange(...a),
  };
  const counting: HistoryChanges = {
    ...changes,
    since: (...a) => {
      const rows = changes.since(...a);
      reads.sinceRows += rows.length;
      return rows;
    },
  };
  return { memo: new HistoryMemo(readings, counting), reads };
}

/** In one transaction: a sync, then each question; every answer must be the store's. Returns how many the memo read. */
function ask(store: Store, memo: HistoryMemo, reads: { at: number }, questions: Array<[string, number]>, sync = true): number {
  const before = reads.at;
  store.transaction(() => {
    if (sync) memo.sync();
    for (const [e, t] of questions) expect(memo.at('market', e, t), `${e} at T0${t >= T0 ? '+' : ''}${t - T0}`).toEqual(store.readings.historyAt('market', e, t));
  });
  return reads.at - before;
}

const show = (r: Reading | undefined) => (r ? `${r.entity}@${r.at}:${JSON.stringify(r.fields.borrow_apy)}` : 'none');

describe('HistoryMemo reads the store only when an answer may have changed', () => {
  it('a second ask within a remembered answer reads nothing, in the same sync and the next ones while nothing is stored', () => {
    const { store } = setup();
    const { memo, reads } = counted(store);
    // Each reading stored after its own time (as a poll stores a block's reading): the answers start before the oldest storage time.
    save(store, [apy('m1', T0 - MIN, 0.01)], T0);
    save(store, [apy('m1', T0 + 9 * MIN, 0.02)], T0 + 10 * MIN);
    // Before every row (no reading that old), exactly at an answer's own time, inside an answer, after the last one;
    // m2 has nothing stored at all; m1 asked again after m2 (a miss for another entity keeps m1's answers).
    const qs: Array<[string, number]> = [['m1', T0 - HOUR], ['m1', T0 - MIN], ['m1', T0 + 5 * MIN], ['m2', T0], ['m1', T0 + HOUR]];
    expect(ask(store, memo, reads, qs)).toBe(4); // T0+5m is within the answer asked for at T0−1m
    expect(ask(store, memo, reads, qs, false)).toBe(0);
    expect(ask(store, memo, reads, [['m2', T0 + HOUR], ...qs, ['m1', T0 + 5 * MIN + 1]])).toBe(0);
    expect(ask(store, memo, reads, qs)).toBe(0);
  });

  it('a row older than an answer or at or after its end keeps it; a row inside it ends only that answer', () => {
    const { store } = setup();
    const { memo, reads } = counted(store);
    save(store, [apy('m1', T0, 0.01), apy('m2', T0, 0.01)], T0);
    save(store, [apy('m1', T0 + 10 * MIN, 0.02)], T0 + 10 * MIN);
    // m1 from T0 until T0+10m, m1 from T0+10m on, m2 from T0 on.
    const early: [string, number] = ['m1', T0 + MIN];
    const late: [string, number] = ['m1', T0 + 15 * MIN];
    expect(ask(store, memo, reads, [early, late, ['m2', T0]])).toBe(3);
    // Older than every answer, and rows of an entity nobody asked about.
    save(store, [apy('m1', T0 - HOUR, 0.03), apy('m3', T0 + MIN, 0.03)], T0 + 11 * MIN);
    expect(ask(store, memo, reads, [early, late, ['m2', T0]])).toBe(0);
    // A new revision at T0+10m: the end of the early answer (kept), the start of the late one (ended).
    save(store, [apy('m1', T0 + 10 * MIN, 0.04)], T0 + 12 * MIN);
    expect(ask(store, memo, reads, [early])).toBe(0);
    expect(ask(store, memo, reads, [late])).toBe(1);
    // A newer reading inside the late answer only.
    save(store, [apy('m1', T0 + 20 * MIN, 0.05)], T0 + 20 * MIN);
    expect(ask(store, memo, reads, [early, ['m2', T0]])).toBe(0);
    expect(ask(store, memo, reads, [late, ['m1', T0 + 25 * MIN]])).toBe(2);
  });

  it('rows stored at or after the end of every remembered answer of their kind are not read', () => {
    const { store } = setup();
    const { memo, reads } = counted(store);
    save(store, [apy('m1', T0, 0.01), apy('m2', T0, 0.01)], T0);
    save(store, [apy('m1', T0 + 10 * MIN, 0.02), apy('m2', T0 + 20 * MIN, 0.02)], T0 + 20 * MIN);
    expect(ask(store, memo, reads, [['m1', T0 + MIN], ['m2', T0 + MIN]])).toBe(2); // both end by T0+20m
    save(store, [apy('m1', T0 + 20 * MIN, 0.03), apy('m2', T0 + 30 * MIN, 0.03)], T0 + 30 * MIN);
    expect(ask(store, memo, reads, [['m1', T0 + MIN], ['m2', T0 + MIN]])).toBe(0);
    expect(reads.sinceRows).toBe(0);
    save(store, [apy('m2', T0 + 5 * MIN, 0.04)], T0 + 31 * MIN);
    expect(ask(store, memo, reads, [['m1', T0 + MIN], ['m2', T0 + MIN]])).toBe(1);
    expect(reads.sinceRows).toBe(1);
  });

  it('a prune ends only the answers that start before the oldest row kept', () => {
    const { store } = setup();
    const { memo, reads } = counted(store);
    save(store, [apy('m1', T0 - 2 * HOUR, 0.01)], T0 - 2 * HOUR);
    save(store, [apy('m1', T0, 0.02), apy('m2', T0, 0.02)], T0); // stored at their own time: the oldest kept after the prune
    const kept: Array<[string, number]> = [['m1', T0 + MIN], ['m2', T0 + MIN]];
    expect(ask(store, memo, reads, [['m1', T0 - HOUR], ...kept])).toBe(3);
    expect(store.readings.prune(T0 - HOUR)).toBe(1);
    expect(ask(store, memo, reads, kept)).toBe(0);
    expect(ask(store, memo, reads, [['m1', T0 - HOUR]])).toBe(1);
  });

  it('an entity with nothing stored keeps its answer while only other entities are stored, from an empty history on', () => {
    const { store } = setup();
    const { memo, reads } = counted(store);
    expect(ask(store, memo, reads, [['m1', T0]])).toBe(1);
    save(store, [apy('m2', T0, 0.01)], T0);
    expect(ask(store, memo, reads, [['m1', T0]])).toBe(0);
  });

  it('keeps the last four answers of an entity: a fifth replaces the oldest', () => {
    const { store } = setup();
    const { memo, reads } = counted(store);
    save(store, [0, 10, 20, 30, 40].map((m) => apy('m1', T0 + m * MIN, m)), T0 + 40 * MIN);
    const q = (m: number): [string, number] => ['m1', T0 + (m + 1) * MIN];
    expect(ask(store, memo, reads, [q(0), q(10), q(20), q(30)])).toBe(4);
    expect(ask(store, memo, reads, [q(30), q(20), q(10), q(0)])).toBe(0);
    expect(ask(store, memo, reads, [q(40)])).toBe(1);
    expect(ask(store, memo, reads, [q(10), q(20), q(30), q(40)])).toBe(0);
    expect(ask(store, memo, reads, [q(0)])).toBe(1);
  });

  it('forgets, at every 64th sync, an entity not asked about in the 64 syncs before it: its next ask reads again', () => {
    const { store } = setup();
    const { memo, reads } = counted(store);
    save(store, [apy('m1', T0, 0.01), apy('m2', T0, 0.02), apy('m3', T0, 0.03)], T0);
    const syncs = (n: number) => {
      for (let i = 0; i < n; i++) store.transaction(() => memo.sync());
    };
    expect(ask(store, memo, reads, [['m1', T0], ['m2', T0]])).toBe(2); // sync 1
    syncs(62);
    expect(ask(store, memo, reads, [['m3', T0]])).toBe(1); // sync 64: the sweep keeps m1 and m2 (63 syncs)
    syncs(62);
    expect(ask(store, memo, reads, [['m1', T0]])).toBe(0); // sync 127: no sweep since 64, m1 still there
    expect(ask(store, memo, reads, [['m1', T0]])).toBe(0); // sync 128: the sweep keeps m1 (asked 1 sync ago)…
    expect(ask(store, memo, reads, [['m2', T0]], false)).toBe(1); // …and forgot m2 (127 syncs)
    expect(ask(store, memo, reads, [['m3', T0]], false)).toBe(1); // …and m3 (exactly 64)
  });
});

describe('HistoryMemo answers as historyAt does', () => {
  it('when a later write of the newest row\'s millisecond sorts before it, and when such a write rolls back', () => {
    const { store, memo } = setup();
    save(store, [apy('m1', T0 - HOUR, 0.01)], T0 - HOUR); // m1 first: the smaller entity id, so its rows sort first
    save(store, [apy('m2', T0 + MIN, 0.02)], T0 + MIN); // the newest row: m2's, stored at T0 + 1m
    agree(store, memo);
    // Another write in the same millisecond: m1's row comes before m2's in key order, yet is new to the memo.
    store.transaction(() => store.readings.savePoll('markets-b', [apy('m1', T0, 0.03)], T0 + MIN));
    saved.add(T0);
    agree(store, memo);
    // A third one, which the memo answers from before its transaction rolls back.
    saved.add(T0 + 30_000);
    expect(() =>
      store.transaction(() => {
        store.readings.savePoll('markets-c', [apy('m1', T0 + 30_000, 0.04)], T0 + MIN);
        memo.sync();
        expect(memo.at('market', 'm1', T0 + 40_000)?.fields.borrow_apy).toBe(0.04);
        throw new Error('rolled back');
      }),
    ).toThrow('rolled back');
    agree(store, memo);
  });

  it('after a transaction rolls back, when its first sync saw an empty history', () => {
    const { store } = setup();
    const { memo, reads } = counted(store);
    expect(ask(store, memo, reads, [['m1', T0]])).toBe(1);
    save(store, [apy('m1', T0, 0.01)], T0);
    expect(ask(store, memo, reads, [['m1', T0 + 6 * MIN]])).toBe(1);
    expect(() =>
      store.transaction(() => {
        store.readings.savePoll('markets', [apy('m1', T0 + 5 * MIN, 0.5)], T0 + 5 * MIN);
        memo.sync();
        expect(memo.at('market', 'm1', T0 + 6 * MIN)?.fields.borrow_apy).toBe(0.5);
        throw new Error('disk full');
      }),
    ).toThrow('disk full');
    ask(store, memo, reads, [['m1', T0 + 6 * MIN]]);
  });

  it('for what it was asked before its first sync, in a transaction that then rolled back', () => {
    const { store } = setup();
    const { memo, reads } = counted(store);
    save(store, [apy('m2', T0, 0.01)], T0);
    expect(() =>
      store.transaction(() => {
        store.readings.savePoll('markets', [apy('m1', T0, 0.5)], T0 + MIN);
        expect(memo.at('market', 'm1', T0)?.fields.borrow_apy).toBe(0.5);
        throw new Error('disk full');
      }),
    ).toThrow('disk full');
    ask(store, memo, reads, [['m1', T0]]);
  });

  it('when every row was folded into buckets and the buckets are then pruned', () => {
    const { store } = setup();
    const { memo, reads } = counted(store);
    save(store, [apy('m1', T0, 0.01)], T0);
    save(store, [apy('m1', T0 + 2 * MIN, 0.02)], T0 + 2 * MIN);
    ask(store, memo, reads, [['m1', T0 + 3 * MIN]]);
    store.readings.downsample(T0 + HOUR);
    expect(store.readings.rawSince()).toBeNull();
    expect(ask(store, memo, reads, [['m1', T0 + 3 * MIN]])).toBe(1); // the row it answered from is a bucket now
    expect(show(store.readings.historyAt('market', 'm1', T0 + 3 * MIN))).toBe(`m1@${T0 + 2 * MIN}:0.02`);
    store.readings.prune(T0 + HOUR);
    expect(store.readings.historyAt('market', 'm1', T0 + 3 * MIN)).toBeUndefined();
    ask(store, memo, reads, [['m1', T0 + 3 * MIN]]);
  });

  it('for the answer a row at or after the end of a later-remembered answer ends', () => {
    // m1's answer runs to +∞, m2's (remembered after it) ends at T0+10m: a row of m1 at T0+12m must still be read.
    const { store } = setup();
    const { memo, reads } = counted(store);
    save(store, [apy('m1', T0, 0.01), apy('m2', T0, 0.01)], T0);
    save(store, [apy('m2', T0 + 10 * MIN, 0.02)], T0 + 10 * MIN);
    ask(store, memo, reads, [['m1', T0 + MIN], ['m2', T0 + MIN]]);
    save(store, [apy('m1', T0 + 12 * MIN, 0.03)], T0 + 12 * MIN);
    ask(store, memo, reads, [['m1', T0 + 13 * MIN], ['m2', T0 + MIN]]);
  });

  it('gives the store\'s own historyRange for a range', () => {
    const { store, memo } = setup();
    save(store, [apy('m1', T0, 0.01), apy('m2', T0, 0.01)], T0);
    save(store, [apy('m1', T0 + 10 * MIN, 0.02)], T0 + 10 * MIN);
    const range = memo.range('market', 'm1', T0, T0 + 10 * MIN);
    expect(range.map(show)).toEqual([`m1@${T0}:0.01`, `m1@${T0 + 10 * MIN}:0.02`]);
    expect(range).toEqual(store.readings.historyRange('market', 'm1', T0, T0 + 10 * MIN));
  });

  it('for any sequence of polls, rolled-back polls, prunes, folds into buckets and idle syncs', () => {
    const entity = fc.constantFrom('m1', 'm2', 'm3');
    const minute = fc.integer({ min: 0, max: 40 });
    const question = fc.tuple(entity, minute, fc.constantFrom(-1, 0, 1));
    const op = fc.oneof(
      fc.record({ op: fc.constant('save' as const), rows: fc.array(fc.tuple(entity, minute), { minLength: 1, maxLength: 3 }), after: fc.integer({ min: 0, max: 8 }) }),
      fc.record({ op: fc.constant('rollback' as const), rows: fc.array(fc.tuple(entity, minute), { minLength: 1, maxLength: 3 }), qs: fc.array(question, { maxLength: 3 }) }),
      fc.record({ op: fc.constant('prune' as const), back: fc.integer({ min: 0, max: 30 }) }),
      fc.record({ op: fc.constant('fold' as const), back: fc.integer({ min: 0, max: 30 }) }),
      fc.record({ op: fc.constant('idle' as const), syncs: fc.integer({ min: 1, max: 70 }) }),
      fc.record({ op: fc.constant('ask' as const), qs: fc.array(question, { minLength: 1, maxLength: 8 }) }),
    );
    let value = 0;
    fc.assert(
      fc.property(fc.array(op, { maxLength: 14 }), (ops) => {
        const { store } = setup();
        const { memo, reads } = counted(store);
        const at = (m: number, off = 0) => T0 + m * MIN + off;
        const qs = (list: Array<[string, number, number]>) => list.map(([e, m, off]): [string, number] => [e, at(m, off)]);
        // One write in three stored in the same millisecond as the one before (two polls saved with one clock reading):
        // its rows can sort before the newest row the memo saw.
        let now = T0;
        const write = (rows: Array<[string, number]>) => {
          const readings = rows.map(([e, m]) => apy(e, at(m), ++value));
          return store.readings.savePoll('markets', readings, (now += value % 3 === 0 ? 0 : 1));
        };
        for (const o of ops) {
          if (o.op === 'save') {
            now += o.after * MIN;
            store.transaction(() => write(o.rows));
          } else if (o.op === 'rollback') {
            expect(() =>
              store.transaction(() => {
                write(o.rows);
                memo.sync();
                for (const [e, t] of qs(o.qs)) expect(show(memo.at('market', e, t))).toBe(show(store.readings.historyAt('market', e, t)));
                throw new Error('rolled back');
              }),
            ).toThrow('rolled back');
          } else if (o.op === 'prune') store.readings.prune(now - o.back * MIN);
          else if (o.op === 'fold') store.readings.downsample(now - o.back * MIN);
          else if (o.op === 'idle') for (let i = 0; i < o.syncs; i++) store.transaction(() => memo.sync());
          else ask(store, memo, reads, qs(o.qs));
          // After every step, the questions of every entity at every minute (and one ms either side) of the range.
          const all: Array<[string, number]> = [];
          for (const e of ENTITIES) for (let m = -1; m <= 41; m++) for (const off of [-1, 0, 1]) all.push([e, at(m, off)]);
          ask(store, memo, reads, all);
        }
        store.close();
      }),
      { numRuns: 60, seed: 20261125 },
    );
  });
});
