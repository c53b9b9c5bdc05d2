/**
 * The chunk form of sealed buckets (src/store/bucket-chunks.ts): an hour of an entity's buckets packed and read back
 * exactly, plain or deflated, their times readable without the shape, and what it refuses.
 */
import { inflateRawSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chunkRuns, CHUNK_MAX_BYTES, decodeChunk, encodeChunk, encodeChunks, nextBucket, openChunk, skipBucket, type PackedBucket } from '../src/store/bucket-chunks.js';
import { CHUNK_MS } from '../src/store/chunk-form.js';
import { bucketOf, BUCKET_MS, mergeBuckets, writeBucketValues, type Bucket } from '../src/store/buckets.js';
import { packReading, Writer, type Shape } from '../src/store/codec.js';

const HOUR = Date.UTC(2025, 0, 6, 13);

const shapeOf = (fields: Record<string, unknown>) => JSON.parse(packReading(new Writer(), {}, fields, undefined, 0).shape) as Shape;

/** A bucket of the readings at `ats` (ms into the bucket), every value moving by reading. */
function bucketAt(start: number, ats: number[], k: number): Bucket {
  return ats
    .map((dt, i) => bucketOf({ at: start + dt, seenAt: start + dt + 4_000 + i, poll: 3, shape: 7, fields: { u: 0.8 + (k * 10 + i) / 1e4, amount: `${1234 + k + i}000000000`, block: 1_000 + k * 10 + i, ok: true, note: null } }))
    .reduce(mergeBuckets);
}

const packed = (shape: Shape, b: Bucket): PackedBucket => {
  const w = new Writer();
  writeBucketValues(w, shape, b);
  return { start: b.start, at: b.at, seenAt: b.seenAt, vals: w.take() };
};

