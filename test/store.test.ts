import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { createLogger } from '../src/log.js';
import { appliedMigrations, migrations, openStore, StoreError, type Migration, type Store } from '../src/store/index.js';
import { market, tempDirs } from './store-helpers.js';

const dirs = tempDirs();
const open: Store[] = [];
const track = (s: Store): Store => (open.push(s), s);
afterEach(() => {
  for (const s of open.splice(0)) s.close();
  dirs.cleanup();
});

const extra: Migration = { version: 99, name: 'future_table', up: 'CREATE TABLE future_thing (x INTEGER)' };

describe('openStore', () => {
  it('creates the parent directory and turns on WAL, synchronous=NORMAL, foreign keys, a busy timeout, an 8 MiB page cache', () => {
    const path = join(dirs.make(), 'nested', 'deeper', 'lookout.db');
    const store = track(openStore(path));
    expect(existsSync(path)).toBe(true);
    expect(store.path).toBe(path);
    expect(store.db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(store.db.pragma('synchronous', { simple: true })).toBe(1); // NORMAL
    expect(store.db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(store.db.pragma('busy_timeout', { simple: true })).toBe(5000);
    // Negative: KiB (issue 14, B6); better-sqlite3's own default is 16 MB.
    expect(store.db.pragma('cache_size', { simple: true })).toBe(-8192);
    // WAL is a property of the file: a second, plain connection sees it too.
    const other = new Database(path, { readonly: true });
    expect(other.pragma('journal_mode', { simple: true })).toBe('wal');
    other.close();
  });

  it('accepts :memory:', () => {
    const store = track(openStore(':memory:'));
    expect(store.path).toBe(':memory:');
    store.readings.savePoll('p', [market('m1', 1000)], 1000);
    expect(store.readings.latest('market', 'm1')?.at).toBe(1000);
    expect(store.writable()).toBe(true);
  });

  it('applies every migration once and records its version, name and time', () => {
    const path = join(dirs.make(), 'a.db');
    const lines: string[] = [];
    const store = track(openStore(path, { clock: new ManualClock(1234), log: createLogger({ write: (l) => lines.push(l) }) }));
    const applied = appliedMigrations(store.db);
    expect(applied).toEqual(migrations.map((m) => ({ version: m.version, name: m.name, applied_at: 1234 })));
    expect(store.version).toBe(migrations[migrations.length - 1]!.version);
    expect(lines.filter((l) => l.includes('store_migrated'))).toHaveLength(migrations.length);
  });

  it('does not re-run migrations when an existing database is reopened', () => {
    const path = join(dirs.make(), 'a.db');
    openStore(path, { clock: new ManualClock(1) }).close();
    const lines: string[] = [];
    // A re-run would fail on CREATE TABLE of an existing table, and would log store_migrated again.
    const store = track(openStore(path, { clock: new ManualClock(2), log: createLogger({ write: (l) => lines.push(l) }) }));
    expect(appliedMigrations(store.db).map((a) => a.applied_at)).toEqual(migrations.map(() => 1));
    expect(lines.filter((l) => l.includes('store_migrated'))).toEqual([]);
  });

  it('applies only the migrations that are new to an existing database', () => {
    const path = join(dirs.make(), 'a.db');
    openStore(path, { clock: new ManualClock(1) }).close();
    const store = track(openStore(path, { clock: new ManualClock(2), migrations: [...migrations, extra] }));
    expect(appliedMigrations(store.db).map((a) => [a.version, a.applied_at])).toEqual([
      ...migrations.map((m) => [m.version, 1]),
      [99, 2],
    ]);
    expect(store.db.prepare(`SELECT count(*) AS n FROM future_thing`).get()).toEqual({ n: 0 });
  });

  it('refuses a database written by a newer lookout, with a message that says so', () => {
    const path = join(dirs.make(), 'a.db');
    openStore(path, { migrations: [...migrations, extra] }).close();
    let err: unknown;
    try {
      openStore(path);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).code).toBe('E_STORE_SCHEMA_NEWER');
    const known = migrations[migrations.length - 1]!.version;
    expect((err as Error).message).toBe(
      `${path}: database schema version 99 is newer than this lookout knows (${known}); ` +
        'it was written by a newer lookout: upgrade lookout, or point storage.path at another file',
    );
    expect(() => openStore(path, { readonly: true })).toThrow(/schema version 99 is newer/);
  });

  it('rolls back a failing migration entirely and names it', () => {
    const path = join(dirs.make(), 'a.db');
    const bad: Migration = { version: 50, name: 'half_done', up: 'CREATE TABLE half (x); INSERT INTO nope VALUES (1);' };
    expect(() => openStore(path, { migrations: [...migrations, bad] })).toThrow(/migration 50 \(half_done\) failed: no such table: nope/);
    const store = track(openStore(path));
    expect(store.db.prepare(`SELECT name FROM sqlite_master WHERE name = 'half'`).get()).toBeUndefined();
    expect(appliedMigrations(store.db).map((a) => a.version)).not.toContain(50);
  });

  it.each([
    ['a reused version', [...migrations, { ...extra, version: 1 }]],
    ['a version out of order', [extra, ...migrations]],
    ['a fractional version', [...migrations, { ...extra, version: 98.5 }]],
  ])('refuses a migration list with %s', (_name, list) => {
    expect(() => openStore(':memory:', { migrations: list })).toThrow(/migration list is malformed/);
  });
});

describe('bad files', () => {
  it('says plainly when the file is not a database', () => {
    const path = join(dirs.make(), 'notes.txt');
    writeFileSync(path, 'this is not sqlite, just a text file that happens to be long enough '.repeat(20));
    expect(() => openStore(path)).toThrow(`cannot open database ${path}: file is not a database`);
  });

  it('warns when a recorded migration has another name than the code gives it', () => {
    const path = join(dirs.make(), 'a.db');
    openStore(path, { migrations: [...migrations, extra] }).close();
    const lines: string[] = [];
    const renamed = { ...extra, name: 'renamed' };
    track(openStore(path, { migrations: [...migrations, renamed], log: createLogger({ write: (l) => lines.push(l) }) }));
    expect(lines.map((l) => JSON.parse(l) as Record<string, unknown>)).toContainEqual(
      expect.objectContaining({ msg: 'store_migration_name_mismatch', version: 99, db: 'future_table', code: 'renamed' }),
    );
  });
});

describe('read-only open', () => {
  it('reads what a writer stored and reports not writable', () => {
    const path = join(dirs.make(), 'a.db');
    const writer = track(openStore(path));
    writer.readings.savePoll('markets', [market('m1', 1000)], 1000);
    expect(writer.writable()).toBe(true);
    const reader = track(openStore(path, { readonly: true }));
    expect(reader.readonly).toBe(true);
    expect(reader.readings.latest('market', 'm1')?.at).toBe(1000);
    expect(reader.writable()).toBe(false);
    expect(() => reader.readings.savePoll('markets', [market('m2', 1000)], 1000)).toThrow(/readonly/);
  });

  it('refuses a file that does not exist, without creating it', () => {
    const path = join(dirs.make(), 'missing.db');
    expect(() => openStore(path, { readonly: true })).toThrow(/cannot open database .*missing\.db: the file does not exist/);
    expect(existsSync(path)).toBe(false);
  });

  it('refuses a database that has not been migrated yet', () => {
    const path = join(dirs.make(), 'old.db');
    new Database(path).close();
    expect(() => openStore(path, { readonly: true })).toThrow(/missing schema version\(s\) 1/);
  });
});

describe('writable()', () => {
  it('is false while another connection holds the write lock, and true again after', () => {
    const path = join(dirs.make(), 'a.db');
    const store = track(openStore(path));
    const other = new Database(path);
    other.exec('BEGIN IMMEDIATE');
    expect(store.writable()).toBe(false);
    other.exec('ROLLBACK');
    other.close();
    expect(store.writable()).toBe(true);
    expect(store.db.pragma('busy_timeout', { simple: true })).toBe(5000);
  });

  it('leaves no trace, even inside a caller transaction', () => {
    const store = track(openStore(join(dirs.make(), 'a.db')));
    store.transaction(() => {
      store.meta.set('k', 'v');
      expect(store.writable()).toBe(true);
    });
    expect(store.meta.get('k')).toBe('v');
    expect(store.meta.get('writable_probe')).toBeUndefined();
  });

  it('is false after close', () => {
    const store = openStore(join(dirs.make(), 'a.db'));
    store.close();
    store.close();
    expect(store.writable()).toBe(false);
  });
});

describe('transaction()', () => {
  it('writes nothing when the function throws', () => {
    const store = track(openStore(join(dirs.make(), 'a.db')));
    expect(() =>
      store.transaction(() => {
        store.readings.savePoll('markets', [market('m1', 1000), market('m2', 1000)], 1000);
        store.polls.record({ poll: 'markets', kind: 'metrics', ok: true, readings: [], rejected: [], started_at: 1, finished_at: 2 });
        store.meta.set('k', 'v');
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(store.readings.latestAll('market')).toEqual([]);
    expect(store.readings.counts().history).toBe(0);
    expect(store.polls.lastAll()).toEqual([]);
    expect(store.meta.get('k')).toBeUndefined();
  });

  it('turns a nested call into a savepoint: an inner failure caught by the outer keeps the outer writes', () => {
    const store = track(openStore(join(dirs.make(), 'a.db')));
    const result = store.transaction(() => {
      store.readings.savePoll('markets', [market('m1', 1000)], 1000);
      try {
        store.transaction(() => {
          store.readings.savePoll('markets', [market('m2', 1000)], 1000);
          throw new Error('inner');
        });
      } catch {
        // expected
      }
      return 'done';
    });
    expect(result).toBe('done');
    expect(store.readings.latestAll('market').map((r) => r.entity)).toEqual(['m1']);
  });
});

describe('meta and prune', () => {
  it('gets, sets, overwrites and deletes values', () => {
    const store = track(openStore(':memory:'));
    expect(store.meta.get('x')).toBeUndefined();
    store.meta.set('x', '1');
    store.meta.set('x', '42');
    expect(store.meta.get('x')).toBe('42');
    expect(store.meta.getNumber('x')).toBe(42);
    store.meta.set('y', 'not a number');
    expect(store.meta.getNumber('y')).toBeUndefined();
    store.meta.delete('x');
    expect(store.meta.get('x')).toBeUndefined();
  });

  it('prunes history and poll runs, garbage-collects reading shapes, records when', () => {
    const clock = new ManualClock(10_000);
    const store = track(openStore(join(dirs.make(), 'a.db'), { clock }));
    const old = { ...market('gone', 1000), labels: { only: 'old' } };
    store.readings.savePoll('markets', [old, market('m1', 1000)], 1000);
    store.readings.savePoll('markets', [market('m1', 9000, 0.7)], 9000);
    store.polls.record({ poll: 'markets', kind: 'metrics', ok: true, readings: [], rejected: [], started_at: 1000, finished_at: 1001 });
    store.polls.record({ poll: 'markets', kind: 'metrics', ok: true, readings: [], rejected: [], started_at: 9000, finished_at: 9001 });
    const shapes = () => (store.db.prepare('SELECT count(*) AS n FROM history_shapes').get() as { n: number }).n;
    expect(shapes()).toBe(2);
    // No history row is left of 'gone', but it is still its latest reading: its shape stays until that goes too.
    expect(store.prune(5000)).toEqual({ readings: 2, pollRuns: 1, shapes: 0 });
    expect(store.readings.latest('market', 'gone')?.labels).toEqual({ only: 'old' });
    expect(store.readings.removeLatest('market', 'gone')).toBe(true);
    expect(store.readings.pruneShapes()).toBe(1);
    expect(shapes()).toBe(1);
    // The poll's own memory of what it last stored is kept: m1 unchanged but for its time stores no row again.
    expect(store.readings.savePoll('markets', [market('m1', 9400, 0.7)], 9400).inserted).toBe(0);
    // 'gone' comes back as it was: its shape is stored again, not taken from a cache that still knew the deleted one.
    store.readings.savePoll('markets', [old], 9500);
    expect(shapes()).toBe(2);
    expect(store.readings.historyAt('market', 'gone', 1000)?.labels).toEqual({ only: 'old' });
    expect(store.meta.getNumber('last_pruned_at')).toBe(10_000);
    expect(store.readings.historyRange('market', 'm1', 0, 20_000).map((r) => r.at)).toEqual([9000]);
    expect(store.readings.historyAt('market', 'm1', 9000)?.labels).toEqual({ entity: 'm1', chain: 'base' });
    // The newest shape is never pruned (its id is never handed out again), even when nothing points to it any more.
    for (const e of ['m1', 'gone']) store.readings.removeLatest('market', e);
    store.prune(1e9);
    expect(store.readings.pruneShapes()).toBe(1);
    expect(shapes()).toBe(1);
  });
});

describe('reading rows stay on shared pages', () => {
  it('stores a market reading with a 1 KB field without an overflow page per row', () => {
    const store = track(openStore(join(dirs.make(), 'pages.db')));
    // Schema 4 kept history WITHOUT ROWID with the fields JSON inline: a ~1,050-byte market row spilled onto an overflow
    // page of its own. A long text field now lives in the reading's shape, stored once.
    const fields = { blob: 'x'.repeat(1000) };
    const rows = Array.from({ length: 500 }, (_, i) => market(`m${i}`, 1000, 0.5, fields));
    store.readings.savePoll('markets', rows, 1000);
    for (const table of ['reading_history']) {
      const pages = store.db.prepare(`SELECT count(*) AS n FROM dbstat WHERE name = ? AND pagetype = 'overflow'`).get(table) as { n: number };
      expect(pages.n, `${table} overflow pages`).toBe(0);
    }
  });
});

describe('schema version 6: messages remember their accepted parts', () => {
  it('a message pending under version 5 is still pending after the upgrade, with no part counted as sent', () => {
    const path = join(dirs.make(), 'v5.db');
    const old = openStore(path, { migrations: migrations.filter((m) => m.version < 6) });
    old.db
      .prepare(`INSERT INTO notify_messages (dedup_key, notifier, group_key, status, payload, created_at, next_attempt_at) VALUES ('lk-1', 'slack', 'g', 'pending', '{}', 1, 1)`)
      .run();
    old.close();

    const store = track(openStore(path));
    expect(store.db.prepare(`SELECT dedup_key, status, parts_sent FROM notify_messages`).all()).toEqual([{ dedup_key: 'lk-1', status: 'pending', parts_sent: 0 }]);
  });
});
