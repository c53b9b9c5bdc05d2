/**
 * Readings: a history for windows and backtests, and per entity the poll that returned it last (`latest_entities`);
 * an entity's latest reading is its newest in history.
 *
 * History at full resolution (`reading_history`) keeps a row, stamped with the poll time (`seen_at`), each time a
 * poll returns an entity differently from how that poll last returned it: a changed value, a changed time of a daily
 * record, an older time again. A market or position returned with the same values and only a newer `timestamp`,
 * `block` or time costs no row (the previous row says the same; a backtest carries it forward). So history answers
 * both "what was the value at t" (by the reading's own time) and "what did each poll return" (by seen_at, for
 * backtests). Rows are compact (src/store/codec.ts): the entity, poll and shape are small integer ids, the values
 * packed; the table is ordered by `seen_at` so a poll's rows are appended together and pruning cuts from the front.
 *
 * Past `storage.raw_retention`, {@link ReadingsRepo.downsample} folds full-resolution rows into 5-minute buckets
 * (`reading_buckets`, src/store/buckets.ts): the last reading of each bucket plus the lowest and highest value of each
 * numeric field. Once a bucket's hour is over it is sealed: moved, with the entity's other buckets of that hour, into
 * one chunk row of `reading_bucket_chunks` (src/store/bucket-chunks.ts), never changed after. A bucket folded again
 * later (rows stored late) is in a second chunk or in `reading_buckets`; reads merge its parts. History reads answer
 * from raw rows and buckets; a reading from a bucket carries `bucket`.
 */
import type Database from 'better-sqlite3';
import type { Reading, ReadingKind } from '../model.js';
import type { HistoryView } from '../rules/rule-kind.js';
import { chunkStart } from './chunk-form.js';
import { createBucketStore } from './bucket-store.js';
import { createHistoryChanges, type HistoryChanges } from './history-changes.js';
import { createRawStore, type RawRow } from './raw-store.js';
import { entryReader } from './raw-chunks.js';
import { bucketOf, bucketStart, mergeBuckets, writeBucketValues, type Bucket } from './buckets.js';
import { packReading, packValuesFrom, pickPlanOf, shapeText, unpackFields, unpackPlanned, writeMemoValues, Writer, type FieldPick, type PackedLayout, type PickPlan, type Shape } from './codec.js';
import { hashedDictionary, pairIds } from './dictionary.js';
import { shapeKeyer } from './shape-key.js';
import { StoreError } from './errors.js';
import { HEAVY_ROWS_PER_STEP, ROWS_PER_STEP, runSync, type Steps } from '../yielding.js';

/** A reading as replayed from history, with the poll that stored it and when (that poll's time). */
export type HistoryReading = Reading & {
  poll: string;
  seen_at: number;
  vanished?: true;
  /**
   * Its stored row, while some of its fields are left for {@link ReadingsRepo.described} to decode (iterateHistory's
   * `describe`).
   */
  stored?: RawRow | undefined;
};

/** What {@link ReadingsRepo.savePoll} wrote. */
export interface SavePollResult {
  /** New history rows (an entity returned as this poll last returned it is not stored again). */
  inserted: number;
  /** Entities the poll returned (each now has this poll as the one that returned it last). */
  latest: number;
}

/** Row counts for the status page. Full counts: cheap enough for a status view, not for a hot loop. */
export interface ReadingCounts {
  latest: Partial<Record<ReadingKind, number>>;
  /** Full-resolution history rows. */
  history: number;
  /** 5-minute buckets. */
  buckets: number;
  /** Oldest and newest time in history (a bucket's start, a row's storage time), null when empty. */
  oldestAt: number | null;
  newestAt: number | null;
}

/** Options of {@link ReadingsRepo.prune} and {@link ReadingsRepo.downsample}. */
export interface PruneOptions {
  /** Rows handled per statement or transaction. Default 5000. */
  batchSize?: number;
  /** Stop after about this many rows, leaving the rest for the next call. Default: no limit. */
  maxRows?: number;
}

/** What {@link ReadingsRepo.downsample} did. */
export interface DownsampleResult {
  /** Full-resolution rows folded into buckets (and deleted). */
  rows: number;
  /** Bucket rows written (new or merged). */
  buckets: number;
  /** Buckets of hours that are over sealed into chunks. */
  sealed: number;
}

/** The (kind, entity) of a latest reading. */
export interface EntityKey {
  kind: ReadingKind;
  entity: string;
}

/**
 * Repository of readings. Every method runs in the caller's transaction when called inside one.
 *
 * An entity's **latest reading** is its newest stored reading (by its time; of several revisions of that time, the
 * last stored), from full-resolution history or a bucket's last reading — or, when pruning took that, from
 * `latest_kept`, where prune moves it while the entity is current. A snapshot returned again with the same values
 * and only a newer time stores nothing (see savePoll), so its latest reading keeps the time of its last change.
 */
