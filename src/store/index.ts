/**
 * The SQLite store: one better-sqlite3 connection in WAL mode, migrated on open, with a repository
 * per table group. No singleton: `openStore()` returns an object that is passed to whoever needs it;
 * sibling repositories (alerts, outbox, silences) build their statements on `store.db`.
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { systemClock, type Clock } from '../clock.js';
import { silentLogger, type Logger } from '../log.js';
import { StoreError } from './errors.js';
import { createGate, type TransactionGate } from './gate.js';
import { createMetaRepo, type MetaRepo } from './meta.js';
import { checkSchema, migrate, migrations as knownMigrations, schemaVersion, type Migration } from './migrations.js';
import { createPollRunsRepo, type PollRunsRepo } from './poll-runs.js';
import { createReadingsRepo, type ReadingsRepo } from './readings.js';
import type { Steps } from '../yielding.js';

export { StoreError, type StoreErrorCode } from './errors.js';
export type { TransactionGate } from './gate.js';
export type { MetaRepo } from './meta.js';
export { migrations, type Migration, type AppliedMigration, appliedMigrations, schemaVersion } from './migrations.js';
export type { PollRun, PollRunSummary, PollRunsRepo } from './poll-runs.js';
export type {
  DownsampleResult,
  EntityKey,
  HistoryReading,
  PruneOptions,
  ReadingCounts,
  ReadingsRepo,
  SavePollResult,
} from './readings.js';

/** Options of {@link openStore}. */
export interface StoreOptions {
  /** Stamps `updated_at` of meta rows and `applied_at` of migrations. Default: the wall clock. */
  clock?: Clock;
  log?: Logger;
  /** Open an existing, fully migrated file without writing to it (CLI reads, backtests). */
  readonly?: boolean;
  /** How long a write waits for another connection's lock, ms. Default 5000. */
  busyTimeoutMs?: number;
  /** The migration list; default: every migration lookout knows. For tests and tools. */
  migrations?: readonly Migration[];
}

/** What {@link Store.prune} deleted. */
export interface StorePruneResult {
  readings: number;
  pollRuns: number;
  /** Reading shapes no longer used (at most once a day). */
  shapes: number;
}

/** An open store. Not safe to share across worker threads; one per process is the norm. */
export interface Store {
  /** The connection, for sibling repository modules (alerts, outbox, silences). */
  readonly db: Database.Database;
  /** Absolute path of the file, or `:memory:`. */
  readonly path: string;
  readonly readonly: boolean;
  /** Schema version after migrations. */
  readonly version: number;
  readings: ReadingsRepo & { forget(): void };
  polls: PollRunsRepo;
  meta: MetaRepo;
  /** Runs fn in one transaction (nested calls become savepoints, as better-sqlite3 does). fn must be synchronous. */
  transaction<T>(fn: () => T): T;
  /**
   * Runs steps in one transaction that gives the event loop a turn every few milliseconds (a poll's readings, alert
   * state and outbox: SPEC §4); meanwhile the rest of the process waits at {@link Store.gate}. See gate.ts.
   */
  transactionYielding<T>(steps: () => Steps<T>, opts?: { sliceMs?: number }): Promise<T>;
  /** Whoever touches the database from a timer, a request or a delivery waits here while a yielding transaction is open. */
  readonly gate: TransactionGate;
  /** True when the DB's write lock can be taken right now (for /readyz): a meta write inside a rolled-back transaction. */
  writable(): boolean;
  /**
   * Deletes reading history and poll runs older than `olderThan` (batched), reading shapes no longer used
   * (at most once a day), and records `last_pruned_at` in meta.
   */
  prune(olderThan: number, opts?: { batchSize?: number; maxRows?: number }): StorePruneResult;
  /** Closes the connection; safe to call twice. */
  close(): void;
}

const isMemory = (path: string): boolean => path === ':memory:' || path === '' || path.startsWith('file::memory:');
const SHAPE_GC_INTERVAL_MS = 24 * 3600_000;

function openConnection(path: string, readonly: boolean): Database.Database {
  try {
    return new Database(path, { readonly, fileMustExist: readonly });
  } catch (err) {
    const e = err as Error & { code?: string };
    const why = readonly && e.code === 'SQLITE_CANTOPEN' ? 'the file does not exist or cannot be read' : e.message;
    throw new StoreError('E_STORE_OPEN', `cannot open database ${path}: ${why}`, { cause: err });
  }
}

