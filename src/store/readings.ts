/**
 * Readings: the newest reading per entity (`latest_readings`) and a history of every distinct
 * (kind, entity, at) for windows and backtests (`reading_history`, labels deduplicated in
 * `reading_labelsets`). Fields are stored as the JSON text of the reading, so big decimal strings
 * come back exactly as they went in.
 */
import { createHash } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { Reading, ReadingKind } from '../model.js';
import { StoreError } from './errors.js';

/** A reading as replayed from history, with the poll that stored it. */
export type HistoryReading = Reading & { poll: string };

/** What {@link ReadingsRepo.savePoll} wrote. */
export interface SavePollResult {
  /** New history rows (a (kind, entity, at) already stored is not stored again). */
  inserted: number;
  /** Entities whose latest reading was written. */
  latest: number;
}

/** Row counts for the status page. `history` is a full count: cheap enough for a status view, not for a hot loop. */
export interface ReadingCounts {
  latest: Partial<Record<ReadingKind, number>>;
  history: number;
  /** Oldest and newest `at` in history, null when empty. */
  oldestAt: number | null;
  newestAt: number | null;
}

/** Options of {@link ReadingsRepo.prune}. */
export interface PruneOptions {
  /** Rows deleted per statement (each its own short write transaction outside a caller's). Default 5000. */
  batchSize?: number;
  /** Stop after about this many rows, leaving the rest for the next call. Default: no limit. */
  maxRows?: number;
}

/** The (kind, entity) of a latest reading. */
export interface EntityKey {
  kind: ReadingKind;
  entity: string;
}

/** Repository of readings. Every method runs in the caller's transaction when called inside one. */
export interface ReadingsRepo {
  /** Upserts the latest reading per entity and appends new history rows, atomically (a savepoint inside a caller's transaction). */
  savePoll(poll: string, readings: readonly Reading[], now: number): SavePollResult;
  latest(kind: ReadingKind, entity: string): Reading | undefined;
  /** Every latest reading of a kind, ordered by entity. */
  latestAll(kind: ReadingKind): Reading[];
  /** Every latest reading last written by `poll`, ordered by kind then entity. */
  latestForPoll(poll: string): Reading[];
  /** The entities whose latest reading was last written by `poll`. */
  entitiesForPoll(poll: string): EntityKey[];
  /** Forgets an entity's latest reading (it vanished); its history stays until pruned. Returns whether a row went. */
  removeLatest(kind: ReadingKind, entity: string): boolean;
  /** The newest stored reading with at ≤ t, or undefined when history has none that old. */
  historyAt(kind: ReadingKind, entity: string, t: number): Reading | undefined;
  /** Stored readings with from ≤ at ≤ to, oldest first. */
  historyRange(kind: ReadingKind, entity: string, from: number, to: number): Reading[];
  /**
   * Every history reading with from ≤ at ≤ to in time order (ties by kind, entity), read in pages
   * so memory stays bounded and the connection is free for other statements between pages.
   */
  iterateHistory(from: number, to: number, opts?: { kinds?: readonly ReadingKind[]; pageSize?: number }): IterableIterator<HistoryReading>;
  /** Deletes history with at < olderThan in batches; returns the rows deleted. */
  prune(olderThan: number, opts?: PruneOptions): number;
  /** Deletes label sets no history row points to (a full scan of history: run it rarely). Returns the rows deleted. */
  pruneLabelsets(): number;
  counts(): ReadingCounts;
}

interface LatestRow {
  kind: ReadingKind;
  entity: string;
  at: number;
  labels: string;
  fields: string;
}
interface HistoryRow extends LatestRow {
  poll: string;
}

function labelsetHash(labelsJson: string): string {
  return createHash('sha256').update(labelsJson).digest('base64url').slice(0, 22);
}

const toReading = (r: LatestRow): Reading => ({
  kind: r.kind,
  entity: r.entity,
  at: r.at,
  labels: JSON.parse(r.labels ?? '{}') as Record<string, string>,
  fields: JSON.parse(r.fields) as Record<string, unknown>,
});