export interface ReadingsRepo {
  /**
   * Appends new history rows and records, per entity, that `poll` returned it last (written only when that changes),
   * atomically (a savepoint inside a caller's transaction).
   */
  savePoll(poll: string, readings: readonly Reading[], now: number): SavePollResult;
  /** savePoll as steps that pause between readings, for a transaction the caller holds open ({@link Store.transactionYielding}). */
  savePollSteps(poll: string, readings: readonly Reading[], now: number): Steps<SavePollResult>;
  /** The entity's latest reading, undefined when no poll returned it (or it vanished: {@link removeLatest}). */
  latest(kind: ReadingKind, entity: string): Reading | undefined;
  /** Every latest reading of a kind, ordered by entity. */
  latestAll(kind: ReadingKind): Reading[];
  /** The latest reading of every entity `poll` returned last, ordered by kind then entity. */
  latestForPoll(poll: string): Reading[];
  /** The entities `poll` returned last, ordered by kind then entity. */
  entitiesForPoll(poll: string): EntityKey[];
  /**
   * Forgets, as {@link removeLatest} does, every entity `poll` returned before that its save just now (savePoll or
   * savePollSteps of the same poll, in the same transaction) did not return, but those `spare` names; pauses between
   * pages of `pageSize` entities. Returns how many it forgot. The poll's entities are compared by their history ids,
   * which the save already holds: only a vanished entity's name is read.
   */
  forgetVanishedSteps(poll: string, spare: (e: EntityKey) => boolean, pageSize?: number): Steps<number>;
  /** Forgets that a poll returned the entity (it vanished): no latest reading then; its history stays until pruned. Returns whether it had one. */
  removeLatest(kind: ReadingKind, entity: string): boolean;
  /**
   * The newest stored reading with at ≤ t (of several revisions of that time, the last seen), or undefined when
   * history has none that old. With `asOf`, only rows stored by then count: history as it was at that time.
   * From bucketed time: the newest bucket whose last reading is at ≤ t.
   */
  historyAt(kind: ReadingKind, entity: string, t: number, asOf?: number): Reading | undefined;
  /** Stored readings with from ≤ at ≤ to, oldest first, one per time (its last revision seen by `asOf`, default: any). */
  historyRange(kind: ReadingKind, entity: string, from: number, to: number, asOf?: number): Reading[];
  /**
   * Every full-resolution history row with from ≤ seen_at ≤ to in the order polls stored them (ties by entity, time,
   * poll); read in pages so memory stays bounded and the connection is free for other statements between pages. With
   * `vanished`, also a marker (`vanished: true`, no fields) where an entity the poll returned last time was missing.
   * With `fields`, each reading holds only those of its fields (the others are not decoded: a backtest of a rule that
   * reads one field decodes that one; src/rules/reading-fields.ts says which a set of rules reads). With `describe`
   * as well, only `fields` are decoded now and each reading keeps its stored row (`stored`), so that
   * {@link described} decodes the fields of `describe` for the few readings that are described (an alert's
   * annotations).
   */
  iterateHistory(
    from: number,
    to: number,
    opts?: { kinds?: readonly ReadingKind[]; pageSize?: number; vanished?: boolean; fields?: FieldPick; describe?: FieldPick },
  ): IterableIterator<HistoryReading>;
  /**
   * A reading of iterateHistory with `describe`, its fields from now on as it would have been read with `fields:
   * describe` (decoded into the reading itself, once; nothing else of it changes but `stored`, emptied); any other
   * reading as it is. Returns the reading.
   */
  described<R extends Reading>(reading: R, describe: FieldPick): R;
  /**
   * Every bucket with from ≤ start ≤ to, by start then entity; each reading carries `bucket`. With `fields` (as for
   * iterateHistory), each holds only those fields and their extremes.
   */
  iterateBuckets(from: number, to: number, opts?: { kinds?: readonly ReadingKind[]; pageSize?: number; fields?: FieldPick }): IterableIterator<HistoryReading>;
  /** The small integer history rows name the entity by, or undefined when none was ever stored. */
  entityId(kind: ReadingKind, entity: string): number | undefined;
  /**
   * How full-resolution history changed, for a cache of history answers (src/store/history-changes.ts), over this
   * repository's own raw store and buckets; built on first use, the same one after.
   */
  historyChanges(): HistoryChanges;
  /** The earliest time full-resolution history covers: the oldest row's storage time, null when there is none. */
  rawSince(): number | null;
  /**
   * Folds full-resolution rows stored before `before` (sealed hours whole: those of the hour holding `before` wait for a
   * later call) into 5-minute buckets, batch by batch, then seals the buckets of
   * hours that ended {@link SEAL_SLACK_MS} before `before` (and before the oldest row left to fold) into chunks, batch
   * by batch; returns what it did. `maxRows` bounds each of the two.
   */
  downsample(before: number, opts?: PruneOptions): DownsampleResult;
  /**
   * Seals full-resolution rows of hours (of storage time) that ended {@link SEAL_SLACK_MS} before `now` (the daemon passes
   * its time less the rules' look-back, src/rules/look-back.ts, so a look-back reads unsealed rows) into one
   * chunk per entity and hour (src/store/raw-store.ts), batch by batch; returns the rows sealed. `maxRows` bounds it
   * (an entity's rows go whole: a batch may pass it by one entity's hours).
   */
  sealHistory(now: number, opts?: PruneOptions): number;
  /**
   * Deletes history stored before `olderThan` (sealed hours whole) and buckets that start before it, in batches; returns the rows deleted
   * (chunk rows count one each). Sealed buckets go by whole hours: those of the hour holding `olderThan` stay. The
   * newest stored reading of an entity a poll still returns is moved to `latest_kept` first: it stays its latest.
   */
  prune(olderThan: number, opts?: PruneOptions): number;
  /** Deletes shapes no history row or bucket points to (a full scan: run it rarely). Returns the rows deleted. */
  pruneShapes(): number;
  counts(): ReadingCounts;
}

/** How long after an hour ends (in storage time) its buckets are sealed: rows whose time lags their storage by more are folded late. */
export const SEAL_SLACK_MS = 10 * 60_000;

/**
 * The key under which a reading's `unreadable` (field → reason) rode in the fields JSON of schemas before 8 (history)
 * and 9 (latest), present only when some field was sent unreadably; the migrations read it. No service field can
 * collide with it (a NUL in a JSON key). Today the unreadable map is part of the reading's shape.
 */
const UNREADABLE = '\u0000unreadable';

/** Kinds whose readings are snapshots of a current state: one with a newer time but the same values is not stored again. */
const SNAPSHOT_KINDS = new Set<ReadingKind>(['market', 'position']);
/** Fields that move every poll without saying anything new about a snapshot. */
const MOVING = new Set(['timestamp', 'block']);

const entityKey = (kind: string, entity: string): string => `${kind}\u0000${entity}`;

/** The time at the end of a save's memo of a reading (see memoOf in {@link createReadingsRepo}): a double, little-endian. */
const TIME_BYTES = 8;
const timeView = new DataView(new ArrayBuffer(TIME_BYTES));
function timeOf(memo: string): number {
  const from = memo.length - TIME_BYTES;
  for (let i = 0; i < TIME_BYTES; i++) timeView.setUint8(i, memo.charCodeAt(from + i));
  return timeView.getFloat64(0, true);
}
/** Whether two memos hold the same values (their times aside). */
function sameValues(a: string, b: string): boolean {
  const n = a.length;
  if (n !== b.length) return false;
  for (let i = 0; i < n - TIME_BYTES; i++) if (a.charCodeAt(i) !== b.charCodeAt(i)) return false;
  return true;
}

