/**
 * Where 5-minute buckets live: `reading_buckets`, one row per entity and bucket, for the buckets still being folded
 * into (the last hour or so), and `reading_bucket_chunks`, one immutable chunk per entity and hour (and poll and shape)
 * for the sealed ones (src/store/bucket-chunks.ts). A bucket can have parts in both, or in two chunks (rows stored
 * late are folded after its hour was sealed): every read here merges a bucket's parts (mergeBuckets) before it answers,
 * so callers see one bucket per entity and start, as when each was one row.
 */
import type Database from 'better-sqlite3';
import { chunkRuns, encodeChunks, nextBucket, openChunk, skipBucket, type OpenChunk } from './bucket-chunks.js';
import { chunkStart, CHUNK_MS } from './chunk-form.js';
import { BUCKET_MS, mergeBuckets, readBucketTail, writeBucketValues, type Bucket } from './buckets.js';
import { Reader, unpackFields, Writer, type FieldPick, type Shape } from './codec.js';

interface StagedRow {
  start: number;
  entity: number;
  at: number;
  seen_at: number;
  poll: number;
  shape: number;
  vals: Buffer;
}
interface ChunkRow {
  id: number;
  start: number;
  entity: number;
  poll: number;
  shape: number;
  data: Buffer;
}

const stagedCols = `start, entity, at, seen_at, poll, shape, vals`;
const chunkCols = `id, start, entity, poll, shape, data`;
const LOWEST = Number.MIN_SAFE_INTEGER;

/** Adds `b` to the buckets by start, merged with a part of the same start already there. */
function addPart(byStart: Map<number, Bucket>, b: Bucket): void {
  const acc = byStart.get(b.start);
  byStart.set(b.start, acc ? mergeBuckets(acc, b) : b);
}

/**
 * The time of each bucket with lo ≤ start ≤ hi among an entity's chunk parts and staged parts, by start: a merged
 * bucket's time is its latest part's (the larger `at`, then the larger `seen_at`).
 */
function partTimes(chunks: Iterable<OpenChunk>, staged: Iterable<{ start: number; at: number; seen_at: number }>, lo: number, hi: number) {
  const times = new Map<number, { at: number; seen: number }>();
  const put = (s: number, at: number, seen: number) => {
    if (s < lo || s > hi) return;
    const m = times.get(s);
    if (!m || at > m.at || (at === m.at && seen >= m.seen)) times.set(s, { at, seen });
  };
  for (const c of chunks) c.starts.forEach((s, i) => put(s, c.ats[i]!, c.seens[i]!));
  for (const row of staged) put(row.start, row.at, row.seen_at);
  return times;
}

