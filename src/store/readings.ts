/**
 * Readings: the newest reading per entity (`latest_readings`) and a history for windows and backtests
 * (`reading_history`, labels deduplicated in `reading_labelsets`). History keeps a row, stamped with the poll
 * time (`seen_at`), each time a poll returns an entity differently from how that poll last returned it: a new
 * time, a changed value under the same time, or an older time again. A reading returned unchanged is not stored
 * twice. So history answers both "what was the value at t" (by the reading's own time) and "what did each poll
 * return" (by seen_at, for backtests). Fields are stored as the JSON text of the reading, so big decimal strings
 * come back exactly as they went in.
 */
import { createHash } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { Reading, ReadingKind } from '../model.js';
import type { HistoryView } from '../rules/rule-kind.js';
import { StoreError } from './errors.js';

/** A reading as replayed from history, with the poll that stored it and when (that poll's time). */
export type HistoryReading = Reading & { poll: string; seen_at: number };

/** What {@link ReadingsRepo.savePoll} wrote. */
export interface SavePollResult {
  /** New history rows (an entity returned exactly as this poll last returned it is not stored again). */
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
  /**
   * The newest stored reading with at ≤ t (of several revisions of that time, the last seen), or undefined when
   * history has none that old. With `asOf`, only rows stored by then count: history as it was at that time.
   */
  historyAt(kind: ReadingKind, entity: string, t: number, asOf?: number): Reading | undefined;
  /** Stored readings with from ≤ at ≤ to, oldest first, one per time (its last revision seen by `asOf`, default: any). */
  historyRange(kind: ReadingKind, entity: string, from: number, to: number, asOf?: number): Reading[];
  /**
   * Every history row with from ≤ at ≤ to in time order (ties by kind, entity, seen_at, poll), or with
   * `by: 'seen'` every row with from ≤ seen_at ≤ to in the order polls stored them; read in pages so memory stays
   * bounded and the connection is free for other statements between pages.
   */
  iterateHistory(from: number, to: number, opts?: { kinds?: readonly ReadingKind[]; pageSize?: number; by?: 'at' | 'seen' }): IterableIterator<HistoryReading>;
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
  seen_at: number;
}

function labelsetHash(labelsJson: string): string {
  return createHash('sha256').update(labelsJson).digest('base64url').slice(0, 22);
}

/**
 * The key under which a reading's `unreadable` (field → reason) rides in its stored fields JSON, present only when some
 * field was sent unreadably: a backtest or a restart then judges those fields as the daemon did live (no data for the
 * rules that need them), not as a plain null. No service field can collide with it (a NUL in a JSON key).
 */
const UNREADABLE = '\u0000unreadable';

/** The stored JSON of a reading's fields, with its unreadable fields when there are any. */
function fieldsJson(r: Reading): string {
  const u = r.unreadable;
  return JSON.stringify(u && Object.keys(u).length ? { ...r.fields, [UNREADABLE]: u } : (r.fields ?? {}));
}

function toReading(r: LatestRow): Reading {
  const fields = JSON.parse(r.fields) as Record<string, unknown>;
  const unreadable = fields[UNREADABLE] as Record<string, string> | undefined;
  if (unreadable !== undefined) delete fields[UNREADABLE];
  return {
    kind: r.kind,
    entity: r.entity,
    at: r.at,
    labels: JSON.parse(r.labels ?? '{}') as Record<string, string>,
    fields,
    ...(unreadable !== undefined ? { unreadable } : {}),
  };
}