/** The id tables history rows point to: entities, polls and reading shapes. */
function historyDictionaries(db: Database.Database, opts: { cacheEntityIds?: boolean } = {}) {
  return {
    entities: hashedDictionary<EntityKey>(db, 'history_entities', (t) => JSON.parse(t) as EntityKey, { cacheIds: opts.cacheEntityIds }),
    polls: hashedDictionary<string>(db, 'history_polls', (t) => JSON.parse(t) as string),
    shapes: hashedDictionary<Shape>(db, 'history_shapes', (t) => JSON.parse(t) as Shape, { cacheByDigest: true }),
  };
}

/**
 * The shape id of a marker row: the entity, returned by the poll's previous save, was missing from this one. A row
 * left out because nothing changed is told apart from an entity that vanished by these, so a backtest replays absence
 * as it was live. Never a real shape (ids start at 1).
 */
const VANISHED = 0;
const EMPTY = Buffer.alloc(0);
/** Whether a newest reading is a bucket (a stored row has packed values instead of fields). */
const isBucket = (n: RawRow | Bucket): n is Bucket => 'fields' in n;
/** Bytes as a Buffer to bind (a view, no copy): a chunk's row values are views of its body. */
const asBuffer = (b: Uint8Array): Buffer => (Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength));

/** Builds the readings repository over an open, migrated database; statements are prepared once here. */
export function createReadingsRepo(db: Database.Database): ReadingsRepo & { forget(): void } {
  const { entities, polls, shapes } = historyDictionaries(db, { cacheEntityIds: false });
  // Entity ids by kind, then name: no key text built per reading to find one (the dictionary caches none itself).
  const entityIds = pairIds(entities, entityKey, (kind, entity) => JSON.stringify({ kind, entity }));
  const w = new Writer();

  const own = ownerUpsert(db);
  const insertHistory = db.prepare(
    `INSERT OR IGNORE INTO reading_history (seen_at, entity, at, poll, shape, vals) VALUES (?, ?, ?, ?, ?, ?)`,
  );
  const ownerOf = db.prepare<[number], { poll: number }>(`SELECT poll FROM latest_entities WHERE entity = ?`);
  // The entities a poll returned last, named as history names them: SQLite reads the kind and name out of the entity
  // dictionary's JSON, so a poll's check for vanished entities (every entity of the poll, every poll) decodes and
  // caches nothing in this process (the dictionary's cache would keep an object per entity: ~7 MB at SPEC §8).
  const owned = `SELECT l.entity AS id, json_extract(e.value, '$.kind') AS kind, json_extract(e.value, '$.entity') AS entity
    FROM latest_entities l JOIN history_entities e ON e.id = l.entity`;
  type Owned = EntityKey & { id: number };
  const ownedOfKind = db.prepare<[string], Owned>(`${owned} WHERE json_extract(e.value, '$.kind') = ? ORDER BY 3`);
  const ownedByPoll = db.prepare<[number], Owned>(`${owned} WHERE l.poll = ? ORDER BY 2, 3`);
  // A poll's entities by their ids alone (its index covers it): the save holds the ids of those it returned.
  const pollOwnedAfter = db.prepare<[number, number, number], number>(`SELECT entity FROM latest_entities WHERE poll = ? AND entity > ? ORDER BY entity LIMIT ?`).pluck();
  // A vanished entity's kind and name, read as `owned` reads them (not through the dictionary's cache).
  const entityKeyOf = db.prepare<[number], EntityKey>(
    `SELECT json_extract(value, '$.kind') AS kind, json_extract(value, '$.entity') AS entity FROM history_entities WHERE id = ?`,
  );
  const countOwned = db.prepare<[], { kind: ReadingKind; n: number }>(
    `SELECT json_extract(e.value, '$.kind') AS kind, count(*) AS n FROM latest_entities l JOIN history_entities e ON e.id = l.entity GROUP BY 1`,
  );
  const deleteOwner = db.prepare<[number]>(`DELETE FROM latest_entities WHERE entity = ?`);
  const keptGet = db.prepare<[number], RawRow>(`SELECT seen_at, entity, at, poll, shape, vals FROM latest_kept WHERE entity = ?`);
  const deleteKept = db.prepare<[number]>(`DELETE FROM latest_kept WHERE entity = ?`);

  const raw = createRawStore(db);
  /**
   * The storage time of a save: its `now`, or 1 ms after the newest storage time written before when that is not
   * earlier (two saves in one millisecond, a clock stepped back). So a save's rows come after every row stored before
   * it in storage order, which is how the engine's look-back memo learns of them (src/store/history-changes.ts).
   */
  let lastSeen: number | undefined;
  const storageTime = (now: number): number => {
    lastSeen ??= raw.newest() ?? -Infinity;
    lastSeen = now > lastSeen ? now : lastSeen + 1;
    return lastSeen;
  };
  // Before buckets go: the entities a poll still returns that will have no raw row and no bucket left (staged
  // buckets from the cutoff on stay, chunks from its hour on). Most entities have raw rows: one index probe each.
  const lastInBuckets = db.prepare<{ cut: number; hour: number }, { entity: number }>(
    `SELECT l.entity FROM latest_entities l
     WHERE NOT EXISTS (SELECT 1 FROM reading_history h WHERE h.entity = l.entity AND h.shape != ${VANISHED})
       AND NOT EXISTS (SELECT 1 FROM reading_history_chunks c WHERE c.entity = l.entity AND c.n > 0)
       AND NOT EXISTS (SELECT 1 FROM reading_buckets b WHERE b.entity = l.entity AND b.start >= @cut)
       AND NOT EXISTS (SELECT 1 FROM reading_bucket_chunks c WHERE c.entity = l.entity AND c.start >= @hour)`,
  );
  const keepRow = db.prepare<[number, number, number, number, number, Buffer]>(
    `INSERT OR REPLACE INTO latest_kept (entity, seen_at, at, poll, shape, vals) VALUES (?, ?, ?, ?, ?, ?)`,
  );
  // A kept reading raw history has a newer one of again, or whose entity no poll returns any more: not needed (one
  // older than a bucket may stay: latestOf takes the newer).
  const dropStaleKept = db.prepare(
    `DELETE FROM latest_kept WHERE entity NOT IN (SELECT entity FROM latest_entities)
       OR EXISTS (SELECT 1 FROM reading_history n WHERE n.entity = latest_kept.entity AND n.shape != ${VANISHED}
                    AND (n.at > latest_kept.at OR (n.at = latest_kept.at AND n.seen_at > latest_kept.seen_at)))
       OR EXISTS (SELECT 1 FROM reading_history_chunks c WHERE c.entity = latest_kept.entity AND c.hi_at > latest_kept.at)`,
  );
  // Kept readings a chunk may hold a later revision of (a reading of the same time stored after): its columns cannot
  // say whether its reading of that time is the later one, so the entity's newest reading (raw.newestOf) decides.
  const keptTiedInChunks = db.prepare<[], { entity: number; at: number; seen_at: number }>(
    `SELECT k.entity, k.at, k.seen_at FROM latest_kept k
     WHERE EXISTS (SELECT 1 FROM reading_history_chunks c WHERE c.entity = k.entity AND c.hi_at = k.at AND c.last > k.seen_at)`,
  );
  // The newest shape is never deleted, so SQLite never gives a deleted shape's id to a new one (a save's signature of
  // the poll before holds shape ids).
  const pruneShapesStmt = db.prepare(
    `DELETE FROM history_shapes WHERE id NOT IN (SELECT shape FROM reading_history) AND id NOT IN (SELECT shape FROM reading_buckets)
       AND id NOT IN (SELECT shape FROM reading_bucket_chunks)
       AND id NOT IN (SELECT s.value FROM reading_history_chunks c, json_each(c.shapes) s)
       AND id NOT IN (SELECT shape FROM latest_kept) AND id < (SELECT max(id) FROM history_shapes)`,
  );

  const shapeOf = (id: number): Shape => {
    const s = shapes.valueOf(id);
    if (!s) throw new StoreError('E_STORE_INVALID', `history row points to unknown shape ${id}`);
    return s;
  };
  const entityOf = (id: number): EntityKey => {
    const e = entities.valueOf(id);
    if (!e) throw new StoreError('E_STORE_INVALID', `history row points to unknown entity ${id}`);
    return e;
  };

  /**
   * A stored row as a reading: its shape's labels and fixed fields, its packed values. With `picked`, only the fields
   * of its pick: its plans by shape id (one map per read: a replay meets a shape per market, again and again).
   */
  function rawReading(row: RawRow, e: EntityKey = entityOf(row.entity), picked?: Picked): HistoryReading {
    let shape: Shape;
    let fields: Record<string, unknown>;
    if (picked) {
      const p = planned(picked, row.shape);
      shape = p.shape;
      fields = unpackPlanned(p.plan, entryReader(row), row.at, false);
    } else {
      shape = shapeOf(row.shape);
      fields = unpackFields(shape, entryReader(row), row.at);
    }
    const poll = polls.valueOf(row.poll) ?? '';
    // Two literals, not a spread of the unreadable part: the usual reading is made without a copy of an object.
    const r: HistoryReading = shape.unreadable
      ? { kind: e.kind, entity: e.entity, at: row.at, labels: shape.labels, fields, unreadable: shape.unreadable, poll, seen_at: row.seen_at }
      : { kind: e.kind, entity: e.entity, at: row.at, labels: shape.labels, fields, poll, seen_at: row.seen_at };
    if (picked?.keep) r.stored = row;
    return r;
  }
  /** A shape's plan for a pick (kept by shape id per read: a replay meets a shape per market, again and again). */
  function planned(picked: Picked, id: number): { shape: Shape; plan: PickPlan } {
    let p = picked.plans.get(id);
    if (!p) {
      const s = shapeOf(id);
      picked.plans.set(id, (p = { shape: s, plan: pickPlanOf(s, picked.pick) }));
    }
    return p;
  }
  /** Plans of `describe` picks, per pick (see {@link ReadingsRepo.described}). */
  const describing = new WeakMap<FieldPick, Picked>();
  /** A bucket as a reading of its last values, with its extremes. */
  function bucketReading(b: Bucket, e: EntityKey): HistoryReading {
    const shape = shapeOf(b.shape);
    return {
      kind: e.kind,
      entity: e.entity,
      at: b.at,
      labels: shape.labels,
      fields: b.fields,
      ...(shape.unreadable ? { unreadable: shape.unreadable } : {}),
      bucket: { start: b.start, n: b.n, min: b.min, max: b.max },
      poll: polls.valueOf(b.poll) ?? '',
      seen_at: b.seenAt,
    };
  }
  const buckets = createBucketStore(db, shapeOf);
  /** Whether row `a` is newer than `b`: by time, then storage time. */
  const newer = (a: { at: number; seen_at: number }, b: { at: number; seen_at: number } | undefined) => !b || a.at > b.at || (a.at === b.at && a.seen_at > b.seen_at);
  /** A bucket's last reading as a stored row (its values packed as writeBucketValues packs them: the extremes follow, unread). */
  const bucketRow = (entity: number, b: Bucket): RawRow => {
    writeBucketValues(w, shapeOf(b.shape), b);
    return { seen_at: b.seenAt, entity, at: b.at, poll: b.poll, shape: b.shape, vals: w.take() };
  };
  /**
   * The newest stored reading of entity `id` (raw, bucketed or kept): its stored row, or the bucket it is the last
   * reading of (read already: not packed again); undefined when there is none.
   */
  const newest = (id: number): RawRow | Bucket | undefined => {
    const t = Number.MAX_SAFE_INTEGER;
    const row = raw.newestOf(id);
    const bucket = buckets.atOrBefore(id, t, t, row ? bucketStart(row.at) : undefined);
    const best = bucket && newer({ at: bucket.at, seen_at: bucket.seenAt }, row) ? { at: bucket.at, seen_at: bucket.seenAt } : row;
    const kept = keptGet.get(id);
    if (kept && newer(kept, best)) return kept;
    return best === row ? row : bucket;
  };
  /** {@link newest} as a row (a bucket packed as one). */
  const newestRow = (id: number): RawRow | undefined => {
    const n = newest(id);
    return n === undefined || !isBucket(n) ? n : bucketRow(id, n);
  };
  /**
   * The latest reading of entity `id` (see {@link ReadingsRepo}), undefined when no poll returns it; its labels and
   * unreadable map are copies (the shape's stay cached). A bucket's last reading is its fields as read (without its
   * extremes), a row's values are decoded once.
   */
  const latestOf = (id: number): Reading | undefined => {
    if (!ownerOf.get(id)) return undefined;
    const n = newest(id);
    if (!n) return undefined;
    const e = entityOf(id);
    const shape = shapeOf(n.shape);
    return {
      kind: e.kind,
      entity: e.entity,
      at: n.at,
      labels: { ...shape.labels },
      fields: isBucket(n) ? n.fields : unpackFields(shape, entryReader(n), n.at),
      ...(shape.unreadable ? { unreadable: { ...shape.unreadable } } : {}),
    };
  };
  /** The entities a poll returned last (with their history ids), ordered by kind then entity. */
  const ownedBy = (poll: string): Owned[] => {
    const pollId = polls.find(poll);
    return pollId === undefined ? [] : ownedByPoll.all(pollId);
  };
  const keyOnly = ({ kind, entity }: Owned): EntityKey => ({ kind, entity });

  /** Where the last memo's values sit in it (see writeMemoValues): the stored row takes their bytes from there. */
  const memoSpans: number[] = [];
  /**
   * What a save remembers of a reading: the values that say whether a snapshot changed — the shape and every packed
   * value but the moving ones, absolute — then the reading's time, its last {@link TIME_BYTES} characters. Strings that
   * are not numbers, objects and the key order are the shape's (its id is here), so they are not written again: a
   * position's memo is ~40 bytes where its ids and names made it ~150. One string, not an object holding the time
   * and the values (56 bytes more an entity).
   */
  function memoOf(fields: Record<string, unknown>, at: number, shape: number, layout: PackedLayout): string {
    w.varint(shape);
    writeMemoValues(w, fields, layout, MOVING, memoSpans);
    w.f64(at);
    return w.takeKey();
  }

  /**
   * The shape id of a reading, found by its cheap key (src/store/shape-key.ts); the shape's text is built only for a
   * key not cached (a new shape, or after a restart), or for labels that are not all strings.
   */
  const keyOfShape = shapeKeyer();
  function shapeIdOf(labels: Record<string, string>, fields: Record<string, unknown>, unreadable: Record<string, string> | undefined): number {
    const key = keyOfShape(labels, fields, unreadable);
    // The usual reading: its shape's id cached under its key, found without a function made for the miss.
    const cached = key === undefined ? undefined : shapes.cachedId(key);
    if (cached !== undefined) return cached;
    const text = () => shapeText(labels, fields, unreadable);
    if (key === undefined) {
      const t = text();
      return shapes.idOf(t, () => t);
    }
    return shapes.idOfCached(key, text, (t) => t);
  }

  /**
   * What each poll's last save returned, per entity (by its history id: a small integer, where the entity's key text
   * cost ~130 bytes an entry, 7 MB at SPEC §8 scale): its memo, {@link memoOf} (unknown after a start or a rollback:
   * everything is stored then, so a restart costs one row per entity). Entity ids are never reused: `history_entities`
   * rows are never deleted.
   */
  const lastBatch = new Map<string, Map<number, string>>();
  /** When each poll last saved (a count of saves), to tell whether another poll returned an entity since. */
  const savedAt = new Map<string, number>();
  /** The kinds of reading each poll's last save held: another poll's batch is searched only for its own kinds. */
  const batchKinds = new Map<string, Set<string>>();
  let saves = 0;

  /** savePoll as steps: pauses every {@link HEAVY_ROWS_PER_STEP} readings (run inside a transaction the caller holds). */
  function* saveSteps(poll: string, readings: readonly Reading[], now: number): Steps<SavePollResult> {
    let inserted = 0;
    let n = 0;
    const pollId = polls.idOf(poll, () => JSON.stringify(poll));
    const seenAt = storageTime(now);
    const before = lastBatch.get(poll);
    const current = new Map<number, string>();
    // The polls that saved since this one last did: an entity one of them returned has another poll as its last.
    const since = savedAt.get(poll) ?? 0;
    const others = [...lastBatch].filter(([p]) => p !== poll && (savedAt.get(p) ?? 0) > since);
    // Those of them that held readings of the kind at hand (a markets poll's batch holds no position), found again
    // only when the kind changes from one reading to the next.
    let othersKind: string | undefined;
    let othersOfKind: Array<Map<number, string>> = [];
    const kinds = new Set<string>();
    // By index: a generator's for...of makes an iterator result per reading.
    for (let k = 0; k < readings.length; k++) {
      const r = readings[k]!;
      if (++n % HEAVY_ROWS_PER_STEP === 0) yield;
      if (!Number.isFinite(r.at)) {
        throw new StoreError('E_STORE_INVALID', `poll ${poll}: reading ${r.kind}/${r.entity} has a non-finite time (${r.at})`);
      }
      const entityId = entityIds.idOf(r.kind, r.entity);
      const labels = r.labels ?? {};
      const fields = r.fields ?? {};
      const shapeId = shapeIdOf(labels, fields, r.unreadable);
      // Which fields are packed, as the shape key found them: the memo and the packed values are written by it.
      const layout = keyOfShape.last;
      const last = before?.get(entityId);
      // A snapshot may move on in time with the same values; any other reading must also keep its time.
      const memo = memoOf(fields, r.at, shapeId, layout);
      const unchanged = last !== undefined && sameValues(last, memo) && (SNAPSHOT_KINDS.has(r.kind) ? r.at >= timeOf(last) : r.at === timeOf(last));
      const seen = current.get(entityId);
      // Which poll returned the entity last is written only when it changes: an entity this poll did not return last
      // time (new, back, or unknown after a start), or one another poll returned since.
      if (r.kind !== othersKind) {
        othersKind = r.kind;
        othersOfKind = others.filter(([p]) => batchKinds.get(p)?.has(r.kind) === true).map(([, batch]) => batch);
        kinds.add(r.kind);
      }
      if (seen === undefined && (last === undefined || othersOfKind.some((batch) => batch.has(entityId)))) own.run(entityId, pollId);
      if (seen === undefined || r.at >= timeOf(seen)) current.set(entityId, memo);
      // Packed only when stored (most readings of a positions poll are as the poll last returned them), and from the
      // memo's bytes where they are the row's.
      if (!unchanged && insertHistory.run(seenAt, entityId, r.at, pollId, shapeId, packValuesFrom(w, fields, r.at, layout, memo, memoSpans)).changes > 0) inserted++;
    }
    // The ids in one array (a copy without an iterator result per id), then by index.
    const ids = before ? [...before.keys()] : [];
    for (let k = 0; k < ids.length; k++) {
      const id = ids[k]!;
      if (++n % ROWS_PER_STEP === 0) yield;
      if (!current.has(id)) insertHistory.run(seenAt, id, now, pollId, VANISHED, EMPTY);
    }
    lastBatch.set(poll, current);
    batchKinds.set(poll, kinds);
    savedAt.set(poll, ++saves);
    return { inserted, latest: current.size };
  }
  const save = db.transaction((poll: string, readings: readonly Reading[], now: number): SavePollResult => runSync(saveSteps(poll, readings, now)));

  /** Drops an entity's latest reading and its owner: whether it had one. */
  const forgetLatest = (id: number): boolean => {
    deleteKept.run(id);
    return deleteOwner.run(id).changes > 0;
  };

  let changes: HistoryChanges | undefined;
  const forget = () => {
    changes?.forget();
    lastBatch.clear();
    savedAt.clear();
    batchKinds.clear();
    entityIds.forget();
    polls.forget();
    shapes.forget();
  };

  const kindFilter = (kinds: readonly ReadingKind[] | undefined) => {
    const set = kinds ? new Set<string>(kinds) : undefined;
    return (e: EntityKey) => !set || set.has(e.kind);
  };

  const downsampleBatch = db.transaction((before: number, limit: number): Omit<DownsampleResult, 'sealed'> => {
    const folded = new Map<string, { entity: number; b: Bucket }>();
    const rows = raw.take(before, limit, (rows) => {
      for (const row of rows) {
        if (row.shape === VANISHED) continue;
        const fields = unpackFields(shapeOf(row.shape), entryReader(row), row.at);
        const b = bucketOf({ at: row.at, seenAt: row.seen_at, poll: row.poll, shape: row.shape, fields });
        const k = `${row.entity}:${b.start}`;
        const acc = folded.get(k);
        folded.set(k, { entity: row.entity, b: acc ? mergeBuckets(acc.b, b) : b });
      }
    });
    for (const { entity, b } of folded.values()) buckets.fold(entity, b);
    return { rows, buckets: folded.size };
  });

  /** Before rows go: of the entities a poll still returns, those whose newest reading is one of them keep it in `latest_kept`. */
  const keepNewest = (rows: readonly RawRow[]) => {
    const going = new Set(rows.filter((r) => r.shape !== VANISHED).map((r) => `${r.entity}:${r.at}:${r.seen_at}`));
    const done = new Set<number>();
    for (const r of rows) {
      if (r.shape === VANISHED || done.has(r.entity)) continue;
      done.add(r.entity);
      if (!ownerOf.get(r.entity)) continue;
      const newest = newestRow(r.entity);
      if (newest && going.has(`${r.entity}:${newest.at}:${newest.seen_at}`)) {
        keepRow.run(r.entity, newest.seen_at, newest.at, newest.poll, newest.shape, asBuffer(newest.vals));
      }
    }
  };
  const pruneRawBatch = db.transaction((olderThan: number, limit: number) => raw.take(olderThan, limit, keepNewest));
  const sealRawBatch = db.transaction((before: number, limit: number) => raw.seal(before, limit));

  const sealBatch = db.transaction((before: number, limit: number) => buckets.seal(before, limit));

  function inTx<T>(fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      forget();
      throw err;
    }
  }

  function entityId(kind: ReadingKind, entity: string): number | undefined {
    return entityIds.find(kind, entity);
  }

  return {
    forget,
    savePoll: (poll, readings, now) => inTx(() => save(poll, readings, now)),
    // Its caller's transaction forgets the caches when it rolls back (Store.transaction and transactionYielding do).
    savePollSteps: saveSteps,
    latest: (kind, entity) => {
      const id = entityId(kind, entity);
      return id === undefined ? undefined : latestOf(id);
    },
    latestAll: (kind) => ownedOfKind.all(kind).flatMap((o) => latestOf(o.id) ?? []),
    latestForPoll: (poll) => ownedBy(poll).flatMap((o) => latestOf(o.id) ?? []),
    entitiesForPoll: (poll) => ownedBy(poll).map(keyOnly),
    *forgetVanishedSteps(poll, spare, pageSize = 5_000) {
      const pollId = polls.find(poll);
      const saved = lastBatch.get(poll);
      if (pollId === undefined) return 0;
      if (saved === undefined) throw new StoreError('E_STORE_INVALID', `poll ${poll}: vanished entities asked for before a save`);
      const size = Math.max(1, pageSize);
      let forgotten = 0;
      for (let after = -1; ; ) {
        // A page is read before any of it is deleted.
        const page = pollOwnedAfter.all(pollId, after, size);
        for (const id of page) {
          if (saved.has(id) || spare(entityKeyOf.get(id)!)) continue;
          if (forgetLatest(id)) forgotten++;
        }
        if (page.length < size) return forgotten;
        after = page[page.length - 1]!;
        yield;
      }
    },
    removeLatest: (kind, entity) => {
      const id = entityId(kind, entity);
      return id !== undefined && forgetLatest(id);
    },
    historyAt: (kind, entity, t, asOf = Number.MAX_SAFE_INTEGER) => {
      const id = entityId(kind, entity);
      if (id === undefined) return undefined;
      const e = { kind, entity };
      const row = raw.at(id, t, asOf);
      // A bucket that starts before the raw row's own holds only earlier readings.
      const bucket = buckets.atOrBefore(id, t, asOf, row ? bucketStart(row.at) : undefined);
      if (row && (!bucket || row.at > bucket.at || (row.at === bucket.at && row.seen_at >= bucket.seenAt))) return plain(rawReading(row, e));
      return bucket ? plain(bucketReading(bucket, e)) : undefined;
    },
    historyRange: (kind, entity, from, to, asOf = Number.MAX_SAFE_INTEGER) => {
      const id = entityId(kind, entity);
      if (id === undefined) return [];
      const e = { kind, entity };
      const all = [
        ...buckets
          .partsOf(id, bucketStart(from), to)
          .filter((b) => b.at >= from && b.at <= to && b.seenAt <= asOf)
          .map((b) => bucketReading(b, e)),
        ...raw.range(id, from, to, asOf).map((row) => rawReading(row, e)),
      ].sort((a, b) => a.at - b.at || a.seen_at - b.seen_at);
      // One per time: its last revision.
      const out: Reading[] = [];
      for (let i = 0; i < all.length; i++) if (i === all.length - 1 || all[i + 1]!.at !== all[i]!.at) out.push(plain(all[i]!));
      return out;
    },
    iterateHistory: (from, to, opts = {}) => {
      const limit = Math.max(1, opts.pageSize ?? 2000);
      const keep = kindFilter(opts.kinds);
      const rows = raw.iterate(from, to, limit);
      const vanished = opts.vanished === true;
      const picked: Picked | undefined = opts.fields ? { pick: opts.fields, plans: new Map(), keep: opts.describe !== undefined } : undefined;
      return (function* () {
        for (const page of rows) {
          for (const row of page) {
            const e = entityOf(row.entity);
            if (!keep(e)) continue;
            if (row.shape !== VANISHED) yield rawReading(row, e, picked);
            else if (vanished) yield { kind: e.kind, entity: e.entity, at: row.at, labels: {}, fields: {}, poll: polls.valueOf(row.poll) ?? '', seen_at: row.seen_at, vanished: true };
          }
        }
      })();
    },
    described: <R extends Reading>(reading: R, describe: FieldPick): R => {
      const r = reading as R & Pick<HistoryReading, 'stored'>;
      const row = r.stored;
      if (row === undefined) return reading;
      let picked = describing.get(describe);
      if (!picked) describing.set(describe, (picked = { pick: describe, plans: new Map(), keep: false }));
      // In place: a reading carried on to later polls (or judged by several rules) is decoded once. Its member is
      // emptied, not deleted: deleting would turn the reading into a slower kind of object.
      r.fields = unpackPlanned(planned(picked, row.shape).plan, entryReader(row), row.at, false);
      r.stored = undefined;
      return reading;
    },
    iterateBuckets: (from, to, opts = {}) => {
      const limit = Math.max(1, opts.pageSize ?? 2000);
      const keep = kindFilter(opts.kinds);
      return (function* () {
        for (const { entity, b } of buckets.iterate(from, to, (id) => keep(entityOf(id)), limit, opts.fields)) yield bucketReading(b, entityOf(entity));
      })();
    },
    entityId,
    historyChanges: () => (changes ??= createHistoryChanges(db, { raw, bucketNextAt: buckets.nextAt, entityId })),
    rawSince: raw.oldest,
    downsample: (before, opts = {}) => {
      const batch = Math.max(1, opts.batchSize ?? 5000);
      const max = opts.maxRows ?? Infinity;
      const total: DownsampleResult = { rows: 0, buckets: 0, sealed: 0 };
      while (total.rows < max) {
        const done = inTx(() => downsampleBatch(before, Math.min(batch, max - total.rows)));
        total.rows += done.rows;
        total.buckets += done.buckets;
        if (done.rows === 0) break;
      }
      // Hours over by SEAL_SLACK_MS, before `before` and before the oldest row not folded yet (maxRows may have left
      // some): the rows stored before either, whose time is in those hours, are all folded.
      const sealBefore = chunkStart(Math.min(before, raw.oldest() ?? before) - SEAL_SLACK_MS);
      while (total.sealed < max) {
        const n = inTx(() => sealBatch(sealBefore, Math.min(batch, max - total.sealed)));
        total.sealed += n;
        if (n === 0) break;
      }
      return total;
    },
    sealHistory: (now, opts = {}) => {
      const batch = Math.max(1, opts.batchSize ?? 5000);
      const max = opts.maxRows ?? Infinity;
      const before = chunkStart(now - SEAL_SLACK_MS);
      let total = 0;
      while (total < max) {
        const n = inTx(() => sealRawBatch(before, Math.min(batch, max - total)));
        total += n;
        if (n === 0) break;
      }
      return total;
    },
    prune: (olderThan, opts = {}) => {
      const batch = Math.max(1, opts.batchSize ?? 5000);
      const max = opts.maxRows ?? Infinity;
      let total = 0;
      const steps = [
        (want: number) => inTx(() => pruneRawBatch(olderThan, want)),
        (want: number) => buckets.prune(olderThan, want),
      ];
      for (const [i, step] of steps.entries()) {
        // Once, before the first bucket goes: an entity whose newest reading is in what goes keeps it.
        if (i === 1 && total < max) {
          for (const { entity } of lastInBuckets.all({ cut: olderThan, hour: chunkStart(olderThan) })) {
            const row = newestRow(entity);
            const kept = keptGet.get(entity);
            if (row && !(kept && kept.at === row.at && kept.seen_at === row.seen_at)) keepRow.run(entity, row.seen_at, row.at, row.poll, row.shape, asBuffer(row.vals));
          }
        }
        while (total < max) {
          const want = Math.min(batch, max - total);
          const n = step(want);
          total += n;
          if (n < want) break;
        }
      }
      dropStaleKept.run();
      for (const k of keptTiedInChunks.all()) {
        const n = raw.newestOf(k.entity);
        if (n && (n.at > k.at || (n.at === k.at && n.seen_at > k.seen_at))) deleteKept.run(k.entity);
      }
      return total;
    },
    pruneShapes: () =>
      inTx(() => {
        const n = pruneShapesStmt.run().changes;
        // The shape cache may still map a deleted shape's digest to its id (and SQLite may give the id to the next new
        // shape). Only that cache: the per-poll signatures stay (every entity stored again otherwise).
        if (n > 0) shapes.forget();
        return n;
      }),
    counts: () => {
      const latest: Partial<Record<ReadingKind, number>> = {};
      for (const { kind, n } of countOwned.all()) latest[kind] = n;
      const b = buckets.counts();
      const olds = [raw.oldest(), b.oldest].filter((x): x is number => x !== null);
      return { latest, history: raw.count(), buckets: b.n, oldestAt: olds.length ? Math.min(...olds) : null, newestAt: raw.newest() };
    },
  };
}

