/**
 * Where full-resolution history lives: `reading_history`, one row per reading, for the head (the rows stored in the
 * current hour or so), and `reading_history_chunks`, one immutable chunk per entity and hour of storage time for the
 * hours that are over (src/store/raw-chunks.ts). {@link RawStore.seal} moves an hour's rows into chunks once it is
 * over. Every read here answers from both, as if every row were still one row of `reading_history`: callers see rows
 * (vanished markers included where they ask for storage order) and never chunks.
 */
import type Database from 'better-sqlite3';
import { chunkStart, CHUNK_MS } from './chunk-form.js';
import { ChunkEntry, encodeRawChunk, openRawChunk, rawChunkSpan, type OpenRawChunk, type RawEntry } from './raw-chunks.js';

/** One full-resolution history row. */
export interface RawRow extends RawEntry {
  entity: number;
}
/** A row by its key (storage time, entity id, time, poll id), not its content. */
export type RawKey = Pick<RawRow, 'seen_at' | 'entity' | 'at' | 'poll'>;

interface ChunkRow {
  id: number;
  entity: number;
  first: number;
  data: Buffer;
}

/** The shape id of a vanished marker (src/store/readings.ts VANISHED). */
const VANISHED = 0;
const MAX = Number.MAX_SAFE_INTEGER;
const MIN = Number.MIN_SAFE_INTEGER;

/** Whether row a comes before row b in storage order (seen_at, entity, at, poll). */
export const keyBefore = (a: RawKey, b: RawKey): boolean =>
  a.seen_at !== b.seen_at ? a.seen_at < b.seen_at : a.entity !== b.entity ? a.entity < b.entity : a.at !== b.at ? a.at < b.at : a.poll < b.poll;