describe('a chunk packed and read back', () => {
  it('gives back every bucket of the hour exactly: times, last values, extremes, counts', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 0, max: 11 }), { minLength: 1, maxLength: 12 }),
        fc.array(fc.integer({ min: 0, max: BUCKET_MS - 1 }), { minLength: 1, maxLength: 10 }),
        fc.nat(),
        (slots, ats, skip) => {
          const buckets = [...slots].sort((a, b) => a - b).map((s) => bucketAt(HOUR + s * BUCKET_MS, ats, s));
          const shape = shapeOf(buckets[0]!.fields);
          const data = encodeChunk(buckets.map((b) => packed(shape, b)));
          expect(decodeChunk(data, buckets[0]!.start, 3, 7, shape)).toEqual(buckets);
          // The times alone, without the shape.
          const c = openChunk(data, buckets[0]!.start);
          expect([c.starts, c.ats, c.seens]).toEqual([buckets.map((b) => b.start), buckets.map((b) => b.at), buckets.map((b) => b.seenAt)]);
          // Any bucket after reading past the ones before it, then read past the rest to the end.
          const k = skip % buckets.length;
          for (let i = 0; i < k; i++) skipBucket(c, shape);
          expect(nextBucket(c, 3, 7, shape)).toEqual(buckets[k]);
          while (c.next < buckets.length) skipBucket(c, shape);
          expect(c.values.done).toBe(true);
          expect(() => skipBucket(c, shape)).toThrow(/past its last bucket/);
        },
      ),
      { numRuns: 300, seed: 7 },
    );
  });

  it('reads past and back any value a bucket packs: doubles, times, amounts, extremes in full, booleans, null', () => {
    const value = fc.oneof(
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.integer({ min: -1e9, max: 1e9 }).map((i) => i / 1e6),
      fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 }),
      fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }).map((x) => x.toString()),
      fc.constantFrom('-0', true, false, null),
    );
    fc.assert(
      fc.property(fc.array(fc.array(fc.tuple(value, value), { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 12 }), fc.nat(), (slots, skip) => {
        const buckets = slots.map((rows, s) =>
          rows
            .map(([a, b], i) => bucketOf({ at: HOUR + s * BUCKET_MS + i, seenAt: HOUR + s * BUCKET_MS + i, poll: 1, shape: 2, fields: JSON.parse(JSON.stringify({ a, b })) as Record<string, unknown> }))
            .reduce(mergeBuckets),
        );
        const shape = shapeOf({ a: 0, b: 0 }); // every value here is packed
        const data = encodeChunk(buckets.map((x) => packed(shape, x)));
        expect(decodeChunk(data, HOUR, 1, 2, shape)).toEqual(buckets);
        const c = openChunk(data, HOUR);
        const k = skip % buckets.length;
        for (let i = 0; i < k; i++) skipBucket(c, shape);
        expect(nextBucket(c, 1, 2, shape)).toEqual(buckets[k]);
        while (c.next < buckets.length) skipBucket(c, shape);
        expect(c.values.done).toBe(true);
      }),
      { numRuns: 500, seed: 11 },
    );
  });

  it('deflates an hour of buckets when that is smaller, and keeps a lone small bucket plain', () => {
    const hour = Array.from({ length: 12 }, (_, s) => bucketAt(HOUR + s * BUCKET_MS, [15_000, 45_000, 75_000, 105_000], s));
    const shape = shapeOf(hour[0]!.fields);
    const parts = hour.map((b) => packed(shape, b));
    const whole = encodeChunk(parts);
    const plainSize = 2 + parts.reduce((n, p) => n + p.vals.length + 8, 0);
    expect(whole[0]).toBe(1); // deflated
    expect(whole.length).toBeLessThan(plainSize * 0.8);
    expect(decodeChunk(whole, HOUR, 3, 7, shape)).toEqual(hour);
    const lone = encodeChunk(parts.slice(0, 1));
    expect(lone[0]).toBe(0); // plain
    expect(decodeChunk(lone, HOUR, 3, 7, shape)).toEqual(hour.slice(0, 1));
  });

  it('halves a chunk larger than a quarter page, down to a bucket, none lost and in order', () => {
    const hour = Array.from({ length: 12 }, (_, s) => bucketAt(HOUR + s * BUCKET_MS, [15_000, 45_000, 75_000, 105_000], s));
    const shape = shapeOf(hour[0]!.fields);
    const parts = hour.map((b) => packed(shape, b));
    expect(encodeChunks(parts).map((c) => c.count)).toEqual([12]); // small enough whole
    const whole = encodeChunk(parts).length;
    for (const max of [whole - 1, Math.floor(whole / 3), 1]) {
      const chunks = encodeChunks(parts, max);
      expect(chunks.length).toBeGreaterThan(1);
      for (const c of chunks) expect(c.data.length <= max || c.count === 1, `${c.count} buckets in ${c.data.length} bytes`).toBe(true);
      expect(chunks.flatMap((c) => decodeChunk(c.data, c.first, 3, 7, shape))).toEqual(hour);
    }
    expect(encodeChunks(parts, 1).map((c) => c.count)).toEqual(hour.map(() => 1));
    expect(CHUNK_MAX_BYTES * 4).toBeLessThan(4096 - 8 - 4 * 30);
  });

  it('refuses buckets out of order or outside one hour, and a chunk it cannot read', () => {
    const shape = shapeOf(bucketAt(HOUR, [0], 0).fields);
    const at = (start: number) => packed(shape, bucketAt(start, [1_000], 0));
    expect(() => encodeChunk([at(HOUR + BUCKET_MS), at(HOUR)])).toThrow(/order or span/);
    expect(() => encodeChunk([at(HOUR), at(HOUR)])).toThrow(/order or span/);
    expect(() => encodeChunk([at(HOUR + 11 * BUCKET_MS), at(HOUR + CHUNK_MS)])).toThrow(/order or span/);
    const good = encodeChunk([at(HOUR)]);
    // Its body plain (a chunk this small may have been deflated), then with a byte too many.
    const body = good[0] === 1 ? inflateRawSync(good.subarray(1)) : good.subarray(1);
    expect(decodeChunk(Buffer.concat([Buffer.of(0), body]), HOUR, 3, 7, shape)).toEqual(decodeChunk(good, HOUR, 3, 7, shape));
    expect(() => decodeChunk(Buffer.concat([Buffer.of(0), body, Buffer.of(0)]), HOUR, 3, 7, shape)).toThrow(/past its last bucket/);
    expect(() => decodeChunk(Buffer.from([9, ...good.subarray(1)]), HOUR, 3, 7, shape)).toThrow(/unknown form 9/);
    expect(() => decodeChunk(Buffer.alloc(0), HOUR, 3, 7, shape)).toThrow(/empty/);
  });
});

describe('chunkRuns', () => {
  it('starts a new chunk where the hour, the poll or the shape changes', () => {
    const b = (start: number, poll = 1, shape = 1) => ({ start, poll, shape });
    const runs = chunkRuns([b(HOUR), b(HOUR + BUCKET_MS), b(HOUR + 2 * BUCKET_MS, 2), b(HOUR + 3 * BUCKET_MS, 2, 5), b(HOUR + 4 * BUCKET_MS, 2, 5), b(HOUR + CHUNK_MS, 2, 5)]);
    expect(runs.map((r) => r.map((x) => (x.start - HOUR) / BUCKET_MS))).toEqual([[0, 1], [2], [3, 4], [12]]);
    expect(chunkRuns([])).toEqual([]);
  });
});
