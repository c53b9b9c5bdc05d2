/**
 * The store's yielding transaction (src/store/gate.ts): it gives the event loop turns while it is open, and nothing
 * else runs a statement on the connection meanwhile — what waits at the gate runs after the commit (or the rollback)
 * and sees the transaction whole or not at all; a statement that did not wait is refused, never folded into it.
 */
import { stat } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { openStore, StoreError, type Store } from '../src/store/index.js';
import { nextTurn } from '../src/yielding.js';
import { market, tempDirs } from './store-helpers.js';

const dirs = tempDirs();
const open: Store[] = [];
afterEach(() => {
  for (const s of open.splice(0)) s.close();
  dirs.cleanup();
});

function fresh(): Store {
  const store = openStore(join(dirs.make(), 'lookout.db'));
  store.db.exec('CREATE TABLE t (v TEXT NOT NULL)');
  open.push(store);
  return store;
}

const insert = (store: Store, v: string) => store.db.prepare('INSERT INTO t (v) VALUES (?)').run(v);
const rows = (store: Store) => (store.db.prepare('SELECT v FROM t ORDER BY rowid').all() as Array<{ v: string }>).map((r) => r.v);

/** Calls `fn` on each turn of the event loop until `done` resolves; returns what the calls returned. */
async function eachTurnUntil<T>(done: Promise<unknown>, fn: () => T): Promise<T[]> {
  let over = false;
  void done.finally(() => (over = true)).catch(() => undefined);
  const seen: T[] = [];
  while (!over) {
    seen.push(fn());
    await nextTurn();
  }
  return seen;
}

it('gives the event loop turns while it is open, and commits every step', async () => {
  const store = fresh();
  const txn = store.transactionYielding(
    function* () {
      for (let i = 0; i < 20; i++) {
        insert(store, `r${i}`);
        yield;
      }
      return 'done';
    },
    { sliceMs: 0 },
  );
  const busy = await eachTurnUntil(txn, () => store.gate.busy);
  expect(await txn).toBe('done');
  // Other callbacks ran while the transaction was open, not only before or after it.
  expect(busy.filter(Boolean).length).toBeGreaterThanOrEqual(10);
  expect(store.gate.busy).toBe(false);
  expect(rows(store)).toHaveLength(20);
});

it('commits in a turn of its own: a timer due during the last slice runs before the commit, with the transaction open', async () => {
  const store = fresh();
  let seen: { busy: boolean; inTransaction: boolean } | undefined;
  // Begun from an I/O callback, as a poll's transaction may be (after the response's last chunk): from there, one
  // immediate would still run before the loop looks at its timers.
  await new Promise<void>((resolve) => stat(store.path, () => resolve()));
  const txn = store.transactionYielding(function* () {
    insert(store, 'last');
    // The last step: a timer comes due while it runs (no pause after it: the generator ends here).
    setTimeout(() => (seen = { busy: store.gate.busy, inTransaction: store.db.inTransaction }), 0);
    const until = performance.now() + 5;
    while (performance.now() < until);
  });
  await txn;
  expect(seen).toEqual({ busy: true, inTransaction: true });
  expect(rows(store)).toEqual(['last']);
});

it('refuses a statement from outside its steps while it is open, instead of folding it into the transaction', async () => {
  const store = fresh();
  const refused: unknown[] = [];
  const txn = store.transactionYielding(
    function* () {
      insert(store, 'poll');
      yield;
      yield;
    },
    { sliceMs: 0 },
  );
  await eachTurnUntil(txn, () => {
    if (!store.gate.busy) return;
    for (const attempt of [() => insert(store, 'stray'), () => rows(store), () => store.db.exec('SELECT 1'), () => store.meta.get('x')]) {
      try {
        attempt();
      } catch (err) {
        refused.push(err);
      }
    }
  });
  await txn;
  expect(refused.length).toBeGreaterThanOrEqual(4);
  for (const err of refused) expect(err).toMatchObject({ code: 'E_STORE_BUSY' });
  expect(refused[0]).toBeInstanceOf(StoreError);
  // After the commit the connection is everyone's again.
  expect(rows(store)).toEqual(['poll']);
  insert(store, 'after');
  expect(rows(store)).toEqual(['poll', 'after']);
});

