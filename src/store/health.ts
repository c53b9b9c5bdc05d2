/**
 * Whether the database takes writes, judged by the writes themselves: a poll's transaction, a delivery record, a tick.
 * A full disk or a read-only file shows only when a write needs space or a lock (a rolled-back probe would pass), so
 * the daemon reports each failed write here and each committed poll clears it. `/readyz` and `lookout_store_writable`
 * read it; `lookout_store_errors_total{operation,reason}` counts the failures.
 */

/** Why a write failed, as the `reason` label says it. */
export type StoreFailureReason = 'full' | 'readonly' | 'locked' | 'io' | 'corrupt' | 'other';

/** The write that failed, as the `operation` label says it. */
export type StoreOperation = 'poll' | 'notify' | 'tick' | 'prune';

/** Classifies a better-sqlite3 error by its SQLite result code (`SQLITE_FULL`, `SQLITE_READONLY_...`, ...). */
export function storeFailureReason(err: unknown): StoreFailureReason {
  const code = String((err as { code?: unknown })?.code ?? '');
  if (code === 'SQLITE_FULL') return 'full';
  if (code.startsWith('SQLITE_READONLY') || code === 'SQLITE_PERM' || code === 'SQLITE_CANTOPEN') return 'readonly';
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return 'locked';
  if (code.startsWith('SQLITE_IOERR')) return 'io';
  if (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB') return 'corrupt';
  return 'other';
}

const WORDS: Record<StoreFailureReason, string> = {
  full: 'the disk is full',
  readonly: 'the file or its filesystem is read-only',
  locked: 'the database is locked by another process',
  io: 'a disk I/O error (a failing disk, or the file made read-only under lookout)',
  corrupt: 'the database file is damaged',
  other: 'an unexpected database error',
};

/** The state the health reports. */
export interface StoreHealthState {
  writable: boolean;
  /** Set while not writable: the reason label, words a person reads, and since when (Unix ms). */
  reason?: StoreFailureReason;
  message?: string;
  since?: number;
}

/** Tracks the outcome of the daemon's writes. */
export class StoreHealth {
  private current: StoreHealthState = { writable: true };

  /** @param onFailure counts each failed write (feeds `lookout_store_errors_total`); @param onChange sees each flip. */
  constructor(private readonly hooks: { now(): number; onFailure?(operation: StoreOperation, reason: StoreFailureReason): void; onChange?(state: StoreHealthState): void }) {}

  /** A write failed: counted; a failure of SQLite itself makes the store not writable until a poll commits again. */
  failed(operation: StoreOperation, err: unknown): StoreFailureReason {
    const reason = storeFailureReason(err);
    this.hooks.onFailure?.(operation, reason);
    // An error that did not come from SQLite (a bug, a value the store refused) says nothing about the disk.
    if (!String((err as { code?: unknown })?.code ?? '').startsWith('SQLITE_')) return reason;
    if (this.current.writable || this.current.reason !== reason) {
      this.current = { writable: false, reason, message: WORDS[reason], since: this.current.since ?? this.hooks.now() };
      this.hooks.onChange?.(this.current);
    }
    return reason;
  }

  /** A write committed: the store takes writes again. */
  succeeded(): void {
    if (this.current.writable) return;
    this.current = { writable: true };
    this.hooks.onChange?.(this.current);
  }

  /** The current state. */
  state(): StoreHealthState {
    return this.current;
  }
}
