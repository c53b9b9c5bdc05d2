/**
 * History past `storage.raw_retention` is kept as 5-minute buckets per entity: the last reading of the bucket (its
 * fields as they were), and for every numeric field the lowest and the highest value the bucket saw. A rule replayed
 * over bucketed time judges the worst of them for its direction (SPEC: storage; the backtest says so).
 * This module is the pure part: folding readings into a bucket and packing a bucket's values.
 */
import { numeric, readValue, writeValue, type Reader, type Shape, type Writer } from './codec.js';

/** Width of a bucket, ms. */
export const BUCKET_MS = 5 * 60_000;

/** The start of the bucket holding time `at`. */
export const bucketStart = (at: number): number => Math.floor(at / BUCKET_MS) * BUCKET_MS;

/** A bucket being built or read back. `min`/`max` hold the extreme values as stored (a decimal string stays a string). */
export interface Bucket {
  start: number;
  /** The last reading's time and when it was stored, its poll and shape. */
  at: number;
  seenAt: number;
  poll: number;
  shape: number;
  /** Readings folded in. */
  n: number;
  fields: Record<string, unknown>;
  min: Record<string, unknown>;
  max: Record<string, unknown>;
}

/** One reading to fold into a bucket. */
export interface BucketInput {
  at: number;
  seenAt: number;
  poll: number;
  shape: number;
  fields: Record<string, unknown>;
}

/** A bucket of one reading. */
export function bucketOf(r: BucketInput): Bucket {
  const min: Record<string, unknown> = {};
  const max: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(r.fields)) {
    if (numeric(v) !== null) min[k] = max[k] = v;
  }
  return { start: bucketStart(r.at), at: r.at, seenAt: r.seenAt, poll: r.poll, shape: r.shape, n: 1, fields: r.fields, min, max };
}

/** Folds `b` into `a` (both of one entity and bucket): extremes combined, the later reading (by time, then storage) last. */
export function mergeBuckets(a: Bucket, b: Bucket): Bucket {
  const later = b.at > a.at || (b.at === a.at && b.seenAt >= a.seenAt) ? b : a;
  const min = { ...a.min };
  const max = { ...a.max };
  for (const [k, v] of Object.entries(b.min)) if (!(k in min) || numeric(v)! < numeric(min[k])!) min[k] = v;
  for (const [k, v] of Object.entries(b.max)) if (!(k in max) || numeric(v)! > numeric(max[k])!) max[k] = v;
  return { ...later, start: a.start, n: a.n + b.n, min, max };
}

/**
 * Packs a bucket's values: the last reading's packed fields as a raw row has them, then per packed field one byte —
 * 0 when min and max equal the last value (nothing more), 1 followed by min and max — and last the reading count.
 */
export function writeBucketValues(w: Writer, shape: Shape, b: Bucket): void {
  const packed = shape.keys.filter((_, i) => shape.dyn[i]);
  for (const k of packed) writeValue(w, b.fields[k], b.at);
  for (const k of packed) {
    const v = b.fields[k];
    if (!(k in b.min) || (b.min[k] === v && b.max[k] === v)) {
      w.byte(0);
      continue;
    }
    w.byte(1);
    writeValue(w, b.min[k], b.at);
    writeValue(w, b.max[k], b.at);
  }
  w.varint(b.n);
}

/** Reads the extremes and count that follow the last reading's values (see {@link writeBucketValues}). */
export function readBucketTail(r: Reader, shape: Shape, fields: Record<string, unknown>, at: number): Pick<Bucket, 'min' | 'max' | 'n'> {
  const min: Record<string, unknown> = {};
  const max: Record<string, unknown> = {};
  for (let i = 0; i < shape.keys.length; i++) {
    if (!shape.dyn[i]) continue;
    const k = shape.keys[i]!;
    if (r.byte() === 1) {
      min[k] = readValue(r, at);
      max[k] = readValue(r, at);
    } else if (numeric(fields[k]) !== null) {
      min[k] = max[k] = fields[k];
    }
  }
  return { min, max, n: r.varint() };
}