/** Builds the readings repository over an open, migrated database; statements are prepared once here. */
export function createReadingsRepo(db: Database.Database): ReadingsRepo {
  const upsertLatest = db.prepare(
    `INSERT INTO latest_readings (kind, entity, at, labels, fields, poll, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (kind, entity) DO UPDATE SET at = excluded.at, labels = excluded.labels, fields = excluded.fields,
       poll = excluded.poll, updated_at = excluded.updated_at`,
  );
  const insertHistory = db.prepare(
    `INSERT OR IGNORE INTO reading_history (kind, entity, at, seen_at, fields, labelset, poll) VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  const lastReturned = db.prepare<[string, string], { at: number; labels: string; fields: string; poll: string }>(
    `SELECT at, labels, fields, poll FROM latest_readings WHERE kind = ? AND entity = ?`,
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
  const historyCols = `h.kind, h.entity, h.at, h.fields, l.labels, h.poll, h.seen_at`;
  const historyFrom = `reading_history h LEFT JOIN reading_labelsets l ON l.hash = h.labelset`;
  const getHistoryAt = db.prepare<[string, string, number, number], HistoryRow>(
    `SELECT ${historyCols} FROM ${historyFrom} WHERE h.kind = ? AND h.entity = ? AND h.at <= ? AND h.seen_at <= ?
     ORDER BY h.at DESC, h.seen_at DESC LIMIT 1`,
  );
  const getHistoryRange = db.prepare<{ kind: string; entity: string; from: number; to: number; asOf: number }, HistoryRow>(
    `SELECT ${historyCols} FROM ${historyFrom}
     WHERE h.kind = @kind AND h.entity = @entity AND h.at BETWEEN @from AND @to AND h.seen_at <= @asOf
       AND NOT EXISTS (SELECT 1 FROM reading_history n WHERE n.kind = h.kind AND n.entity = h.entity AND n.at = h.at
                       AND n.seen_at > h.seen_at AND n.seen_at <= @asOf)
     ORDER BY h.at, h.seen_at`,
  );
  // Keyset paging over the (at, kind, entity) or (seen_at, kind, entity) index (the primary key completes either
  // order): each page seeks straight to where the last one ended, even when thousands of rows share one time.
  // `kinds` is a JSON array or NULL for all kinds, so one statement serves every filter.
  type PageArgs = { to: number; t: number; kind: string; entity: string; t2: number; poll: string; kinds: string | null; limit: number };
  const kindsFilter = `(@kinds IS NULL OR h.kind IN (SELECT value FROM json_each(@kinds)))`;
  const historyPageAt = db.prepare<PageArgs, HistoryRow>(
    `SELECT ${historyCols} FROM ${historyFrom}
     WHERE (h.at, h.kind, h.entity, h.seen_at, h.poll) > (@t, @kind, @entity, @t2, @poll) AND h.at <= @to AND ${kindsFilter}
     ORDER BY h.at, h.kind, h.entity, h.seen_at, h.poll LIMIT @limit`,
  );
  const historyPageSeen = db.prepare<PageArgs, HistoryRow>(
    `SELECT ${historyCols} FROM ${historyFrom}
     WHERE (h.seen_at, h.kind, h.entity, h.at, h.poll) > (@t, @kind, @entity, @t2, @poll) AND h.seen_at <= @to AND ${kindsFilter}
     ORDER BY h.seen_at, h.kind, h.entity, h.at, h.poll LIMIT @limit`,
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
      const fields = fieldsJson(r);
      // Unchanged since this poll last returned it: nothing new to keep (a backtest carries it forward).
      const last = lastReturned.get(r.kind, r.entity);
      const unchanged = last !== undefined && last.poll === poll && last.at === r.at && last.fields === fields && last.labels === labels;
      const hash = unchanged ? '' : labelsetHash(labels);
      if (!unchanged && insertHistory.run(r.kind, r.entity, r.at, now, fields, hash, poll).changes > 0) {
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
    opts: { kinds?: readonly ReadingKind[]; pageSize?: number; by?: 'at' | 'seen' } = {},
  ): IterableIterator<HistoryReading> {
    const limit = Math.max(1, opts.pageSize ?? 2000);
    const kinds = opts.kinds ? JSON.stringify(opts.kinds) : null;
    const bySeen = opts.by === 'seen';
    const page = bySeen ? historyPageSeen : historyPageAt;
    // Kinds are never empty, so (from, kind, ...) > (from, '', ...) for every row at `from`.
    let cursor = { t: from, kind: '', entity: '', t2: Number.MIN_SAFE_INTEGER, poll: '' };
    for (;;) {
      const rows = page.all({ to, ...cursor, kinds, limit });
      for (const row of rows) yield { ...toReading(row), poll: row.poll, seen_at: row.seen_at };
      if (rows.length < limit) return;
      const last = rows[rows.length - 1]!;
      cursor = bySeen
        ? { t: last.seen_at, kind: last.kind, entity: last.entity, t2: last.at, poll: last.poll }
        : { t: last.at, kind: last.kind, entity: last.entity, t2: last.seen_at, poll: last.poll };
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
    historyAt: (kind, entity, t, asOf = Number.MAX_SAFE_INTEGER) => {
      const row = getHistoryAt.get(kind, entity, t, asOf);
      return row ? toReading(row) : undefined;
    },
    historyRange: (kind, entity, from, to, asOf = Number.MAX_SAFE_INTEGER) =>
      getHistoryRange.all({ kind, entity, from, to, asOf }).map(toReading),
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

/** Stored history as a rule kind reads it (the engine's, a page's or a report's view of the past). */
export function historyView(readings: Pick<ReadingsRepo, 'historyAt' | 'historyRange'>): HistoryView {
  return {
    at: (kind, entity, t) => readings.historyAt(kind, entity, t),
    range: (kind, entity, from, to) => readings.historyRange(kind, entity, from, to),
  };
}