/** A pick of fields and its plans by shape id, for one read; `keep`: the readings keep their stored row. */
interface Picked {
  pick: FieldPick;
  plans: Map<number, { shape: Shape; plan: PickPlan }>;
  keep: boolean;
}

/** A history reading without its storage bookkeeping (poll, seen_at): what a rule's view of the past returns. */
function plain(r: HistoryReading): Reading {
  const { poll: _poll, seen_at: _seen, ...reading } = r;
  return reading;
}

/** Stored history as a rule kind reads it (the engine's, a page's or a report's view of the past). */
export function historyView(readings: Pick<ReadingsRepo, 'historyAt' | 'historyRange'>): HistoryView {
  return {
    at: (kind, entity, t) => readings.historyAt(kind, entity, t),
    range: (kind, entity, from, to) => readings.historyRange(kind, entity, from, to),
  };
}

/** One full-resolution history row as an older schema stored it, for the migration that converts them. */
export interface ImportRow {
  kind: ReadingKind;
  entity: string;
  at: number;
  seen_at: number;
  poll: string;
  labels: Record<string, string>;
  /** The fields as stored in JSON, the unreadable map under its NUL-prefixed key when there was one. */
  fields: Record<string, unknown>;
}

/** Records that a poll (its history id) returned an entity (its history id) last: (entity, poll). */
function ownerUpsert(db: Database.Database): Database.Statement<[number, number]> {
  return db.prepare(
    `INSERT INTO latest_entities (entity, poll) VALUES (?, ?) ON CONFLICT (entity) DO UPDATE SET poll = excluded.poll WHERE poll != excluded.poll`,
  );
}

