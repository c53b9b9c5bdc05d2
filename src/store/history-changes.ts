/**
 * Cheap questions about how full-resolution history changed, for a cache of history answers that must know when an
 * answer may have gone stale (the engine's look-back memo, src/alerts/history-memo.ts): which rows were added since a
 * given one, whether a remembered row is still there (a rolled-back transaction takes its rows with it), the oldest
 * storage time still kept (a prune or a fold into buckets deletes from there), and the first time stored after t.
 * None of them decodes a row's values; each is a seek on the primary key (storage order) or the entity index, or a
 * scan of the new rows only — where rows are sealed into chunks (src/store/raw-store.ts), the chunks that may hold the
 * row asked about are opened. Vanished markers are not rows of history here. The rows of a save come after every row
 * stored before it in storage order: the readings repository gives each save a storage time after the newest one
 * (two saves in one millisecond, a clock stepped back), so "added since a row" misses none of this connection's.
 */
import type Database from 'better-sqlite3';
import type { ReadingKind } from '../model.js';
import type { BucketStore } from './bucket-store.js';
import { keyBefore, type RawStore } from './raw-store.js';
import type { EntityKey } from './readings.js';

/** A history row by its key (storage time, entity id, time, poll id), not its content. */
export interface HistoryRowKey {
  seen_at: number;
  entity: number;
  at: number;
  poll: number;
}

/** See the module comment. Every method runs in the caller's transaction when called inside one. */
export interface HistoryChanges {
  /** The newest row in storage order, or undefined when history is empty. */
  last(): HistoryRowKey | undefined;
  /** Whether this row is still stored. */
  has(key: HistoryRowKey): boolean;
  /** Rows of `kind` stored after `after` (all rows when undefined) with at < `before`, in storage order. */
  since(after: HistoryRowKey | undefined, kind: ReadingKind, before: number): Array<{ entity: string; at: number }>;
  /** The oldest storage time still kept, or null when history is empty. */
  oldestSeen(): number | null;
  /** The smallest `at` > t stored for (kind, entity) at full resolution or as a bucket, or undefined when there is none. */
  nextAt(kind: ReadingKind, entity: string, t: number): number | undefined;
  /**
   * Drops what it remembers of sealed rows: after a rollback (SQLite's total_changes() does not go back, so the memo's
   * key would still match rows the rollback took away).
   */
  forget(): void;
}

/** The readings repository's parts {@link createHistoryChanges} asks: its raw store, its buckets' next time, its entity ids. */
export interface HistoryParts {
  raw: RawStore;
  bucketNextAt: BucketStore['nextAt'];
  entityId: (kind: ReadingKind, entity: string) => number | undefined;
}

/** Prepares the statements of {@link HistoryChanges} over the readings repository's parts (its historyChanges() builds it once). */
export function createHistoryChanges(db: Database.Database, { raw, bucketNextAt, entityId }: HistoryParts): HistoryChanges {
  const since = db.prepare<[number, number, number, number, number], { seen_at: number; entity: number; at: number; poll: number; value: string }>(
    `SELECT h.seen_at, h.entity, h.at, h.poll, e.value FROM reading_history h JOIN history_entities e ON e.id = h.entity
     WHERE (h.seen_at, h.entity, h.at, h.poll) > (?, ?, ?, ?) AND h.at < ? AND h.shape != 0 ORDER BY h.seen_at, h.entity, h.at, h.poll`,
  );
  // The texts of the entities of sealed rows, in one statement (their ids as a JSON array): not through the entity
  // dictionary's cache, which would keep an object per entity (as the live path's reads do not).
  const entityTexts = db.prepare<[string], { id: number; value: string }>(
    `SELECT id, value FROM history_entities WHERE id IN (SELECT value FROM json_each(?))`,
  );
  // What this connection and others have written: a row sealed since is found again only while neither moved.
  const written = db.prepare<[], { c: number; v: number }>(`SELECT total_changes() AS c, (SELECT data_version FROM pragma_data_version) AS v`);
  type Sealed = HistoryRowKey & { value: string };
  let sealedMemo: { after: HistoryRowKey; c: number; v: number; rows: Sealed[] } | undefined;
  /**
   * Rows sealed into chunks after `after` (any time), in no particular order. The memo asks once per reading kind on
   * each sync with the same row: the chunks are opened (inflated) once for all kinds, until history is written again.
   */
  const sealedSince = (after: HistoryRowKey): Sealed[] => {
    const w = written.get()!;
    const m = sealedMemo;
    if (m && m.c === w.c && m.v === w.v && m.after.seen_at === after.seen_at && m.after.entity === after.entity && m.after.at === after.at && m.after.poll === after.poll) return m.rows;
    const keys = raw.sealedSince(after, Number.MAX_SAFE_INTEGER);
    const texts = new Map<number, string>();
    if (keys.length > 0) for (const e of entityTexts.all(JSON.stringify([...new Set(keys.map((k) => k.entity))]))) texts.set(e.id, e.value);
    const rows = keys.map((k) => ({ ...k, value: texts.get(k.entity)! }));
    sealedMemo = { after: { ...after }, c: w.c, v: w.v, rows };
    return rows;
  };
  return {
    last: raw.last,
    has: raw.has,
    since: (after, kind, before) => {
      const from = after ?? { seen_at: Number.MIN_SAFE_INTEGER, entity: 0, at: 0, poll: 0 };
      let rows: Array<HistoryRowKey & { value: string }> = since.all(from.seen_at, from.entity, from.at, from.poll, before);
      // Rows sealed into chunks since (only when `after` is older than the hours sealed by now).
      const sealed = sealedSince(from).filter((r) => r.at < before);
      if (sealed.length > 0) {
        rows = [...sealed, ...rows].sort((x, y) => (keyBefore(x, y) ? -1 : keyBefore(y, x) ? 1 : 0));
      }
      const out: Array<{ entity: string; at: number }> = [];
      for (const r of rows) {
        const e = JSON.parse(r.value) as EntityKey;
        if (e.kind === kind) out.push({ entity: e.entity, at: r.at });
      }
      return out;
    },
    oldestSeen: raw.oldest,
    forget: () => {
      sealedMemo = undefined;
    },
    nextAt: (kind, entity, t) => {
      const id = entityId(kind, entity);
      if (id === undefined) return undefined;
      const times = [raw.nextAt(id, t), bucketNextAt(id, t)].filter((x): x is number => typeof x === 'number');
      return times.length ? Math.min(...times) : undefined;
    },
  };
}
