/**
 * A transaction that gives the event loop turns while it is open, and keeps everyone else out of the connection
 * meanwhile.
 *
 * A poll's transaction (readings, alert state, outbox: SPEC §4) runs as steps ({@link Steps}) that pause every
 * {@link SLICE_MS}: `/metrics`, `/healthz` and deliveries get the event loop between slices instead of waiting for the
 * whole poll. better-sqlite3 has one connection and no notion of whose statement it runs, so anything else that ran
 * a statement during a pause would join the open transaction: its reads would see the poll half written, and its writes
 * would be rolled back with a poll that fails. So while a yielding transaction is open:
 * - code that touches the database waits for the gate first ({@link TransactionGate.idle}, {@link TransactionGate.exclusive});
 * - a statement run from outside the transaction's own steps is refused ({@link StoreError} `E_STORE_BUSY`): a path
 *   that forgot to wait fails loudly and is retried like any store fault, instead of joining someone else's transaction.
 * Yielding transactions themselves queue: one is open at a time.
 */
import type Database from 'better-sqlite3';
import { afterIo, runYielding, SLICE_MS, type Steps } from '../yielding.js';
import { StoreError } from './errors.js';

/** The gate of one connection. */
export interface TransactionGate {
  /** True while a yielding transaction is open (between its BEGIN and its COMMIT or ROLLBACK). */
  readonly busy: boolean;
  /**
   * Resolves when the open yielding transaction ends. Another may open before the caller's continuation runs, so wait
   * as `while (gate.busy) await gate.idle();` with the database work right after the loop, or use {@link exclusive}.
   */
  idle(): Promise<void>;
  /** Runs `fn` (synchronous database work) as soon as no yielding transaction is open. */
  exclusive<T>(fn: () => T): Promise<T>;
  /** Like {@link exclusive}, but runs `fn` at once (no turn of the event loop) when no yielding transaction is open. */
  whenFree<T>(fn: () => T): T | Promise<T>;
  /**
   * Runs the steps in one transaction (BEGIN IMMEDIATE … COMMIT), pausing every `sliceMs`; rolls back and rethrows when
   * a step throws. `onRollback` runs after a rollback (caches that hold ids the transaction allocated).
   */
  transaction<T>(steps: () => Steps<T>, opts?: { sliceMs?: number; onRollback?: () => void }): Promise<T>;
}

interface Open {
  /** True while the transaction's own steps run (synchronously); false during its pauses. */
  stepping: boolean;
}

/** The open yielding transaction of each connection (several stores may be open in one process: tests, tools). */
const openOn = new WeakMap<Database.Database, Open>();
/**
 * How many yielding transactions are paused (between steps). Only then can a statement come from outside a transaction's steps: while
 * one steps, the process runs nothing else. The guard's fast path, taken by every statement at all other times.
 */
let pausedCount = 0;
let guardInstalled = false;

function setStepping(o: Open, stepping: boolean): void {
  if (o.stepping === stepping) return;
  o.stepping = stepping;
  pausedCount += stepping ? -1 : 1;
}

/** Throws when `db` has a yielding transaction open and the caller is not one of its steps. */
function check(db: Database.Database): void {
  const o = openOn.get(db);
  if (o !== undefined && !o.stepping) {
    throw new StoreError('E_STORE_BUSY', 'the database is inside a poll transaction; this statement must wait for the store gate (store.gate.exclusive())');
  }
}

/**
 * Makes every statement and `exec` on a connection with an open yielding transaction check that it comes from that
 * transaction's steps. Installed once per process on better-sqlite3's prototypes; costs one comparison per statement
 * while no transaction is paused (no rest parameters: `arguments` as it came, so the wrapper adds no array per call).
 */
function installGuard(db: Database.Database): void {
  if (guardInstalled) return;
  guardInstalled = true;
  const stmtProto = Object.getPrototypeOf(db.prepare('SELECT 1')) as Record<string, (...a: unknown[]) => unknown>;
  for (const name of ['run', 'get', 'all', 'iterate'] as const) {
    const orig = stmtProto[name]!;
    stmtProto[name] = function (this: { database: Database.Database }) {
      if (pausedCount !== 0) check(this.database);
      return orig.apply(this, arguments as unknown as unknown[]);
    };
  }
  const dbProto = Object.getPrototypeOf(db) as Record<string, (...a: unknown[]) => unknown>;
  for (const name of ['exec', 'pragma'] as const) {
    const orig = dbProto[name]!;
    dbProto[name] = function (this: Database.Database) {
      if (pausedCount !== 0) check(this);
      return orig.apply(this, arguments as unknown as unknown[]);
    };
  }
}

/** The gate for `db`; one per connection. */
export function createGate(db: Database.Database): TransactionGate {
  installGuard(db);
  /** Resolves when the current yielding transaction ends; replaced for each one. */
  let ended: Promise<void> = Promise.resolve();
  let mine: Open | undefined;

  async function idle(): Promise<void> {
    if (mine !== undefined) await ended;
  }
  // Checks and starts in the same continuation: between a check and the work, nothing else can open a transaction.
  async function exclusive<T>(fn: () => T): Promise<T> {
    while (mine !== undefined) await ended;
    return fn();
  }

  return {
    get busy() {
      return mine !== undefined;
    },
    idle,
    exclusive,
    whenFree: (fn) => (mine === undefined ? fn() : exclusive(fn)),
    async transaction<T>(steps: () => Steps<T>, opts: { sliceMs?: number; onRollback?: () => void } = {}): Promise<T> {
      while (mine !== undefined) await ended;
      db.exec('BEGIN IMMEDIATE');
      let end!: () => void;
      ended = new Promise((resolve) => (end = resolve));
      const self: Open = { stepping: true };
      mine = self;
      openOn.set(db, self);
      try {
        const gen = steps();
        // Only the generator's own steps run with the connection; its pauses let the rest of the process in (and out).
        function* stepped(): Steps<T> {
          for (;;) {
            setStepping(self, true);
            let r: IteratorResult<void, T>;
            try {
              r = gen.next();
            } finally {
              setStepping(self, false);
            }
            if (r.done) return r.value;
            yield;
          }
        }
        const value = await runYielding(stepped(), opts.sliceMs ?? SLICE_MS);
        // The commit (it writes the pages the cache still holds) in a turn of its own, not after the last slice's: a
        // turn that takes in the timers and sockets also when the last slice ran from an I/O callback.
        await afterIo();
        setStepping(self, true);
        db.exec('COMMIT');
        return value;
      } catch (err) {
        setStepping(self, true);
        try {
          if (db.open && db.inTransaction) db.exec('ROLLBACK');
        } finally {
          opts.onRollback?.();
        }
        throw err;
      } finally {
        setStepping(self, true);
        mine = undefined;
        openOn.delete(db);
        end();
      }
    },
  };
}