/** The upsert of an entity's latest reading as schema 9 stored it: (kind, entity, at, shape, vals, poll, updated_at). */
function latestUpsert(db: Database.Database): Database.Statement<[ReadingKind, string, number, number, Buffer, string, number]> {
  return db.prepare(
    `INSERT INTO latest_readings (kind, entity, at, shape, vals, poll, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (kind, entity) DO UPDATE SET at = excluded.at, shape = excluded.shape, vals = excluded.vals,
       poll = excluded.poll, updated_at = excluded.updated_at`,
  );
}

/** Splits an older schema's fields JSON object into the fields and the unreadable map it carried under its NUL key. */
function splitUnreadable(stored: Record<string, unknown>): { fields: Record<string, unknown>; unreadable: Record<string, string> | undefined } {
  const fields = { ...stored };
  const unreadable = fields[UNREADABLE] as Record<string, string> | undefined;
  delete fields[UNREADABLE];
  return { fields, unreadable };
}

/** One latest row as schema 8 stored it (a history row's columns, with when it was written instead of seen_at), for the migration that packs them. */
export type LatestImportRow = Omit<ImportRow, 'seen_at'> & { updated_at: number };

/** Writes latest rows of schema 8 packed into today's `latest_readings` (migration 9); call inside its transaction. */
export function createLatestImporter(db: Database.Database): (row: LatestImportRow) => void {
  const { shapes } = historyDictionaries(db);
  const upsert = latestUpsert(db);
  const w = new Writer();
  return (row) => {
    const { fields, unreadable } = splitUnreadable(row.fields);
    const packed = packReading(w, row.labels, fields, unreadable, row.at);
    upsert.run(row.kind, row.entity, row.at, shapes.idOf(packed.shape, () => packed.shape), packed.vals, row.poll, row.updated_at);
  };
}

