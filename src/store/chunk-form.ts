/**
 * What sealed chunks (buckets: src/store/bucket-chunks.ts, raw rows: src/store/raw-chunks.ts) share: the hour a chunk
 * covers, and the outer form, a first byte saying how the rest is stored, plain or deflated (raw deflate, chosen where
 * it is smaller). Pure.
 */
import { deflateRawSync, inflateRawSync } from 'node:zlib';

/**
 * Width of the time a chunk covers, ms: a bucket chunk's buckets start within one such aligned span, a raw chunk's
 * rows were stored within one.
 */
export const CHUNK_MS = 3_600_000;

/** The start of the span holding time `t`. */
export const chunkStart = (t: number): number => Math.floor(t / CHUNK_MS) * CHUNK_MS;

const PLAIN = 0;
const DEFLATED = 1;

/** `plain` (whose first byte is reserved for the form: written here) as stored: deflated when that is smaller. */
export function sealBody(plain: Buffer): Buffer {
  plain[0] = PLAIN;
  const packed = deflateRawSync(plain.subarray(1));
  if (packed.length + 1 >= plain.length) return plain;
  return Buffer.concat([Buffer.of(DEFLATED), packed]);
}

/** The body of a stored chunk (without its form byte); `what` names the chunk in errors. */
export function openBody(data: Uint8Array, what: string): Uint8Array {
  if (data.length === 0) throw new RangeError(`empty ${what}`);
  if (data[0] === DEFLATED) return inflateRawSync(data.subarray(1));
  if (data[0] === PLAIN) return data.subarray(1);
  throw new RangeError(`${what} of unknown form ${data[0]}`);
}
