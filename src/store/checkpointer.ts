/**
 * WAL checkpoints off the event loop.
 *
 * In WAL mode SQLite copies the log back into the database file (a checkpoint) at the end of whichever commit takes the
 * log past 1,000 pages, inside that commit: after a 10,000-market poll that is ~20 MB copied and synced while the event
 * loop waits (80–440 ms measured, 2026-11-25). The daemon turns that off on its connection and a worker thread with a
 * connection of its own runs `PRAGMA wal_checkpoint(PASSIVE)` whenever the log has grown past the same size. A passive
 * checkpoint takes no lock a writer needs, so the poll's transaction and the checkpoint run side by side. If the worker
 * cannot start or dies, the connection goes back to SQLite's own checkpoints: the log never grows without bound.
 *
 * A worker thread costs ~16 MB of memory (its own V8 heap), a fifth of what a daemon watching 200 markets needs in all
 * (B6s); there a checkpoint copies a few MB and takes milliseconds. So the worker starts only once the log has grown
 * past {@link START_AT_PAGES}: SQLite's own checkpoints keep a log near 1,000 pages, so a longer one means a single
 * commit wrote thousands of pages, and checkpointing inside such commits is what holds the event loop. Until then (and
 * for good, on a small watch) SQLite checkpoints inside the commits as it does by default.
 */
import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';
import type { Logger } from '../log.js';
import type { TransactionGate } from './gate.js';

/** SQLite's default: a checkpoint once the log holds this many pages. */
const AUTOCHECKPOINT_PAGES = 1000;
/** A log this long (16 MB at 4 KB pages) starts the worker. */
export const START_AT_PAGES = 4 * AUTOCHECKPOINT_PAGES;

/** What runs in the worker (plain JS, evaluated: the same code runs from `src/` under the tests and from `dist/`). */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { statSync } = require('node:fs');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true });
db.pragma('busy_timeout = 1000');
parentPort.postMessage({ type: 'ready' });
let stopped = false;
const walSize = () => { try { return statSync(workerData.path + '-wal').size; } catch { return 0; } };
const timer = setInterval(() => {
  if (stopped || walSize() < workerData.thresholdBytes) return;
  try {
    const [r] = db.pragma('wal_checkpoint(PASSIVE)');
    parentPort.postMessage({ type: 'checkpoint', ...r });
  } catch (err) {
    parentPort.postMessage({ type: 'error', message: String(err && err.message || err) });
  }
}, workerData.intervalMs);
parentPort.on('message', (m) => {
  if (m !== 'stop') return;
  stopped = true;
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

/** A running checkpointer. */
export interface Checkpointer {
  /** Whether the worker was started (the log grew past the start size). */
  readonly started: boolean;
  /**
   * Resolves once the worker has its connection and looks at the log (at once when it could not start). Waits for the
   * worker's start: with a start size of more than 0 pages, until the log has grown that far.
   */
  readonly ready: Promise<void>;
  /** Stops the worker and closes its connection; resolves once it has exited. */
  stop(): Promise<void>;
}

/**
 * Checkpoints `path` from a worker thread once its log has grown past `startAtPages` (default {@link START_AT_PAGES};
 * 0: at once), and turns off `db`'s own checkpoints while the worker runs. Looks at the log's size every `intervalMs`.
 * Call it while no yielding transaction is open (at start-up); with `gate`, what it does later waits for the gate.
 */
export function startCheckpointer(
  db: Database.Database,
  path: string,
  opts: { log: Logger; intervalMs?: number; startAtPages?: number; gate?: Pick<TransactionGate, 'whenFree'> },
): Checkpointer {
  // Its pragmas run from a timer or a worker's event: never inside a poll's open transaction (the gate refuses them there).
  const whenFree = (fn: () => void) => {
    Promise.resolve(opts.gate ? opts.gate.whenFree(fn) : fn()).catch((err: unknown) => opts.log.warn('checkpointer_failed', { err, hint: 'SQLite checkpoints inside commits instead' }));
  };
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  const intervalMs = opts.intervalMs ?? 1_000;
  const startAt = (opts.startAtPages ?? START_AT_PAGES) * pageSize;
  let running: Checkpointer | undefined;
  let ready!: () => void;
  const readyOnce = new Promise<void>((resolve) => (ready = resolve));
  let stopped = false;
  const walSize = () => {
    try {
      return statSync(`${path}-wal`).size;
    } catch {
      return 0;
    }
  };
  let starting = false;
  const look = () => {
    if (stopped || starting || walSize() < startAt) return;
    starting = true;
    clearInterval(watch);
    whenFree(() => {
      if (stopped || !db.open) return;
      running = runWorker(db, path, { log: opts.log, intervalMs, pageSize, whenFree });
      void running.ready.then(ready);
    });
  };
  const watch = setInterval(look, intervalMs);
  watch.unref();
  look();
  return {
    get started() {
      return running !== undefined;
    },
    ready: readyOnce,
    async stop() {
      stopped = true;
      clearInterval(watch);
      ready();
      await running?.stop();
    },
  };
}

/** Starts the worker: see the module comment. */
function runWorker(db: Database.Database, path: string, opts: { log: Logger; intervalMs: number; pageSize: number; whenFree: (fn: () => void) => void }): Checkpointer {
  const fallback = () =>
    opts.whenFree(() => {
      if (db.open) db.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
    });
  let worker: Worker;
  try {
    worker = new Worker(WORKER, {
      eval: true,
      workerData: {
        driver: createRequire(import.meta.url).resolve('better-sqlite3'),
        path,
        intervalMs: opts.intervalMs,
        thresholdBytes: AUTOCHECKPOINT_PAGES * opts.pageSize,
      },
    });
  } catch (err) {
    opts.log.warn('checkpointer_failed', { err, hint: 'SQLite checkpoints inside commits instead' });
    return { started: false, ready: Promise.resolve(), stop: async () => undefined };
  }
  db.pragma('wal_autocheckpoint = 0');
  // A log that once held a 50,000-position poll is cut back to this size when it starts over, not kept at its largest.
  db.pragma(`journal_size_limit = ${64 * 1024 * 1024}`);
  let stopping = false;
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  let started!: () => void;
  const ready = new Promise<void>((resolve) => (started = resolve));
  void exited.then(started);
  worker.on('message', (m: { type: string; busy?: number; log?: number; checkpointed?: number; message?: string }) => {
    if (m.type === 'ready') started();
    else if (m.type === 'checkpoint') opts.log.debug('wal_checkpoint', { busy: m.busy, log: m.log, checkpointed: m.checkpointed });
    else opts.log.warn('wal_checkpoint_failed', { error: m.message });
  });
  worker.on('error', (err) => {
    opts.log.warn('checkpointer_failed', { err, hint: 'SQLite checkpoints inside commits instead' });
    fallback();
  });
  worker.on('exit', () => {
    if (!stopping) fallback();
  });
  worker.unref();
  opts.log.info('checkpointer_started', { hint: 'the WAL outgrew SQLite checkpoints inside commits; a worker thread runs them now' });
  return {
    started: true,
    ready,
    async stop() {
      if (stopping) return exited;
      stopping = true;
      worker.postMessage('stop');
      // Bounded: a worker stuck in a checkpoint on a failing disk must not hold up the shutdown.
      const timer = setTimeout(() => void worker.terminate(), 2_000);
      await exited;
      clearTimeout(timer);
      fallback();
    },
  };
}