/** The bucket tables of an open, migrated database; `shapeOf` gives a shape id's shape. */
export function createBucketStore(db: Database.Database, shapeOf: (id: number) => Shape) {
  const w = new Writer();
  const stagedGet = db.prepare<[number, number], StagedRow>(`SELECT ${stagedCols} FROM reading_buckets WHERE entity = ? AND start = ?`);
  const stagedPut = db.prepare(
    `INSERT OR REPLACE INTO reading_buckets (entity, start, at, seen_at, poll, shape, n, vals) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const stagedOf = db.prepare<[number, number, number], StagedRow>(
    `SELECT ${stagedCols} FROM reading_buckets WHERE entity = ? AND start BETWEEN ? AND ? ORDER BY start`,
  );
  // In the order they were sealed, as iterate() merges them too (of two parts alike in time, the later sealed is last).
  const chunksOf = db.prepare<[number, number, number], ChunkRow>(
    `SELECT ${chunkCols} FROM reading_bucket_chunks WHERE entity = ? AND start BETWEEN ? AND ? ORDER BY id`,
  );
  const earlier = db.prepare<[number, number, number, number], { c: number | null; s: number | null }>(
    `SELECT (SELECT max(start) FROM reading_bucket_chunks WHERE entity = ? AND start < ?) AS c,
            (SELECT max(start) FROM reading_buckets WHERE entity = ? AND start < ?) AS s`,
  );
  const firstFrom = db.prepare<[number, number], { t: number | null }>(
    `SELECT min(t) AS t FROM (SELECT min(start) AS t FROM reading_bucket_chunks WHERE start >= ? UNION ALL SELECT min(start) FROM reading_buckets WHERE start >= ?)`,
  );
  const hourChunks = db.prepare<[number, number], ChunkRow>(`SELECT ${chunkCols} FROM reading_bucket_chunks WHERE start BETWEEN ? AND ? ORDER BY entity, id`);
  const stagedAt = db.prepare<{ start: number; e: number; limit: number }, StagedRow>(
    `SELECT ${stagedCols} FROM reading_buckets WHERE start = @start AND entity > @e ORDER BY entity LIMIT @limit`,
  );
  const toSeal = db.prepare<{ before: number; e: number; limit: number }, StagedRow>(
    `SELECT ${stagedCols} FROM reading_buckets WHERE entity > @e AND start < @before ORDER BY entity, start LIMIT @limit`,
  );
  const stagedOldest = db.prepare<[], { t: number | null }>(`SELECT min(start) AS t FROM reading_buckets`);
  const stagedDelete = db.prepare<[number, number, number]>(`DELETE FROM reading_buckets WHERE entity = ? AND start BETWEEN ? AND ?`);
  const chunkPut = db.prepare<[number, number, number, number, number, Buffer]>(
    `INSERT INTO reading_bucket_chunks (start, entity, poll, shape, n, data) VALUES (?, ?, ?, ?, ?, ?)`,
  );
  const pruneStaged = db.prepare<[number, number]>(
    `DELETE FROM reading_buckets WHERE (entity, start) IN (SELECT entity, start FROM reading_buckets WHERE start < ? ORDER BY start LIMIT ?)`,
  );
  const pruneChunks = db.prepare<[number, number]>(
    `DELETE FROM reading_bucket_chunks WHERE id IN (SELECT id FROM reading_bucket_chunks WHERE start < ? ORDER BY start LIMIT ?)`,
  );
  const counts = db.prepare<[], { n: number }>(
    `SELECT (SELECT count(*) FROM reading_buckets) + (SELECT coalesce(sum(n), 0) FROM reading_bucket_chunks) AS n`,
  );
  const oldestOf = db.prepare<[], { a: number | null; b: number | null }>(
    `SELECT (SELECT min(start) FROM reading_buckets) AS a, (SELECT min(start) FROM reading_bucket_chunks) AS b`,
  );
  const later = db.prepare<[number, number, number, number], { t: number | null }>(
    `SELECT min(t) AS t FROM (SELECT min(start) AS t FROM reading_bucket_chunks WHERE entity = ? AND start > ?
     UNION ALL SELECT min(start) FROM reading_buckets WHERE entity = ? AND start > ?)`,
  );

  function stagedRead(row: StagedRow, pick?: FieldPick): Bucket {
    const shape = shapeOf(row.shape);
    const r = new Reader(row.vals);
    const fields = unpackFields(shape, r, row.at, pick);
    return { start: row.start, at: row.at, seenAt: row.seen_at, poll: row.poll, shape: row.shape, fields, ...readBucketTail(r, shape, fields, row.at, pick) };
  }
  const chunkOpen = (row: ChunkRow) => openChunk(row.data, row.start);
  const chunkNext = (row: ChunkRow, c: OpenChunk, pick?: FieldPick) => nextBucket(c, row.poll, row.shape, shapeOf(row.shape), pick);

  /** The entity's chunks and staged buckets that may hold starts in [lo, hi] (within one hour or across several). */
  function partsIn(entity: number, lo: number, hi: number) {
    return { chunks: chunksOf.all(entity, chunkStart(lo), hi).map((row) => ({ row, c: chunkOpen(row) })), staged: stagedOf.all(entity, lo, hi) };
  }
  /** Of those parts, the buckets whose start `want` takes, each with its parts merged (others are read past, not built). */
  function mergedOf(parts: ReturnType<typeof partsIn>, want: (start: number) => boolean): Map<number, Bucket> {
    const byStart = new Map<number, Bucket>();
    for (const { row, c } of parts.chunks) {
      for (const s of c.starts) {
        if (want(s)) addPart(byStart, chunkNext(row, c));
        else skipBucket(c, shapeOf(row.shape));
      }
    }
    for (const row of parts.staged) if (want(row.start)) addPart(byStart, stagedRead(row));
    return byStart;
  }

  /** The smallest `at` > t of a bucket of `entity` that starts after t − 5 minutes (merged parts), or undefined. Builds no values. */
  function nextAt(entity: number, t: number): number | undefined {
    // A merged bucket's time is its latest part's; within one hour, a later start means a later time.
    for (let lo: number | null = t - BUCKET_MS + 1; lo !== null; ) {
      const hi: number = chunkStart(lo) + CHUNK_MS - 1;
      const parts = partsIn(entity, lo, hi);
      let found: { start: number; at: number } | undefined;
      const times = partTimes(parts.chunks.map((p) => p.c), parts.staged, lo, hi);
      for (const [start, m] of times) if (m.at > t && (!found || start < found.start)) found = { start, at: m.at };
      if (found) return found.at;
      lo = later.get(entity, hi, entity, hi)?.t ?? null;
    }
    return undefined;
  }

  /** The entity's buckets with lo ≤ start ≤ hi, each with its parts merged, by start. */
  function partsOf(entity: number, lo: number, hi: number): Bucket[] {
    const byStart = mergedOf(partsIn(entity, lo, hi), (s) => s >= lo && s <= hi);
    return [...byStart.values()].sort((a, b) => a.start - b.start);
  }

  /**
   * The entity's newest bucket with lowest ≤ start ≤ t, at ≤ t and seenAt ≤ asOf, or undefined: an hour at a time,
   * back. Chosen by its parts' times (a merged bucket's are its latest part's); only that bucket's values are built.
   */
  function atOrBefore(entity: number, t: number, asOf: number, lowest = LOWEST): Bucket | undefined {
    for (let hi = t; hi >= lowest; ) {
      const hour = chunkStart(hi);
      const lo = Math.max(lowest, hour);
      const parts = partsIn(entity, lo, hi);
      const times = partTimes(parts.chunks.map((p) => p.c), parts.staged, lo, hi);
      let best: number | undefined;
      for (const [s, m] of times) if (m.at <= t && m.seen <= asOf && (best === undefined || s > best)) best = s;
      if (best !== undefined) return mergedOf(parts, (s) => s === best).get(best);
      const prev = earlier.get(entity, hour, entity, hour)!;
      if (prev.c === null && prev.s === null) return undefined;
      hi = Math.max(prev.c === null ? LOWEST : chunkStart(prev.c) + CHUNK_MS - 1, prev.s ?? LOWEST);
    }
    return undefined;
  }

  /**
   * Every bucket with from ≤ start ≤ to of the entities `keep` takes, by start then entity; an hour's chunks in memory
   * at a time. With `pick`, each bucket holds those fields (and their extremes) only.
   */
  function* iterate(from: number, to: number, keep: (entity: number) => boolean, pageSize: number, pick?: FieldPick): Generator<{ entity: number; b: Bucket }> {
    for (let hour = chunkStart(from); hour <= to; hour += CHUNK_MS) {
      const next = firstFrom.get(hour, hour)?.t;
      if (next === null || next === undefined) return;
      hour = chunkStart(next);
      if (hour > to) return;
      // The hour's chunks, opened (their values read a bucket at a time below), by entity then age: all held at once,
      // so read in one statement (paging them re-ran it for nothing).
      const open: Array<{ row: ChunkRow; c: OpenChunk }> = [];
      for (const row of hourChunks.all(hour, hour + CHUNK_MS - 1)) if (keep(row.entity)) open.push({ row, c: chunkOpen(row) });
      const first = Math.max(hour, Math.ceil(from / BUCKET_MS) * BUCKET_MS);
      for (let start = first; start < hour + CHUNK_MS && start <= to; start += BUCKET_MS) {
        // Chunk parts of this start, by entity (a chunk's buckets before `from` are read past).
        const parts: Array<{ entity: number; b: Bucket }> = [];
        for (const { row, c } of open) {
          while (c.next < c.starts.length && c.starts[c.next]! < start) skipBucket(c, shapeOf(row.shape));
          if (c.starts[c.next] === start) parts.push({ entity: row.entity, b: chunkNext(row, c, pick) });
        }
        let i = 0;
        let pending: { entity: number; b: Bucket } | undefined;
        /** Takes the next part (by entity): merged into the pending one of the same entity, or the pending one returned, done. */
        const take = (item: { entity: number; b: Bucket }): { entity: number; b: Bucket } | undefined => {
          if (pending && pending.entity === item.entity) {
            pending = { entity: item.entity, b: mergeBuckets(pending.b, item.b) };
            return undefined;
          }
          const done = pending;
          pending = item;
          return done;
        };
        // Merged with this start's staged parts, by entity, a page at a time.
        for (let page = stagedAt.all({ start, e: -1, limit: pageSize }); ; ) {
          for (const row of page) {
            if (!keep(row.entity)) continue;
            while (i < parts.length && parts[i]!.entity <= row.entity) {
              const done = take(parts[i++]!);
              if (done) yield done;
            }
            const done = take({ entity: row.entity, b: stagedRead(row, pick) });
            if (done) yield done;
          }
          if (page.length < pageSize) break;
          page = stagedAt.all({ start, e: page[page.length - 1]!.entity, limit: pageSize });
        }
        while (i < parts.length) {
          const done = take(parts[i++]!);
          if (done) yield done;
        }
        if (pending) yield pending;
      }
    }
  }

  /** Folds `b` into the entity's staged bucket of its start (or stages it); returns nothing. */
  function fold(entity: number, b: Bucket): void {
    const stored = stagedGet.get(entity, b.start);
    const m = stored ? mergeBuckets(stagedRead(stored), b) : b;
    writeBucketValues(w, shapeOf(m.shape), m);
    stagedPut.run(entity, m.start, m.at, m.seenAt, m.poll, m.shape, m.n, w.take());
  }

  let sealAfter = -1;
  /**
   * Seals up to about `limit` staged buckets that start before `before` (an hour's start) into chunks, an entity's
   * hour whole where the page allows; returns the buckets sealed (0: none left). Call inside a transaction.
   */
  function seal(before: number, limit: number): number {
    // Mostly nothing is due (an hour is sealed once it is over): a seek, not a walk of the open hour's buckets.
    const oldest = stagedOldest.get()?.t;
    if (oldest === null || oldest === undefined || oldest >= before) {
      sealAfter = -1;
      return 0;
    }
    let rows = toSeal.all({ before, e: sealAfter, limit });
    if (rows.length === 0 && sealAfter !== -1) {
      sealAfter = -1;
      rows = toSeal.all({ before, e: sealAfter, limit });
    }
    if (rows.length === 0) return 0;
    if (rows.length === limit) {
      // The page's last entity-hour may go on past it: left for the next page, unless it is all there is.
      const last = rows[rows.length - 1]!;
      let cut = rows.length;
      while (cut > 0 && rows[cut - 1]!.entity === last.entity && chunkStart(rows[cut - 1]!.start) === chunkStart(last.start)) cut--;
      if (cut > 0) rows = rows.slice(0, cut);
      sealAfter = rows[rows.length - 1]!.entity - 1;
    } else sealAfter = -1;
    for (let i = 0; i < rows.length; ) {
      const entity = rows[i]!.entity;
      const mine: StagedRow[] = [];
      for (; i < rows.length && rows[i]!.entity === entity; i++) mine.push(rows[i]!);
      // Per hour, the starts its chunks already have. Counted once: such a start is a second part of that bucket (rows
      // stored late).
      const hadIn = new Map<number, Set<number>>();
      for (const run of chunkRuns(mine)) {
        const head = run[0]!;
        const hour = chunkStart(head.start);
        let had = hadIn.get(hour);
        if (!had) hadIn.set(hour, (had = new Set(chunksOf.all(entity, hour, hour + CHUNK_MS - 1).flatMap((row) => chunkOpen(row).starts))));
        const packed = run.map((r) => ({ start: r.start, at: r.at, seenAt: r.seen_at, vals: r.vals }));
        let from = 0;
        for (const c of encodeChunks(packed)) {
          const fresh = run.slice(from, (from += c.count)).filter((r) => !had.has(r.start)).length;
          chunkPut.run(c.first, entity, head.poll, head.shape, fresh, c.data);
        }
        // A run is a stretch of the entity's staged buckets in start order: no other bucket lies between its ends.
        stagedDelete.run(entity, head.start, run[run.length - 1]!.start);
      }
    }
    return rows.length;
  }

  /** Deletes up to `limit` staged buckets, then chunks, that start before `olderThan` (chunks by whole hours); returns the rows deleted. */
  function prune(olderThan: number, limit: number): number {
    const staged = pruneStaged.run(olderThan, limit).changes;
    return staged + (staged < limit ? pruneChunks.run(chunkStart(olderThan), limit - staged).changes : 0);
  }

  return {
    partsOf,
    atOrBefore,
    /** The smallest `at` > t of a bucket of an entity that starts after t − 5 minutes (merged parts), or undefined. */
    nextAt,
    iterate,
    fold,
    seal,
    prune,
    /**
     * Buckets and the oldest start, null when there is none. A chunk counts the buckets no earlier chunk of its hour
     * has; a staged part of a bucket also sealed counts apart until it is sealed (within the downsample that folded it).
     */
    counts: () => {
      const c = counts.get()!;
      const o = oldestOf.get()!;
      const olds = [o.a, o.b].filter((x): x is number => x !== null);
      return { n: c.n, oldest: olds.length ? Math.min(...olds) : null };
    },
  };
}

export type BucketStore = ReturnType<typeof createBucketStore>;