/**
 * The page cache of a writable file store, KiB (SQLite's `cache_size` as a negative number): 8 MiB, half the 16 MiB
 * better-sqlite3 builds SQLite with. A poll at SPEC §8 scale fills the whole cache, and it stays in the process's RSS
 * (issue 14, B6: 197 → 187 MB after 150 cycles, side by side, 2026-11-27). Smaller still costs the poll: 2 MiB made a
 * save 4–11% slower, 8 MiB 1–4% (2026-11-25). A cache too small for a transaction's pages spills them into the log as
 * the transaction goes, which takes that write out of the commit's one block of the event loop.
 */
export const PAGE_CACHE_KIB = 8 * 1024;

/** Opens (creating when needed) and migrates the database at `path`; `:memory:` gives a private in-memory one. */
export function openStore(path: string, opts: StoreOptions = {}): Store {
  const clock = opts.clock ?? systemClock;
  const log = opts.log ?? silentLogger;
  const readonly = opts.readonly ?? false;
  const memory = isMemory(path);
  const file = memory ? ':memory:' : resolve(path);
  if (!memory && !readonly) {
    try {
      mkdirSync(dirname(file), { recursive: true });
    } catch (err) {
      throw new StoreError('E_STORE_OPEN', `cannot create the directory of database ${file}: ${(err as Error).message}`, { cause: err });
    }
  }
  const db = openConnection(memory ? path : file, readonly);
  try {
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(opts.busyTimeoutMs ?? 5000))}`);
    db.pragma('foreign_keys = ON');
    if (!readonly) {
      if (!memory) {
        const mode = db.pragma('journal_mode = WAL', { simple: true });
        if (mode !== 'wal') throw new StoreError('E_STORE_OPEN', `${file}: cannot switch to WAL mode (got ${String(mode)})`);
      }
      db.pragma('synchronous = NORMAL');
      if (!memory) db.pragma(`cache_size = -${PAGE_CACHE_KIB}`);
      migrate(db, { file, clock, log, list: opts.migrations ?? knownMigrations });
      if (!memory) assertWritable(db, file);
    } else {
      checkSchema(db, file, opts.migrations ?? knownMigrations);
    }
    return buildStore(db, file, readonly, clock);
  } catch (err) {
    db.close();
    if (err instanceof StoreError) throw err;
    throw new StoreError('E_STORE_OPEN', `cannot open database ${file}: ${(err as Error).message}`, { cause: err });
  }
}

/** A fresh in-memory store's file, migrated once per process: see {@link openScratchStore}. */
let scratchImage: Buffer | undefined;

/**
 * A private in-memory store, as `openStore(':memory:')` gives, for state nobody keeps (a backtest's or a rule test's
 * alerts). Every migration runs once per process; later stores start from a copy of that first one's empty file
 * (SQLite's serialized image): ~1 ms instead of ~15 for the migrations and their checks, paid once per backtest and
 * once per rule test. Its `schema_migrations.applied_at` are the first one's times.
 */
export function openScratchStore(opts: Pick<StoreOptions, 'clock'> = {}): Store {
  if (!scratchImage) {
    const first = openStore(':memory:', opts);
    scratchImage = first.db.serialize();
    return first;
  }
  const db = new Database(scratchImage);
  try {
    db.pragma('foreign_keys = ON');
    db.pragma('synchronous = NORMAL');
    return buildStore(db, ':memory:', false, opts.clock ?? systemClock);
  } catch (err) {
    db.close();
    throw err;
  }
}

/**
 * SQLite opens a file it may not write (permissions, `chattr +i`, a read-only mount) for reading without a word, and that
 * connection stays read-only even once the file is writable again. A daemon on it could never store a poll, so it
 * refuses to start with a clear message instead; its supervisor's restart finds the file writable once it is fixed.
 */
function assertWritable(db: Database.Database, file: string): void {
  const prev = db.pragma('busy_timeout', { simple: true }) as number;
  try {
    // Short: a lock held by another process is not what this looks for, and must not hold up the start.
    db.pragma('busy_timeout = 250');
    db.exec('BEGIN IMMEDIATE');
    db.prepare(`INSERT INTO meta (key, value, updated_at) VALUES ('writable_probe', '1', 0) ON CONFLICT (key) DO UPDATE SET value = excluded.value`).run();
  } catch (err) {
    const code = String((err as { code?: unknown }).code ?? '');
    // Locked by another process is not read-only: the daemon starts and its writes wait for the lock.
    if (code.startsWith('SQLITE_READONLY') || code === 'SQLITE_CANTOPEN' || code === 'SQLITE_PERM') {
      throw new StoreError('E_STORE_READONLY', `database ${file} is read-only (file permissions, an immutable flag or a read-only filesystem): lookout needs to write it`, { cause: err });
    }
  } finally {
    if (db.inTransaction) db.exec('ROLLBACK');
    db.pragma(`busy_timeout = ${prev}`);
  }
}

/**
 * Builds `make()` on first use: the readings repository prepares statements on tables of the newest schema, and a store
 * opened with an older migration list (tests, tools) must still open.
 */
function lazy<T extends object>(make: () => T): T {
  let real: T | undefined;
  // Bound once per method, not per call: history reads go through here on the engine's hot path.
  const bound = new Map<PropertyKey, unknown>();
  return new Proxy({} as T, {
    get(_target, prop) {
      real ??= make();
      if (bound.has(prop)) return bound.get(prop);
      const v = Reflect.get(real, prop) as unknown;
      const out = typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(real) : v;
      bound.set(prop, out);
      return out;
    },
  });
}

function buildStore(db: Database.Database, path: string, readonly: boolean, clock: Clock): Store {
  const readings = lazy(() => createReadingsRepo(db));
  const polls = createPollRunsRepo(db);
  const meta = createMetaRepo(db, clock);
  const probe = db.prepare(
    `INSERT INTO meta (key, value, updated_at) VALUES ('writable_probe', '1', 0)
     ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
  );
  const version = schemaVersion(db);
  const gate = createGate(db);

  function writable(): boolean {
    if (readonly || !db.open) return false;
    // Inside a transaction (a poll's, open across turns of the event loop) the write lock is ours: writable, no probe.
    if (db.inTransaction) return true;
    // A short lock wait: /readyz must answer quickly even while another process holds the write lock.
    const prev = db.pragma('busy_timeout', { simple: true }) as number;
    try {
      db.pragma('busy_timeout = 250');
      db.exec('BEGIN IMMEDIATE');
      probe.run();
      return true;
    } catch {
      return false;
    } finally {
      // Always a ROLLBACK, never a commit: a commit can fail on a full disk and leave the connection inside a
      // transaction that every later write would nest in, never committed.
      try {
        if (db.inTransaction) db.exec('ROLLBACK');
        db.pragma(`busy_timeout = ${prev}`);
      } catch {
        // the connection is unusable: the probe already answered false or the next call will
      }
    }
  }

  return {
    db,
    path,
    readonly,
    version,
    readings,
    polls,
    meta,
    transaction: <T>(fn: () => T): T => {
      try {
        return db.transaction(fn)();
      } catch (err) {
        // A rollback can take ids the history dictionaries just allocated with it.
        if (db.open) readings.forget();
        throw err;
      }
    },
    transactionYielding: (steps, opts = {}) =>
      gate.transaction(steps, {
        ...opts,
        // A rollback can take ids the history dictionaries just allocated with it.
        onRollback: () => {
          if (db.open) readings.forget();
        },
      }),
    gate,
    writable,
    prune(olderThan, opts = {}) {
      const result = { readings: readings.prune(olderThan, opts), pollRuns: polls.prune(olderThan), shapes: 0 };
      const now = clock.now();
      const lastGc = meta.getNumber('shapes_pruned_at');
      if (result.readings > 0 && (lastGc === undefined || now - lastGc >= SHAPE_GC_INTERVAL_MS)) {
        result.shapes = readings.pruneShapes();
        meta.set('shapes_pruned_at', String(now));
      }
      meta.set('last_pruned_at', String(now));
      return result;
    },
    close() {
      if (!db.open) return;
      if (!readonly) {
        try {
          db.pragma('optimize');
        } catch {
          // optimize is advisory; closing matters more
        }
      }
      db.close();
    },
  };
}