/** Builds the readings repository over an open, migrated database; statements are prepared once here. */
export function createReadingsRepo(db: Database.Database): ReadingsRepo {
  const upsertLatest = db.prepare(
    `INSERT INTO latest_readings (kind, entity, at, labels, fields, poll, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (kind, entity) DO UPDATE SET at = excluded.at, labels = excluded.labels, fields = excluded.fields,
       poll = excluded.poll, updated_at = excluded.updated_at`,
  );
  const insertHistory = db.prepare(
    `INSERT OR IGNORE INTO reading_history (kind, entity, at, fields, labelset, poll) VALUES (?, ?, ?, ?, ?, ?)`,
  );
  const insertLabelset = db.prepare(`INSERT OR IGNORE INTO reading_labelsets (hash, labels) VALUES (?, ?)`);
  const latestCols = `kind, entity, at, labels, fields`;
  const getLatest = db.prepare<[string, string], LatestRow>(
    `SELECT ${latestCols} FROM latest_readings WHERE kind = ? AND entity = ?`,
  );
  const allLatest = db.prepare<[string], LatestRow>(
    `SELECT ${latestCols} FROM latest_readings WHERE kind = ? ORDER BY entity`,
  );
  const pollLatest = db.prepare<[string], LatestRow>(
    `SELECT ${latestCols} FROM latest_readings WHERE poll = ? ORDER BY kind, entity`,
  );
  const pollEntities = db.prepare<[string], EntityKey>(
    `SELECT kind, entity FROM latest_readings WHERE poll = ? ORDER BY kind, entity`,
  );
  const deleteLatest = db.prepare(`DELETE FROM latest_readings WHERE kind = ? AND entity = ?`);
  const historyCols = `h.kind, h.entity, h.at, h.fields, l.labels, h.poll`;
  const historyFrom = `reading_history h LEFT JOIN reading_labelsets l ON l.hash = h.labelset`;
  const getHistoryAt = db.prepare<[string, string, number], HistoryRow>(
    `SELECT ${historyCols} FROM ${historyFrom} WHERE h.kind = ? AND h.entity = ? AND h.at <= ? ORDER BY h.at DESC LIMIT 1`,
  );
  const getHistoryRange = db.prepare<[string, string, number, number], HistoryRow>(
    `SELECT ${historyCols} FROM ${historyFrom} WHERE h.kind = ? AND h.entity = ? AND h.at BETWEEN ? AND ? ORDER BY h.at`,
  );
  // Keyset paging over the (at, kind, entity) index: each page seeks straight to where the last one ended,
  // even when thousands of rows share one `at`.
  // `kinds` is a JSON array or NULL for all kinds, so one statement serves every filter.
  const historyPage = db.prepare<
    { to: number; at: number; kind: string; entity: string; kinds: string | null; limit: number },
    HistoryRow
  >(
    `SELECT ${historyCols} FROM ${historyFrom}
     WHERE (h.at, h.kind, h.entity) > (@at, @kind, @entity) AND h.at <= @to
       AND (@kinds IS NULL OR h.kind IN (SELECT value FROM json_each(@kinds)))
     ORDER BY h.at, h.kind, h.entity LIMIT @limit`,
  );
  const pruneBatch = db.prepare(
    `DELETE FROM reading_history WHERE (kind, entity, at) IN
       (SELECT kind, entity, at FROM reading_history WHERE at < ? ORDER BY at LIMIT ?)`,
  );
  const pruneLabelsetsStmt = db.prepare(
    `DELETE FROM reading_labelsets WHERE hash NOT IN (SELECT labelset FROM reading_history)`,
  );
  const countLatest = db.prepare<[], { kind: ReadingKind; n: number }>(
    `SELECT kind, count(*) AS n FROM latest_readings GROUP BY kind ORDER BY kind`,
  );
  const countHistory = db.prepare<[], { n: number; oldest: number | null; newest: number | null }>(
    `SELECT (SELECT count(*) FROM reading_history) AS n, (SELECT min(at) FROM reading_history) AS oldest,
            (SELECT max(at) FROM reading_history) AS newest`,
  );

  const save = db.transaction((poll: string, readings: readonly Reading[], now: number): SavePollResult => {
    let inserted = 0;
    // The newest reading per entity wins `latest`, whatever order the batch came in.
    const newest = new Map<string, { r: Reading; labels: string; fields: string }>();
    for (const r of readings) {
      if (!Number.isFinite(r.at)) {
        throw new StoreError('E_STORE_INVALID', `poll ${poll}: reading ${r.kind}/${r.entity} has a non-finite time (${r.at})`);
      }
      const labels = JSON.stringify(r.labels ?? {});
      const fields = JSON.stringify(r.fields ?? {});
      const hash = labelsetHash(labels);
      if (insertHistory.run(r.kind, r.entity, r.at, fields, hash, poll).changes > 0) {
        inserted++;
        insertLabelset.run(hash, labels);
      }
      const key = `${r.kind}\u0000${r.entity}`;
      const prev = newest.get(key);
      if (!prev || r.at >= prev.r.at) newest.set(key, { r, labels, fields });
    }
    for (const { r, labels, fields } of newest.values()) {
      upsertLatest.run(r.kind, r.entity, r.at, labels, fields, poll, now);
    }
    return { inserted, latest: newest.size };
  });

  function* iterate(
    from: number,
    to: number,
    opts: { kinds?: readonly ReadingKind[]; pageSize?: number } = {},
  ): IterableIterator<HistoryReading> {
    const limit = Math.max(1, opts.pageSize ?? 2000);
    const kinds = opts.kinds ? JSON.stringify(opts.kinds) : null;
    // Kinds are never empty, so (from, kind, entity) > (from, '', '') for every row at `from`.
    let cursor = { at: from, kind: '', entity: '' };
    for (;;) {
      const rows = historyPage.all({ to, ...cursor, kinds, limit });
      for (const row of rows) yield { ...toReading(row), poll: row.poll };
      if (rows.length < limit) return;
      const last = rows[rows.length - 1]!;
      cursor = { at: last.at, kind: last.kind, entity: last.entity };
    }
  }

  return {
    savePoll: (poll, readings, now) => save(poll, readings, now),
    latest: (kind, entity) => {
      const row = getLatest.get(kind, entity);
      return row ? toReading(row) : undefined;
    },
    latestAll: (kind) => allLatest.all(kind).map(toReading),
    latestForPoll: (poll) => pollLatest.all(poll).map(toReading),
    entitiesForPoll: (poll) => pollEntities.all(poll),
    removeLatest: (kind, entity) => deleteLatest.run(kind, entity).changes > 0,
    historyAt: (kind, entity, t) => {
      const row = getHistoryAt.get(kind, entity, t);
      return row ? toReading(row) : undefined;
    },
    historyRange: (kind, entity, from, to) => getHistoryRange.all(kind, entity, from, to).map(toReading),
    iterateHistory: iterate,
    prune: (olderThan, opts = {}) => {
      const batch = Math.max(1, opts.batchSize ?? 5000);
      const max = opts.maxRows ?? Infinity;
      let total = 0;
      while (total < max) {
        const want = Math.min(batch, max - total);
        const n = pruneBatch.run(olderThan, want).changes;
        total += n;
        if (n < want) break;
      }
      return total;
    },
    pruneLabelsets: () => pruneLabelsetsStmt.run().changes,
    counts: () => {
      const latest: Partial<Record<ReadingKind, number>> = {};
      for (const { kind, n } of countLatest.all()) latest[kind] = n;
      const h = countHistory.get()!;
      return { latest, history: h.n, oldestAt: h.oldest, newestAt: h.newest };
    },
  };
}
