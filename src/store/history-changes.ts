/**
 * Cheap questions about how `reading_history` changed, for a cache of history answers that must know when an answer
 * may have gone stale (the engine's look-back memo, src/alerts/history-memo.ts): which rows were added since a given
 * one, whether a remembered row is still there as it was (a rolled-back transaction gives its row ids to the next
 * writer), the oldest time still stored (a prune), and the first time stored after t. None of them reads a row's
 * fields or labels; every one is an index or rowid seek, or a scan of the new rows only.
 *
 * Kept apart from readings.ts (whose storage format is being reworked): it relies only on `reading_history` having
 * a rowid `id` that grows with each insert and the columns kind, entity, at, seen_at.
 */
import type Database from 'better-sqlite3';
import type { ReadingKind } from '../model.js';

/** A history row by its identity, not its content. */
export interface HistoryRowKey {
  id: number;
  kind: ReadingKind;
  entity: string;
  at: number;
  seen_at: number;
}

/** See the module comment. Every method runs in the caller's transaction when called inside one. */
export interface HistoryChanges {
  /** The newest row (largest id), or undefined when history is empty. */
  last(): HistoryRowKey | undefined;
  /** The row with this id, or undefined when there is none (deleted, or rolled back). */
  row(id: number): HistoryRowKey | undefined;
  /** Rows of `kind` with id > `after` and at < `before`, in id order (a scan of the new rows only). */
  since(after: number, kind: ReadingKind, before: number): HistoryRowKey[];
  /** The oldest `at` in history, or null when it is empty. */
  oldestAt(): number | null;
  /** The smallest `at` > t stored for (kind, entity), or undefined when there is none. */
  nextAt(kind: ReadingKind, entity: string, t: number): number | undefined;
}

/** Prepares the statements of {@link HistoryChanges} on an open, migrated database. */
export function createHistoryChanges(db: Database.Database): HistoryChanges {
  const cols = 'id, kind, entity, at, seen_at';
  const last = db.prepare<[], HistoryRowKey>(`SELECT ${cols} FROM reading_history ORDER BY id DESC LIMIT 1`);
  const row = db.prepare<[number], HistoryRowKey>(`SELECT ${cols} FROM reading_history WHERE id = ?`);
  const since = db.prepare<[number, string, number], HistoryRowKey>(`SELECT ${cols} FROM reading_history WHERE id > ? AND kind = ? AND at < ? ORDER BY id`);
  const oldest = db.prepare<[], { at: number | null }>(`SELECT min(at) AS at FROM reading_history`);
  const next = db.prepare<[string, string, number], { at: number | null }>(
    `SELECT min(at) AS at FROM reading_history WHERE kind = ? AND entity = ? AND at > ?`,
  );
  return {
    last: () => last.get(),
    row: (id) => row.get(id),
    since: (after, kind, before) => since.all(after, kind, before),
    oldestAt: () => oldest.get()?.at ?? null,
    nextAt: (kind, entity, t) => next.get(kind, entity, t)?.at ?? undefined,
  };
}
