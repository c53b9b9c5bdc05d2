/**
 * History past `storage.raw_retention` is kept as 5-minute buckets per entity: the last reading of the bucket (its
 * fields as they were), and for every numeric field the lowest and the highest value the bucket saw. A rule replayed
 * over bucketed time judges the worst of them for its direction (SPEC: storage; the backtest says so).
 * This module is the pure part: folding readings into a bucket and packing a bucket's values.
 */
import { setOwn } from '../own.js';
import { numeric, readValue, skipValue, writeValue, type FieldPick, type Reader, type Shape, type Writer } from './codec.js';

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
    if (numeric(v) !== null) {
      setOwn(min, k, v);
      setOwn(max, k, v);
    }
  }
  return { start: bucketStart(r.at), at: r.at, seenAt: r.seenAt, poll: r.poll, shape: r.shape, n: 1, fields: r.fields, min, max };
}

/** Folds `b` into `a` (both of one entity and bucket): extremes combined, the later reading (by time, then storage) last. */
export function mergeBuckets(a: Bucket, b: Bucket): Bucket {
  const later = b.at > a.at || (b.at === a.at && b.seenAt >= a.seenAt) ? b : a;
  const min = { ...a.min };
  const max = { ...a.max };
  for (const [k, v] of Object.entries(b.min)) if (!Object.hasOwn(min, k) || numeric(v)! < numeric(min[k])!) setOwn(min, k, v);
  for (const [k, v] of Object.entries(b.max)) if (!Object.hasOwn(max, k) || numeric(v)! > numeric(max[k])!) setOwn(max, k, v);
  return { ...later, start: a.start, n: a.n + b.n, min, max };
}

/** A value as a decimal: integer digits and a scale (value = m × 10^−scale), when it has one that small. */
function decimal(v: unknown): { m: bigint; scale: number; text: boolean } | null {
  if (typeof v === 'string') return /^-?(?:0|[1-9]\d*)$/.test(v) ? { m: BigInt(v), scale: 0, text: true } : null;
  if (typeof v !== 'number' || !Number.isFinite(v)) return null;
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(v));
  if (!match) return null;
  const frac = match[3] ?? '';
  let scale = frac.length - Number(match[4] ?? 0);
  let digits = match[2]! + frac;
  if (scale < 0) {
    digits += '0'.repeat(-scale);
    scale = 0;
  }
  return scale > 31 ? null : { m: BigInt(match[1]! + digits), scale, text: false };
}

const zig = (d: bigint): number | null => {
  const z = d >= 0n ? d * 2n : -d * 2n - 1n;
  return z < 2n ** 52n ? Number(z) : null;
};
const unzig = (z: number): bigint => (z % 2 === 0 ? BigInt(z / 2) : -BigInt((z + 1) / 2));

/**
 * An extreme as a small difference from the bucket's last value at a common scale (most extremes are a few units in
 * the last digits away): [scale, zigzag(min − last), zigzag(max − last)], or null when they do not share a form.
 */
function relative(last: unknown, min: unknown, max: unknown): [number, number, number] | null {
  const [l, lo, hi] = [decimal(last), decimal(min), decimal(max)];
  if (!l || !lo || !hi || l.text !== lo.text || l.text !== hi.text) return null;
  const scale = Math.max(l.scale, lo.scale, hi.scale);
  const at = (d: { m: bigint; scale: number }) => d.m * 10n ** BigInt(scale - d.scale);
  const a = zig(at(lo) - at(l));
  const b = zig(at(hi) - at(l));
  return a === null || b === null ? null : [scale, a, b];
}

/** The value `d` away from `last` at `scale`, in `last`'s form (a number or a decimal string). */
function fromRelative(last: unknown, scale: number, d: bigint): unknown {
  const l = decimal(last)!;
  const m = l.m * 10n ** BigInt(scale - l.scale) + d;
  return l.text ? m.toString() : Number(`${m}e-${scale}`);
}

/**
 * Packs a bucket's values: the last reading's packed fields as a raw row has them, then per packed field one byte —
 * 0 when min and max equal the last value (nothing more), 2 followed by the scale and min and max as differences from
 * the last value, 1 followed by min and max in full — and last the reading count.
 */
export function writeBucketValues(w: Writer, shape: Shape, b: Bucket): void {
  const packed = shape.keys.filter((_, i) => shape.dyn[i]);
  for (const k of packed) writeValue(w, b.fields[k], b.at);
  for (const k of packed) {
    const v = b.fields[k];
    if (!Object.hasOwn(b.min, k) || (b.min[k] === v && b.max[k] === v)) {
      w.byte(0);
      continue;
    }
    const rel = relative(v, b.min[k], b.max[k]);
    if (rel && fromRelative(v, rel[0], unzig(rel[1])) === b.min[k] && fromRelative(v, rel[0], unzig(rel[2])) === b.max[k]) {
      w.byte(2);
      w.byte(rel[0]);
      w.varint(rel[1]);
      w.varint(rel[2]);
      continue;
    }
    w.byte(1);
    writeValue(w, b.min[k], b.at);
    writeValue(w, b.max[k], b.at);
  }
  w.varint(b.n);
}

/**
 * Reads the extremes and count that follow the last reading's values (see {@link writeBucketValues}); with `pick`, the
 * extremes of the picked fields only (`fields` holds their last values), the others read past.
 */
export function readBucketTail(r: Reader, shape: Shape, fields: Record<string, unknown>, at: number, pick?: FieldPick): Pick<Bucket, 'min' | 'max' | 'n'> {
  const min: Record<string, unknown> = {};
  const max: Record<string, unknown> = {};
  for (let i = 0; i < shape.keys.length; i++) {
    if (!shape.dyn[i]) continue;
    const k = shape.keys[i]!;
    const flag = r.byte();
    if (pick && !pick.has(k)) {
      skipExtremes(r, flag);
      continue;
    }
    let lo: unknown;
    let hi: unknown;
    if (flag === 1) {
      lo = readValue(r, at);
      hi = readValue(r, at);
    } else if (flag === 2) {
      const scale = r.byte();
      lo = fromRelative(fields[k], scale, unzig(r.varint()));
      hi = fromRelative(fields[k], scale, unzig(r.varint()));
    } else if (numeric(fields[k]) !== null) lo = hi = fields[k];
    else continue;
    // A plain store but for `__proto__` (setOwn's case): a call per extreme was a fifth of a bucketed backtest's reads.
    if (k === '__proto__') {
      setOwn(min, k, lo);
      setOwn(max, k, hi);
    } else {
      min[k] = lo;
      max[k] = hi;
    }
  }
  return { min, max, n: r.varint() };
}

/** Reads past one field's extremes, written with `flag` (0: none, 1: two values, 2: a scale and two steps). */
function skipExtremes(r: Reader, flag: number): void {
  if (flag === 1) {
    skipValue(r);
    skipValue(r);
  } else if (flag === 2) {
    r.byte();
    r.varint();
    r.varint();
  }
}

/** Reads past a bucket's values (the last reading's, the extremes, the count) without building them. */
export function skipBucketValues(r: Reader, shape: Shape): void {
  for (let i = 0; i < shape.keys.length; i++) if (shape.dyn[i]) skipValue(r);
  for (let i = 0; i < shape.keys.length; i++) if (shape.dyn[i]) skipExtremes(r, r.byte());
  r.varint();
}