it('runs what waits at the gate after the commit, and it sees the transaction whole', async () => {
  const store = fresh();
  const order: string[] = [];
  let seen: string[] | undefined;
  const txn = store.transactionYielding(
    function* () {
      for (let i = 0; i < 5; i++) {
        insert(store, `r${i}`);
        order.push(`step ${i}`);
        yield;
      }
    },
    { sliceMs: 0 },
  );
  let reader: Promise<void> | undefined;
  await eachTurnUntil(txn, () => {
    if (store.gate.busy && !reader) {
      reader = store.gate.exclusive(() => {
        order.push('reader');
        seen = rows(store);
      });
    }
  });
  await txn;
  await reader;
  expect(order).toEqual(['step 0', 'step 1', 'step 2', 'step 3', 'step 4', 'reader']);
  expect(seen).toEqual(['r0', 'r1', 'r2', 'r3', 'r4']);
});

it('rolls back whole when a step throws, and a write that waited at the gate meanwhile is kept', async () => {
  const store = fresh();
  const txn = store.transactionYielding(
    function* () {
      insert(store, 'poll row');
      yield;
      yield;
      throw new Error('disk full (simulated)');
    },
    { sliceMs: 0 },
  );
  let write: Promise<unknown> | undefined;
  await eachTurnUntil(txn, () => {
    if (store.gate.busy && !write) write = store.gate.exclusive(() => insert(store, 'silence'));
  }).catch(() => undefined);
  await expect(txn).rejects.toThrow('disk full (simulated)');
  await write;
  expect(rows(store)).toEqual(['silence']);
  expect(store.db.inTransaction).toBe(false);
});

it('opens one yielding transaction at a time: the second begins after the first commits', async () => {
  const store = fresh();
  const order: string[] = [];
  const run = (name: string) =>
    store.transactionYielding(
      function* () {
        for (let i = 0; i < 3; i++) {
          insert(store, `${name}${i}`);
          order.push(`${name}${i}`);
          yield;
        }
      },
      { sliceMs: 0 },
    );
  await Promise.all([run('a'), run('b')]);
  expect(order).toEqual(['a0', 'a1', 'a2', 'b0', 'b1', 'b2']);
  expect(rows(store)).toEqual(order);
});

it('forgets the history ids a rolled-back transaction allocated, so the next save of the same entity stores it', async () => {
  const store = fresh();
  const failed = store.transactionYielding(
    function* () {
      yield* store.readings.savePollSteps('markets', [market('m-new', 1_000, 0.5)], 1_000);
      yield;
      throw new Error('the poll failed after saving');
    },
    { sliceMs: 0 },
  );
  await expect(failed).rejects.toThrow('the poll failed after saving');
  // Without the rollback forgetting them, the entity's cached id points at a row the rollback took away.
  store.transaction(() => store.readings.savePoll('markets', [market('m-new', 2_000, 0.7)], 2_000));
  expect(store.readings.historyAt('market', 'm-new', 2_000)?.fields.utilization).toBe(0.7);
  expect(store.readings.latest('market', 'm-new')?.fields.utilization).toBe(0.7);
});

it('keeps each connection to its own transaction: two stores in one process, both open, both guarded', async () => {
  const a = fresh();
  const b = fresh();
  const holding = (store: Store) => {
    let released = false;
    const done = store.transactionYielding(
      function* () {
        insert(store, 'own');
        while (!released) yield;
      },
      { sliceMs: 0 },
    );
    return { release: () => void (released = true), done };
  };
  const ha = holding(a);
  const hb = holding(b);
  while (!a.gate.busy || !b.gate.busy) await nextTurn();
  // The store opened first is still guarded after the second one opened (and the other way round).
  expect(() => rows(a)).toThrow(expect.objectContaining({ code: 'E_STORE_BUSY' }));
  expect(() => rows(b)).toThrow(expect.objectContaining({ code: 'E_STORE_BUSY' }));
  hb.release();
  await hb.done;
  expect(rows(b)).toEqual(['own']);
  expect(() => rows(a)).toThrow(expect.objectContaining({ code: 'E_STORE_BUSY' }));
  ha.release();
  await ha.done;
  expect(rows(a)).toEqual(['own']);
});
