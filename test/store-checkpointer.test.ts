/**
 * WAL checkpoints in a worker thread (src/store/checkpointer.ts): while it runs, the daemon's connection never
 * checkpoints inside a commit (SQLite's `wal_autocheckpoint` is off on it), and the worker's own connection copies the
 * log back into the database once it has grown past SQLite's usual 1,000 pages; stopped, the connection checkpoints as
 * SQLite does by default again. SQLite itself reports what was checkpointed. The worker starts only once one commit
 * has made the log long (a small watch keeps SQLite's own checkpoints and saves the thread's memory).
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { createLogger } from '../src/log.js';
import { START_AT_PAGES, startCheckpointer, type Checkpointer } from '../src/store/checkpointer.js';
import { openStore, type Store } from '../src/store/index.js';
import { until } from './source-helpers.js';
import { tempDirs } from './store-helpers.js';

const dirs = tempDirs();
const stores: Store[] = [];
const running: Checkpointer[] = [];
afterEach(async () => {
  for (const c of running.splice(0)) await c.stop();
  for (const s of stores.splice(0)) s.close();
  dirs.cleanup();
});

/** A store with a table to fill, and a logger whose lines are kept. */
function setup(): { store: Store; lines: Array<Record<string, unknown>>; log: ReturnType<typeof createLogger> } {
  const store = openStore(join(dirs.make(), 'lookout.db'));
  stores.push(store);
  store.db.exec('CREATE TABLE filler (v TEXT NOT NULL)');
  const lines: Array<Record<string, unknown>> = [];
  const log = createLogger({ level: 'debug', write: (l) => void lines.push(JSON.parse(l) as Record<string, unknown>) });
  return { store, lines, log };
}

/** Writes `pages` pages' worth of rows in commits of ~100 pages. */
function grow(store: Store, pages: number): void {
  const insert = store.db.prepare('INSERT INTO filler (v) VALUES (?)');
  const page = store.db.pragma('page_size', { simple: true }) as number;
  for (let done = 0; done < pages; done += 100) {
    store.transaction(() => {
      for (let i = 0; i < 100; i++) insert.run('x'.repeat(page - 64));
    });
  }
}

it('keeps checkpoints out of the commits and runs them in its own thread once the log passes 1,000 pages', async () => {
  const { store, lines, log } = setup();
  const cp = startCheckpointer(store.db, store.path, { log, intervalMs: 20, startAtPages: 0 });
  running.push(cp);
  expect(cp.started).toBe(true);
  expect(store.db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);

  await cp.ready;
  // 1,500 pages in 15 commits, each followed by a few of the worker's looks (every 20 ms): a worker that checkpointed
  // below 1,000 pages would have done it on the way.
  for (let i = 0; i < 15; i++) {
    grow(store, 100);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  let first: Record<string, unknown> | undefined;
  await until(() => (first = lines.find((l) => l.msg === 'wal_checkpoint')) !== undefined, 10_000);
  // Not before the log held 1,000 pages, and SQLite copied them all back. The worker looks at the log file's size, and
  // a commit's frames are in the file before the commit is: when it looked during one (CI saw 954 = 9 commits of 106
  // frames), the checkpoint copies the commits before it. So at most one commit short of 1,000 — never the 100–900 of
  // a worker that ignored the size.
  const commitFrames = 110;
  expect(Number(first!.log)).toBeGreaterThan(1_000 - commitFrames);
  expect(first).toMatchObject({ busy: 0 });
  expect(Number(first!.checkpointed)).toBe(Number(first!.log));
  expect(lines.filter((l) => l.level === 'warn' || l.level === 'error')).toEqual([]);

  await cp.stop();
  // Without the worker the connection checkpoints in its commits again, as SQLite does by default.
  expect(store.db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
});

it('starts no worker while commits are small (SQLite checkpoints them), and one once a commit makes the log long', async () => {
  const { store, lines, log } = setup();
  const cp = startCheckpointer(store.db, store.path, { log, intervalMs: 20 });
  running.push(cp);
  const page = store.db.pragma('page_size', { simple: true }) as number;
  const walPages = () => statSync(`${store.path}-wal`).size / page;
  // 3,000 pages in commits of 100, with pauses for the checkpointer to look: SQLite checkpoints at 1,000 pages, so
  // the log never gets near 4,000 and the checkpoints stay in the commits.
  for (let i = 0; i < 30; i++) {
    grow(store, 100);
    if (i % 5 === 4) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  expect(walPages()).toBeLessThan(START_AT_PAGES);
  expect(cp.started).toBe(false);
  expect(store.db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);

  // One commit of 5,000 pages (a 10,000-market poll writes about that): the worker takes over.
  const insert = store.db.prepare('INSERT INTO filler (v) VALUES (?)');
  store.transaction(() => {
    for (let i = 0; i < 5_000; i++) insert.run('x'.repeat(page - 64));
  });
  await until(() => cp.started, 10_000);
  await cp.ready;
  expect(store.db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
  expect(lines.map((l) => l.msg)).toContain('checkpointer_started');
  await until(() => lines.some((l) => l.msg === 'wal_checkpoint'), 10_000);
});

it('starts the worker only when the store gate is free, never inside an open poll transaction', async () => {
  const { store, lines, log } = setup();
  // The real gate, with the checkpointer's requests to it counted: the test waits for one instead of for the clock.
  let asked = 0;
  const gate = { whenFree: <T>(fn: () => T) => (asked++, store.gate.whenFree(fn)) };
  const cp = startCheckpointer(store.db, store.path, { log, intervalMs: 20, gate });
  running.push(cp);
  const page = store.db.pragma('page_size', { simple: true }) as number;
  const insert = store.db.prepare('INSERT INTO filler (v) VALUES (?)');
  // A commit that makes the log long, and at once (before the checkpointer's next look) a poll's transaction that
  // stays open until released.
  store.transaction(() => {
    for (let i = 0; i < 5_000; i++) insert.run('x'.repeat(page - 64));
  });
  let release = false;
  let turns = 0;
  const txn = store.transactionYielding(
    function* () {
      insert.run('poll');
      while (!release) {
        turns++;
        yield;
      }
    },
    { sliceMs: 0 },
  );
  // The checkpointer's next look (every 20 ms) finds the log long and asks the gate while the transaction is open. Its
  // settings would join the open transaction (the gate refuses that, and the refusal in a timer would end the
  // process): it waits. A few more turns of the open transaction give a start that did not wait the chance to show.
  await until(() => asked > 0 && turns > 0, 10_000);
  const turnsThen = turns;
  await until(() => turns > turnsThen + 5, 10_000);
  expect(cp.started).toBe(false);
  expect(store.gate.busy).toBe(true);
  release = true;
  await txn;
  await until(() => cp.started, 10_000);
  await cp.ready;
  expect(store.db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
  expect(lines.filter((l) => l.level === 'warn' || l.level === 'error')).toEqual([]);
});
