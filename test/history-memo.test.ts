/**
 * The engine's look-back memo (src/alerts/history-memo.ts) against the store's own `historyAt`, on a real SQLite
 * file: after every change to history — a newer reading, a new revision of a time already stored, a reading older
 * than an answer, a write the memo was not told about, a rolled-back transaction, a prune — every question over a
 * grid of times (each stored time, one ms either side, far before and after) must get the row `historyAt` gives.
 * The memo answers from spans it remembered before the change, so a span kept too long shows as a wrong row here.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { HistoryMemo } from '../src/alerts/history-memo.js';
import type { Reading } from '../src/model.js';
import { createHistoryChanges } from '../src/store/history-changes.js';
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
  return { store, memo: new HistoryMemo(store.readings, createHistoryChanges(store.db, (k, e) => store.readings.entityId(k, e))) };
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
