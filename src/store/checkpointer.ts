/**
 * WAL checkpoints off the event loop.
 *
 * In WAL mode SQLite copies the log back into the database file (a checkpoint) at the end of whichever commit takes the
 * log past 1,000 pages, inside that commit: after a 10,000-market poll that is ~20 MB copied and synced while the event
 * loop waits (80–440 ms measured, 2026-11-25). The daemon turns that off on its connection and a worker thread with a
 * connection of its own runs `PRAGMA wal_checkpoint(PASSIVE)` whenever the log has grown past the same size. A passive
 * checkpoint takes no lock a writer needs, so the poll's transaction and the checkpoint run side by side. If the worker
 * cannot start or dies, the connection goes back to SQLite's own checkpoints: the log never grows without bound.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';
import type { Logger } from '../log.js';

/** SQLite's default: a checkpoint once the log holds this many pages. */
const AUTOCHECKPOINT_PAGES = 1000;

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
  /** Resolves once the worker has its connection and looks at the log (at once when it could not start). */
  readonly ready: Promise<void>;
  /** Stops the worker and closes its connection; resolves once it has exited. */
  stop(): Promise<void>;
}

/** Starts checkpointing `path` from a worker thread, and turns off `db`'s own checkpoints while it runs. */
export function startCheckpointer(db: Database.Database, path: string, opts: { log: Logger; intervalMs?: number }): Checkpointer {
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  const fallback = () => {
    if (db.open) db.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
  };
  let worker: Worker;
  try {
    worker = new Worker(WORKER, {
      eval: true,
      workerData: {
        driver: createRequire(import.meta.url).resolve('better-sqlite3'),
        path,
        intervalMs: opts.intervalMs ?? 1_000,
        thresholdBytes: AUTOCHECKPOINT_PAGES * pageSize,
      },
    });
  } catch (err) {
    opts.log.warn('checkpointer_failed', { err, hint: 'SQLite checkpoints inside commits instead' });
    return { ready: Promise.resolve(), stop: async () => undefined };
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
  return {
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