/** The full-resolution history of an open, migrated database. */
export function createRawStore(db: Database.Database) {
  const cols = `seen_at, entity, at, poll, shape, vals`;
  const headAt = db.prepare<[number, number, number], RawRow>(
    `SELECT ${cols} FROM reading_history WHERE entity = ? AND at <= ? AND seen_at <= ? AND shape != ${VANISHED} ORDER BY at DESC, seen_at DESC LIMIT 1`,
  );
  const headRange = db.prepare<[number, number, number, number], RawRow>(
    `SELECT ${cols} FROM reading_history WHERE entity = ? AND at BETWEEN ? AND ? AND seen_at <= ? AND shape != ${VANISHED} ORDER BY at, seen_at`,
  );
  type Cursor = { t: number; e: number; a: number; p: number };
  const headPage = db.prepare<Cursor & { to: number; limit: number }, RawRow>(
    `SELECT ${cols} FROM reading_history WHERE (seen_at, entity, at, poll) > (@t, @e, @a, @p) AND seen_at <= @to
     ORDER BY seen_at, entity, at, poll LIMIT @limit`,
  );
  const headOldest = db.prepare<[], { t: number | null }>(`SELECT min(seen_at) AS t FROM reading_history`);
  const headNewest = db.prepare<[], { t: number | null }>(`SELECT max(seen_at) AS t FROM reading_history`);
  const headBefore = db.prepare<[number, number], RawRow>(`SELECT ${cols} FROM reading_history WHERE seen_at < ? ORDER BY seen_at, entity, at, poll LIMIT ?`);
  const headDeleteThrough = db.prepare<[number, number, number, number, number]>(
    `DELETE FROM reading_history WHERE seen_at < ? AND (seen_at, entity, at, poll) <= (?, ?, ?, ?)`,
  );
  const headCount = db.prepare<[], { n: number }>(`SELECT count(*) AS n FROM reading_history WHERE shape != ${VANISHED}`);
  const headHas = db.prepare<[number, number, number, number]>(`SELECT 1 FROM reading_history WHERE seen_at = ? AND entity = ? AND at = ? AND poll = ?`);
  const headLast = db.prepare<[], RawKey>(
    `SELECT seen_at, entity, at, poll FROM reading_history WHERE shape != ${VANISHED} ORDER BY seen_at DESC, entity DESC, at DESC, poll DESC LIMIT 1`,
  );
  const headNextAt = db.prepare<[number, number], { at: number | null }>(`SELECT min(at) AS at FROM reading_history WHERE entity = ? AND at > ? AND shape != ${VANISHED}`);
  const oldestEntities = db.prepare<[number, number], { entity: number }>(
    `SELECT DISTINCT entity FROM (SELECT entity FROM reading_history WHERE seen_at < ? ORDER BY seen_at LIMIT ?)`,
  );
  const headOfEntity = db.prepare<[number, number], RawRow>(
    `SELECT ${cols} FROM reading_history WHERE entity = ? AND seen_at < ? ORDER BY seen_at, at, poll`,
  );
  const headDeleteEntity = db.prepare<[number, number]>(`DELETE FROM reading_history WHERE entity = ? AND seen_at < ?`);

  const chunkCols = `id, entity, first, data`;
  const chunkPut = db.prepare<[number, number, number, number, number, number, string, Buffer]>(
    `INSERT INTO reading_history_chunks (entity, first, last, lo_at, hi_at, n, shapes, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const chunkDelete = db.prepare<[number]>(`DELETE FROM reading_history_chunks WHERE id = ?`);
  const chunkData = db.prepare<[number], { data: Buffer }>(`SELECT data FROM reading_history_chunks WHERE id = ?`);
  // The entity's chunks that may hold a reading at or before t (newest first: a chunk whose readings are all older than an answer has no better one).
  const chunksDown = db.prepare<[number, number, number, number], ChunkRow & { hi_at: number }>(
    `SELECT ${chunkCols}, hi_at FROM reading_history_chunks WHERE entity = ? AND lo_at <= ? AND first <= ? AND hi_at >= ? ORDER BY hi_at DESC`,
  );
  const chunksRange = db.prepare<[number, number, number, number], ChunkRow>(
    `SELECT ${chunkCols} FROM reading_history_chunks WHERE entity = ? AND hi_at >= ? AND lo_at <= ? AND first <= ?`,
  );
  const chunksNextAt = db.prepare<[number, number, number], { lo: number | null }>(
    `SELECT min(lo_at) AS lo FROM reading_history_chunks WHERE entity = ? AND hi_at > ? AND lo_at > ?`,
  );
  const chunksAcross = db.prepare<[number, number, number], ChunkRow>(
    `SELECT ${chunkCols} FROM reading_history_chunks WHERE entity = ? AND hi_at > ? AND lo_at <= ?`,
  );
  const chunksHolding = db.prepare<[number, number, number], ChunkRow>(
    `SELECT ${chunkCols} FROM reading_history_chunks WHERE entity = ? AND first <= ? AND last >= ?`,
  );
  const chunksOldest = db.prepare<[], { t: number | null }>(`SELECT min(first) AS t FROM reading_history_chunks`);
  const chunksNewest = db.prepare<[], { t: number | null }>(`SELECT max(last) AS t FROM reading_history_chunks WHERE first >= (SELECT max(first) FROM reading_history_chunks) - ${CHUNK_MS}`);
  const chunksFrom = db.prepare<[number], { t: number | null }>(`SELECT min(first) AS t FROM reading_history_chunks WHERE first >= ?`);
  const hourWhere = `FROM reading_history_chunks WHERE first BETWEEN ? AND ? AND last >= ? AND first <= ?`;
  const hourMeta = db.prepare<[number, number, number, number], Omit<ChunkRow, 'data'>>(`SELECT id, entity, first ${hourWhere} ORDER BY entity, first, id`);
  // Unordered: sorting an hour's chunks by entity made SQLite copy every blob through a temporary b-tree (5× the read).
  const hourData = db.prepare<[number, number, number, number], { id: number; data: Buffer }>(`SELECT id, data ${hourWhere}`);
  const chunksLaterThan = db.prepare<[number, number], ChunkRow & { last: number }>(
    `SELECT ${chunkCols}, last FROM reading_history_chunks WHERE first >= ? AND last >= ? ORDER BY first`,
  );
  // The latest chunk holding a reading (a seek on the `first` index, past chunks of vanished markers only).
  const chunksTopFirst = db.prepare<[], { t: number | null }>(`SELECT max(first) AS t FROM reading_history_chunks WHERE n > 0`);
  // Chunks holding a reading whose rows may have been stored at or after t (a chunk's rows were stored within the hour
  // of its first), by their last storage time then entity, latest first; without their blobs (sorted here).
  const chunksReadingsSince = db.prepare<[number, number], Omit<ChunkRow, 'data'> & { last: number }>(
    `SELECT id, entity, first, last FROM reading_history_chunks WHERE first > ? - ${CHUNK_MS} AND last >= ? AND n > 0 ORDER BY last DESC, entity DESC`,
  );
  const chunksBefore = db.prepare<[number, number], Omit<ChunkRow, 'data'>>(`SELECT id, entity, first FROM reading_history_chunks WHERE first < ? ORDER BY first, id LIMIT ?`);
  const chunksCount = db.prepare<[], { n: number }>(`SELECT coalesce(sum(n), 0) AS n FROM reading_history_chunks`);

  const open = (row: ChunkRow): OpenRawChunk => openRawChunk(row.data, row.first);
  /** Row `i` of an open chunk of `entity` (its values read in the chunk's body: raw-chunks.ts ChunkEntry). */
  const rowOf = (entity: number, c: OpenRawChunk, i: number): RawRow => new ChunkEntry(c, i, entity);

  /** Writes an entity's rows (in storage order, one hour) as a chunk. */
  function put(entity: number, entries: readonly RawEntry[]): void {
    const s = rawChunkSpan(entries);
    const shapes = JSON.stringify([...new Set(entries.map((e) => e.shape))].filter((x) => x !== VANISHED));
    chunkPut.run(entity, s.first, s.last, s.loAt, s.hiAt, s.n, shapes, encodeRawChunk(entries));
  }

  /** The entity's newest reading with at ≤ t stored by asOf (by time, then storage time), or undefined. */
  function at(entity: number, t: number, asOf: number): RawRow | undefined {
    let best = headAt.get(entity, t, asOf);
    // Only chunks that may hold a newer reading than the head's: no chunk blob fetched for nothing (the usual case).
    for (const row of chunksDown.iterate(entity, t, asOf, best?.at ?? Number.MIN_SAFE_INTEGER)) {
      if (best && row.hi_at < best.at) break;
      const c = open(row);
      for (let i = 0; i < c.n; i++) {
        if (c.shapes[i] === VANISHED || c.ats[i]! > t || c.seens[i]! > asOf) continue;
        if (!best || c.ats[i]! > best.at || (c.ats[i] === best.at && c.seens[i]! > best.seen_at)) best = rowOf(entity, c, i);
      }
    }
    return best;
  }

  /** The entity's readings with from ≤ at ≤ to stored by asOf, by time then storage time. */
  function range(entity: number, from: number, to: number, asOf: number): RawRow[] {
    const out = headRange.all(entity, from, to, asOf);
    const chunks = chunksRange.all(entity, from, to, asOf);
    if (chunks.length === 0) return out;
    for (const row of chunks) {
      const c = open(row);
      for (let i = 0; i < c.n; i++) {
        if (c.shapes[i] !== VANISHED && c.ats[i]! >= from && c.ats[i]! <= to && c.seens[i]! <= asOf) out.push(rowOf(entity, c, i));
      }
    }
    return out.sort((a, b) => a.at - b.at || a.seen_at - b.seen_at);
  }

  /** The smallest time of a reading of the entity after t, or undefined. */
  function nextAt(entity: number, t: number): number | undefined {
    let next = headNextAt.get(entity, t)?.at ?? MAX;
    next = Math.min(next, chunksNextAt.get(entity, t, t)?.lo ?? MAX);
    for (const row of chunksAcross.all(entity, t, t)) {
      const c = open(row);
      for (let i = 0; i < c.n; i++) if (c.shapes[i] !== VANISHED && c.ats[i]! > t && c.ats[i]! < next) next = c.ats[i]!;
    }
    return next === MAX ? undefined : next;
  }

  /** Rows with from ≤ seen_at ≤ to of the head, in storage order, a page at a time. */
  function* headPages(from: number, to: number, limit: number): Generator<RawRow[]> {
    let rows = headPage.all({ t: from, e: -1, a: MIN, p: -1, to, limit });
    for (;;) {
      if (rows.length > 0) yield rows;
      if (rows.length < limit) return;
      const l = rows[rows.length - 1]!;
      rows = headPage.all({ t: l.seen_at, e: l.entity, a: l.at, p: l.poll, to, limit });
    }
  }

  /**
   * The rows stored in [lo, hi] of one sealed hour (chunks, and head rows stored late into it), in storage order, in
   * pages of at most `limit`: grouped by storage time (a poll's rows share one), each group by entity. The hour's
   * chunks are fetched in one statement and each opened (inflated) once; a row's values stay in its chunk's body (the
   * row's `vals` is a view) until its page is read. So what a read holds is one hour's chunks opened: the rows its
   * polls stored, their values (packed) and about 50 bytes of times, ids and offsets each. Reading it in shorter spans
   * of storage time would not hold less: an entity's chunk holds its rows of the whole hour (a poll every few seconds
   * or minutes), so every span needs nearly every chunk opened, its body whole.
   */
  function* sealedHour(hour: number, lo: number, hi: number, limit: number): Generator<RawRow[]> {
    const metas = hourMeta.all(hour, hour + CHUNK_MS - 1, lo, hi);
    // The same rows as `metas`, unordered, by id.
    const data = new Map(hourData.all(hour, hour + CHUNK_MS - 1, lo, hi).map((r) => [r.id, r.data]));
    const chunks = metas.map((m) => ({ entity: m.entity, c: openRawChunk(data.get(m.id)!, m.first) }));
    data.clear();
    const lateAt = new Map<number, RawRow[]>();
    for (const page of headPages(lo, hi, limit)) {
      for (const r of page) {
        let late = lateAt.get(r.seen_at);
        if (!late) lateAt.set(r.seen_at, (late = []));
        late.push(r);
      }
    }
    if (lateAt.size === 0 && inStep(chunks)) {
      // The usual hour: every entity's chunk holds a row of every poll, so row i of each chunk, in entity order, is
      // storage time i's group; no grouping needed.
      const { n, seens } = chunks[0]!.c;
      let rows: RawRow[] = [];
      for (let i = 0; i < n; i++) {
        const s = seens[i]!;
        if (s < lo || s > hi) continue;
        for (let k = 0; k < chunks.length; k++) {
          const { entity, c } = chunks[k]!;
          rows.push(rowOf(entity, c, i));
          if (rows.length >= limit) {
            yield rows;
            rows = [];
          }
        }
        // A page holds one storage time's rows, as the grouped path's do.
        if (rows.length > 0) {
          yield rows;
          rows = [];
        }
      }
      return;
    }
    // By storage time: [chunk index, row index] pairs, in entity order (chunks are). A poll's rows share a storage
    // time, so the group of a chunk's i-th row is most often the previous chunk's i-th row's: looked up once.
    const groups = new Map<number, number[]>();
    const unsorted = new Set<number>();
    const bySlot: Array<{ s: number; g: number[] }> = [];
    for (let k = 0; k < chunks.length; k++) {
      const { entity, c } = chunks[k]!;
      for (let i = 0; i < c.n; i++) {
        const s = c.seens[i]!;
        if (s < lo || s > hi) continue;
        const slot = bySlot[i];
        let g: number[] | undefined;
        if (slot && slot.s === s) g = slot.g;
        else {
          g = groups.get(s);
          if (!g) groups.set(s, (g = []));
          bySlot[i] = { s, g };
        }
        // Two chunks of one entity (rows stored late) may interleave within a storage time.
        if (g.length > 0 && g[g.length - 2] !== k && chunks[g[g.length - 2]!]!.entity === entity) unsorted.add(s);
        g.push(k, i);
      }
    }
    for (const s of lateAt.keys()) if (!groups.has(s)) groups.set(s, []);
    for (const s of [...groups.keys()].sort((x, y) => x - y)) {
      const g = groups.get(s)!;
      const extra = lateAt.get(s);
      const rows: RawRow[] = extra ?? [];
      for (let j = 0; j < g.length; j += 2) {
        const { entity, c } = chunks[g[j]!]!;
        rows.push(rowOf(entity, c, g[j + 1]!));
        if (!extra && !unsorted.has(s) && rows.length >= limit) yield rows.splice(0);
      }
      if (extra || unsorted.has(s)) rows.sort((x, y) => (keyBefore(x, y) ? -1 : keyBefore(y, x) ? 1 : 0));
      for (let j = 0; j < rows.length; j += limit) yield rows.slice(j, j + limit);
    }
  }

  /**
   * Whether an hour's open chunks (in entity order) are in step: one chunk an entity, each holding a row of every
   * storage time of the others and no two rows of one storage time. Then row i of every chunk makes storage time i's
   * rows, in entity order, and {@link sealedHour} needs no grouping.
   */
  function inStep(chunks: ReadonlyArray<{ entity: number; c: OpenRawChunk }>): boolean {
    if (chunks.length === 0) return false;
    const { n, seens } = chunks[0]!.c;
    for (let i = 1; i < n; i++) if (seens[i]! <= seens[i - 1]!) return false;
    for (let k = 1; k < chunks.length; k++) {
      const { entity, c } = chunks[k]!;
      if (entity <= chunks[k - 1]!.entity || c.n !== n) return false;
      for (let i = 0; i < n; i++) if (c.seens[i] !== seens[i]) return false;
    }
    return true;
  }

  /** Every row (vanished markers too) with from ≤ seen_at ≤ to, in storage order, in pages of at most `limit`. */
  function* iterate(from: number, to: number, limit: number): Generator<RawRow[]> {
    for (let t = from; t <= to; ) {
      const first = chunksFrom.get(chunkStart(t))?.t ?? null;
      if (first === null || chunkStart(first) > to) {
        yield* headPages(t, to, limit);
        return;
      }
      const hour = chunkStart(first);
      if (hour > t) yield* headPages(t, hour - 1, limit);
      yield* sealedHour(hour, Math.max(t, hour), Math.min(to, hour + CHUNK_MS - 1), limit);
      t = hour + CHUNK_MS;
    }
  }

  /**
   * Seals the head's rows stored before `before` (an hour's start) into chunks, an entity at a time (all its rows
   * before then), the entities of the oldest rows first, until about `limit` rows are sealed; returns the rows sealed
   * (0: none left). Call inside a transaction.
   */
  function seal(before: number, limit: number): number {
    let sealed = 0;
    while (sealed < limit) {
      const entities = oldestEntities.all(before, 256);
      if (entities.length === 0) break;
      for (const { entity } of entities) {
        const rows = headOfEntity.all(entity, before);
        for (let i = 0; i < rows.length; ) {
          const hour = chunkStart(rows[i]!.seen_at);
          let j = i;
          while (j < rows.length && chunkStart(rows[j]!.seen_at) === hour) j++;
          put(entity, rows.slice(i, j));
          i = j;
        }
        headDeleteEntity.run(entity, before);
        sealed += rows.length;
        if (sealed >= limit) break;
      }
    }
    return sealed;
  }

  /**
   * Takes up to about `limit` rows stored before `before`, oldest first (a chunk at a time, then head rows): `use`
   * sees them (storage order within a chunk or page), then they are deleted. Sealed hours go whole: the rows of the
   * hour holding `before` stay until a later call's cutoff passes the hour. Returns the rows taken. Call inside a
   * transaction.
   */
  function take(before: number, limit: number, use: (rows: readonly RawRow[]) => void): number {
    let n = 0;
    // Sealed hours go whole: only chunks of hours that ended by `before`. Cutting the hour that holds `before` would
    // re-encode each entity's chunk of it on every call (the daemon's cutoff moves on every 10 s: every chunk of that
    // hour inflated, cut and deflated again each time); its rows wait until the hour is wholly before the cutoff.
    const hours = chunkStart(before);
    for (let page = chunksBefore.all(hours, 16); n < limit && page.length > 0; page = chunksBefore.all(hours, 16)) {
      for (const row of page) {
        if (n >= limit) break;
        n += takeChunk({ ...row, data: chunkData.get(row.id)!.data }, use);
      }
    }
    if (n >= limit) return n;
    const rows = headBefore.all(before, limit - n);
    if (rows.length === 0) return n;
    use(rows);
    const last = rows[rows.length - 1]!;
    headDeleteThrough.run(before, last.seen_at, last.entity, last.at, last.poll);
    return n + rows.length;
  }

  /** {@link take} of one chunk: {@link take} takes only chunks of hours that ended by its cutoff, so all of its rows go. */
  function takeChunk(row: ChunkRow, use: (rows: readonly RawRow[]) => void): number {
    const all = open(row);
    const gone = Array.from({ length: all.n }, (_, i) => rowOf(row.entity, all, i));
    use(gone);
    chunkDelete.run(row.id);
    return gone.length;
  }

  /**
   * The newest row (vanished markers aside) in storage order, or undefined: the head's newest, unless a chunk holds a
   * newer one. That happens where a seal bounded by its row limit sealed the newest rows of some entities and left
   * older rows of others in the head (and where everything is sealed). Usually the head holds rows stored after the
   * hour of the latest chunk: two index seeks, no chunk opened. Else the chunks that may hold a newer row are taken
   * latest first, and opened until one cannot: usually one.
   */
  function last(): RawKey | undefined {
    let best: RawKey | undefined = headLast.get();
    const top = chunksTopFirst.get()?.t ?? null;
    if (top === null) return best;
    const hour = chunkStart(top);
    if (best && best.seen_at >= hour + CHUNK_MS) return best;
    // The newest row is stored at or after both the head's newest and the latest chunk's hour (the chunk holds a reading).
    const floor = Math.max(hour, best?.seen_at ?? MIN);
    for (const m of chunksReadingsSince.all(floor, floor)) {
      // Neither this chunk's rows nor any after it (stored by the same time, of an entity not after it) come after the best.
      if (best && keyBefore({ seen_at: m.last, entity: m.entity, at: MAX, poll: MAX }, best)) break;
      const c = open({ ...m, data: chunkData.get(m.id)!.data });
      // A chunk's rows are in storage order: its newest is its last reading.
      let i = c.n - 1;
      while (i >= 0 && c.shapes[i] === VANISHED) i--;
      if (i < 0) continue;
      const r: RawKey = { seen_at: c.seens[i]!, entity: m.entity, at: c.ats[i]!, poll: c.polls[i]! };
      if (!best || keyBefore(best, r)) best = r;
    }
    return best && { seen_at: best.seen_at, entity: best.entity, at: best.at, poll: best.poll };
  }

  /** Whether the row is stored (in the head or a chunk). */
  function has(k: RawKey): boolean {
    if (headHas.get(k.seen_at, k.entity, k.at, k.poll) !== undefined) return true;
    for (const row of chunksHolding.all(k.entity, k.seen_at, k.seen_at)) {
      const c = open(row);
      for (let i = 0; i < c.n; i++) if (c.seens[i] === k.seen_at && c.ats[i] === k.at && c.polls[i] === k.poll) return true;
    }
    return false;
  }

  /** Readings (vanished markers aside) in chunks stored after `after` with at < before, in no particular order. */
  function sealedSince(after: RawKey, before: number): RawKey[] {
    const sealed: RawKey[] = [];
    for (const row of chunksLaterThan.all(chunkStart(after.seen_at), after.seen_at)) {
      const c = open(row);
      for (let i = 0; i < c.n; i++) {
        if (c.shapes[i] === VANISHED || c.ats[i]! >= before) continue;
        const r: RawKey = { seen_at: c.seens[i]!, entity: row.entity, at: c.ats[i]!, poll: c.polls[i]! };
        if (keyBefore(after, r)) sealed.push(r);
      }
    }
    return sealed;
  }

  const either = (a: number | null | undefined, b: number | null | undefined, pick: (x: number, y: number) => number): number | null =>
    a === null || a === undefined ? (b ?? null) : b === null || b === undefined ? a : pick(a, b);

  return {
    at,
    range,
    nextAt,
    iterate,
    seal,
    take,
    last,
    has,
    sealedSince,
    /** The earliest storage time of a row, null when there is none. */
    oldest: () => either(headOldest.get()?.t, chunksOldest.get()?.t, Math.min),
    /** The latest storage time of a row, null when there is none. */
    newest: () => either(headNewest.get()?.t, chunksNewest.get()?.t, Math.max),
    /** Readings (vanished markers aside), head and chunks. */
    count: () => headCount.get()!.n + chunksCount.get()!.n,
    /** The entity's newest reading of all (by time, then storage time). */
    newestOf: (entity: number): RawRow | undefined => at(entity, MAX, MAX),
  };
}

export type RawStore = ReturnType<typeof createRawStore>;
