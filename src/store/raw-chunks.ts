/**
 * The on-disk form of sealed full-resolution history: one chunk per entity and hour of storage time (`seen_at`), the
 * rows the entity's polls stored in that hour, in storage order (seen_at, then at, then poll). A chunk is written
 * once and never changed (pruning and folding take whole chunks: an hour once the cutoff has passed it). Rows stored late into
 * an hour already sealed make a second chunk of it; readers merge them. The chunk's row keeps the entity and the
 * first row's storage time (with its hour: `chunkStart(first)`); the chunk itself holds the count, then per row its
 * storage time as the step from the previous one, its time as the difference from that, its poll and shape ids and
 * the length of its packed values (so a reader finds any row's values without decoding the others), then every
 * row's packed values (src/store/codec.ts) as stored in `reading_history`. Pure: no database here.
 */
import { chunkStart, openBody, sealBody } from './chunk-form.js';
import { Reader, unzig, Writer, zig } from './codec.js';

/** One full-resolution history row of an entity: its times, poll and shape ids (0: a vanished marker) and packed values. */
export interface RawEntry {
  seen_at: number;
  at: number;
  poll: number;
  shape: number;
  vals: Uint8Array;
}

/** Whether row a comes before row b in a chunk (and in storage order within one entity). */
const rawBefore = (a: Pick<RawEntry, 'seen_at' | 'at' | 'poll'>, b: Pick<RawEntry, 'seen_at' | 'at' | 'poll'>): boolean =>
  a.seen_at < b.seen_at || (a.seen_at === b.seen_at && (a.at < b.at || (a.at === b.at && a.poll < b.poll)));

/**
 * Packs one entity's rows (in storage order, distinct, all stored within one hour) as a chunk whose first row is
 * `entries[0]` (its seen_at is the row's column). Deflated when that is smaller. Values are copied as they are.
 */
export function encodeRawChunk(entries: readonly RawEntry[]): Buffer {
  if (entries.length === 0) throw new RangeError('a raw chunk needs a row');
  const w = new Writer();
  w.byte(0); // the form (src/store/chunk-form.ts)
  w.varint(entries.length);
  const hour = chunkStart(entries[0]!.seen_at);
  let prev = entries[0]!;
  for (const e of entries) {
    if ((e !== prev && !rawBefore(prev, e)) || chunkStart(e.seen_at) !== hour) {
      throw new RangeError(`row stored at ${e.seen_at} out of its chunk's order or hour`);
    }
    w.varint(e.seen_at - prev.seen_at);
    w.varint(zig(e.at - e.seen_at));
    w.varint(e.poll);
    w.varint(e.shape);
    w.varint(e.vals.length);
    prev = e;
  }
  for (const e of entries) w.bytes(e.vals);
  return sealBody(w.take());
}

/** A chunk being read: every row's times, ids and where its values are in `body`. */
export interface OpenRawChunk {
  n: number;
  seens: number[];
  ats: number[];
  polls: number[];
  shapes: number[];
  /** Where each row's packed values start in `body`, and end (the next one's start). */
  offs: number[];
  body: Uint8Array;
}

/** Opens a chunk (see {@link encodeRawChunk}) whose row says its first row was stored at `first`. */
export function openRawChunk(data: Uint8Array, first: number): OpenRawChunk {
  // A plain view (a row's values are views of it: a Uint8Array's subarray is cheaper to make than a Buffer's).
  const stored = openBody(data, 'raw history chunk');
  const body = new Uint8Array(stored.buffer, stored.byteOffset, stored.byteLength);
  const r = new Reader(body);
  const n = r.varint();
  // Plain arrays: a chunk is opened per entity and hour read, and small typed arrays cost more to make than they save.
  const c: OpenRawChunk = { n, seens: new Array<number>(n), ats: new Array<number>(n), polls: new Array<number>(n), shapes: new Array<number>(n), offs: new Array<number>(n + 1), body };
  let seen = first;
  let off = 0;
  for (let i = 0; i < n; i++) {
    seen += r.varint();
    c.seens[i] = seen;
    c.ats[i] = seen + unzig(r.varint());
    c.polls[i] = r.varint();
    c.shapes[i] = r.varint();
    c.offs[i] = off;
    off += r.varint();
  }
  c.offs[n] = off;
  // Offsets so far are from the start of the values.
  for (let i = 0; i <= n; i++) c.offs[i] = c.offs[i]! + r.pos;
  if (c.offs[n] !== body.length) throw new RangeError('raw history chunk values do not match their lengths');
  return c;
}

/**
 * Row `i` of an open chunk, of `entity` (0 where the caller has none): its values stay where they are in the chunk's
 * body — {@link entryReader} reads them there, and a view of them is made only when `vals` is asked for (a view costs
 * ~100 ns a row, as much as the rest of a replayed row's read).
 */
export class ChunkEntry implements RawEntry {
  readonly seen_at: number;
  readonly at: number;
  readonly poll: number;
  readonly shape: number;
  readonly body: Uint8Array;
  readonly off: number;
  readonly end: number;
  constructor(
    c: OpenRawChunk,
    i: number,
    readonly entity: number,
  ) {
    this.seen_at = c.seens[i]!;
    this.at = c.ats[i]!;
    this.poll = c.polls[i]!;
    this.shape = c.shapes[i]!;
    this.body = c.body;
    this.off = c.offs[i]!;
    this.end = c.offs[i + 1]!;
  }
  get vals(): Uint8Array {
    return this.body.subarray(this.off, this.end);
  }
}

/** A reader of a row's packed values: in its chunk's body where it came from a chunk, no view made. */
export function entryReader(e: RawEntry): Reader {
  return e instanceof ChunkEntry ? new Reader(e.body, e.off, e.end) : new Reader(e.vals);
}

/** Every row of a chunk (of no entity: 0). */
export function decodeRawChunk(data: Uint8Array, first: number): RawEntry[] {
  const c = openRawChunk(data, first);
  return Array.from({ length: c.n }, (_, i) => new ChunkEntry(c, i, 0));
}

/** What a chunk's row says of its rows (for its columns): storage times, the span of the readings' times (vanished markers aside), how many readings. */
export function rawChunkSpan(entries: readonly RawEntry[]): { first: number; last: number; loAt: number; hiAt: number; n: number } {
  let loAt = Number.MAX_SAFE_INTEGER;
  let hiAt = Number.MIN_SAFE_INTEGER;
  let n = 0;
  for (const e of entries) {
    if (e.shape === 0) continue;
    n++;
    if (e.at < loAt) loAt = e.at;
    if (e.at > hiAt) hiAt = e.at;
  }
  return { first: entries[0]!.seen_at, last: entries[entries.length - 1]!.seen_at, loAt, hiAt, n };
}