/** Writes rows of an older schema into today's history tables (migration 8); call inside its transaction. */
export function createHistoryImporter(db: Database.Database): (row: ImportRow) => void {
  const { entities, polls, shapes } = historyDictionaries(db);
  const insert = db.prepare(`INSERT OR IGNORE INTO reading_history (seen_at, entity, at, poll, shape, vals) VALUES (?, ?, ?, ?, ?, ?)`);
  const w = new Writer();
  return (row) => {
    const { fields, unreadable } = splitUnreadable(row.fields);
    const packed = packReading(w, row.labels, fields, unreadable, row.at);
    insert.run(
      row.seen_at,
      entities.idOf(entityKey(row.kind, row.entity), () => JSON.stringify({ kind: row.kind, entity: row.entity })),
      row.at,
      polls.idOf(row.poll, () => JSON.stringify(row.poll)),
      shapes.idOf(packed.shape, () => packed.shape),
      packed.vals,
    );
  };
}

/** One latest row as schema 9 stored it (packed), for the migration that keeps only its poll. */
export interface LatestKeepRow {
  kind: ReadingKind;
  entity: string;
  at: number;
  shape: number;
  vals: Buffer;
  poll: string;
  updated_at: number;
}

/**
 * Converts schema 9's latest rows (migration 10; call inside its transaction): the entity's poll goes to
 * `latest_entities`, and the reading itself to `latest_kept` when history holds nothing of the entity (pruned), so
 * the latest reading stays answerable. `updated_at` stands for its storage time.
 */
export function createLatestKeeper(db: Database.Database): (row: LatestKeepRow) => void {
  const { entities, polls } = historyDictionaries(db);
  const own = ownerUpsert(db);
  const inHistory = db.prepare<[number, number]>(
    `SELECT 1 FROM reading_history WHERE entity = ? AND shape != ${VANISHED} UNION ALL SELECT 1 FROM reading_buckets WHERE entity = ? LIMIT 1`,
  );
  const keep = db.prepare(`INSERT OR REPLACE INTO latest_kept (entity, seen_at, at, poll, shape, vals) VALUES (?, ?, ?, ?, ?, ?)`);
  return (row) => {
    const entity = entities.idOf(entityKey(row.kind, row.entity), () => JSON.stringify({ kind: row.kind, entity: row.entity }));
    const poll = polls.idOf(row.poll, () => JSON.stringify(row.poll));
    own.run(entity, poll);
    if (inHistory.get(entity, entity) === undefined) keep.run(entity, row.updated_at, row.at, poll, row.shape, row.vals);
  };
}
