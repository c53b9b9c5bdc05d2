/**
 * The on-disk form of sealed 5-minute buckets: one chunk per entity, hour, poll and shape, holding that hour's buckets
 * in start order. A chunk is written once and never changed; a bucket whose readings were folded at two times (some
 * stored late) is in two chunks, and a reader merges them (src/store/buckets.ts, mergeBuckets). The chunk's row keeps
 * the entity, the first bucket's start, the poll and the shape; the chunk itself, per bucket: the start as the count of
 * buckets since the previous one, the last reading's time from the start and its storage time from that, then the
 * bucket's values as writeBucketValues (src/store/buckets.ts) packs them. Pure: no database here.
 */
import { BUCKET_MS, readBucketTail, skipBucketValues, type Bucket } from './buckets.js';
import { chunkStart, CHUNK_MS, openBody, sealBody } from './chunk-form.js';
import { Reader, unpackFields, unzig, Writer, zig, type FieldPick, type Shape } from './codec.js';

/** A bucket as a chunk takes it: its times, and its values as writeBucketValues packed them (a staged row's). */
export interface PackedBucket {
  start: number;
  at: number;
  seenAt: number;
  vals: Uint8Array;
}

/**
 * Packs buckets of one entity, poll and shape (sorted by start, distinct starts, all within one {@link CHUNK_MS}
 * span) as a chunk whose first bucket starts at `buckets[0].start` (the row's column): the count, then every bucket's
 * times (so they are read without the shape), then every bucket's values. Deflated when that is smaller. The values
 * are copied as they are: sealing a bucket decodes nothing.
 */
export function encodeChunk(buckets: readonly PackedBucket[]): Buffer {
  const w = new Writer();
  w.byte(0); // the form (src/store/chunk-form.ts)
  w.varint(buckets.length);
  const first = buckets[0]!.start;
  let prev = first;
  for (const b of buckets) {
    if (b.start < prev || (b.start === prev && b !== buckets[0]) || chunkStart(b.start) !== chunkStart(first)) {
      throw new RangeError(`bucket ${b.start} out of its chunk's order or span`);
    }
    w.varint((b.start - prev) / BUCKET_MS);
    prev = b.start;
    w.varint(zig(b.at - b.start));
    w.varint(zig(b.seenAt - b.at));
  }
  for (const b of buckets) w.bytes(b.vals);
  return sealBody(w.take());
}

/**
 * Largest chunk worth storing whole, bytes: four fit on a 4,096-byte SQLite page. A table page holds whole chunks, so
 * one of 1,400 bytes left a third of its page empty (two a page); {@link encodeChunks} halves a larger one instead.
 */
export const CHUNK_MAX_BYTES = 990;

/**
 * The chunks for buckets {@link encodeChunk} takes, each at most `maxBytes` where halving allows (a lone bucket is
 * stored whatever its size): the first bucket's start, the count and the chunk of each, in start order.
 */
export function encodeChunks(buckets: readonly PackedBucket[], maxBytes = CHUNK_MAX_BYTES): Array<{ first: number; count: number; data: Buffer }> {
  const data = encodeChunk(buckets);
  if (data.length <= maxBytes || buckets.length === 1) return [{ first: buckets[0]!.start, count: buckets.length, data }];
  const half = Math.ceil(buckets.length / 2);
  return [...encodeChunks(buckets.slice(0, half), maxBytes), ...encodeChunks(buckets.slice(half), maxBytes)];
}

/** A chunk being read: every bucket's times, and its values read one bucket at a time ({@link nextBucket}). */
export interface OpenChunk {
  starts: number[];
  ats: number[];
  seens: number[];
  /** The index of the bucket {@link nextBucket} reads next. */
  next: number;
  values: Reader;
}

/** Opens a chunk (see {@link encodeChunk}) whose row says its first bucket starts at `first`: its times read. */
export function openChunk(data: Uint8Array, first: number): OpenChunk {
  const r = new Reader(openBody(data, 'bucket chunk'));
  const count = r.varint();
  const c: OpenChunk = { starts: new Array(count), ats: new Array(count), seens: new Array(count), next: 0, values: r };
  let start = first;
  for (let i = 0; i < count; i++) {
    start += r.varint() * BUCKET_MS;
    c.starts[i] = start;
    c.ats[i] = start + unzig(r.varint());
    c.seens[i] = c.ats[i]! + unzig(r.varint());
  }
  return c;
}

/** Reads the chunk's next bucket; `poll`, `shapeId` and `shape` are its row's; with `pick`, only those fields (codec.ts FieldPick). */
export function nextBucket(c: OpenChunk, poll: number, shapeId: number, shape: Shape, pick?: FieldPick): Bucket {
  const i = c.next++;
  if (i >= c.starts.length) throw new RangeError('bucket chunk read past its last bucket');
  const at = c.ats[i]!;
  const fields = unpackFields(shape, c.values, at, pick);
  return { start: c.starts[i]!, at, seenAt: c.seens[i]!, poll, shape: shapeId, fields, ...readBucketTail(c.values, shape, fields, at, pick) };
}

/** Reads past the chunk's next bucket without building it. */
export function skipBucket(c: OpenChunk, shape: Shape): void {
  if (c.next++ >= c.starts.length) throw new RangeError('bucket chunk read past its last bucket');
  skipBucketValues(c.values, shape);
}

/** Every bucket of a chunk. */
export function decodeChunk(data: Uint8Array, first: number, poll: number, shapeId: number, shape: Shape): Bucket[] {
  const c = openChunk(data, first);
  const out = c.starts.map(() => nextBucket(c, poll, shapeId, shape));
  if (!c.values.done) throw new RangeError('bucket chunk has bytes past its last bucket');
  return out;
}

/**
 * Splits one entity's buckets (sorted by start) into the runs that make chunks: a new run where the span, the poll or
 * the shape changes.
 */
export function chunkRuns<B extends { start: number; poll: number; shape: number }>(buckets: readonly B[]): B[][] {
  const runs: B[][] = [];
  let run: B[] = [];
  for (const b of buckets) {
    const head = run[0];
    if (head && (chunkStart(head.start) !== chunkStart(b.start) || head.poll !== b.poll || head.shape !== b.shape)) {
      runs.push(run);
      run = [];
    }
    run.push(b);
  }
  if (run.length) runs.push(run);
  return runs;
}
