/**
 * Seeded, stateless randomness: every generated value is a pure function of (seed, keys),
 * so the world can be computed lazily, in any order, and is the same on every run.
 */

/** A 32-bit integer hash of a seed and any number of integer or string keys (murmur3-style mixing). */
export function hash32(seed: number, ...keys: (number | string)[]): number {
  let h = (seed ^ 0x9e3779b9) >>> 0;
  const mix = (k: number) => {
    k = Math.imul(k, 0xcc9e2d51);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, 0x1b873593);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) >>> 0;
  };
  for (const key of keys) {
    if (typeof key === 'number') {
      mix(key | 0);
      mix(Math.floor(key / 4294967296) | 0);
    } else {
      for (let i = 0; i < key.length; i++) mix(key.charCodeAt(i));
      mix(key.length);
    }
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A uniform number in [0, 1) determined by (seed, keys). */
export function rand01(seed: number, ...keys: (number | string)[]): number {
  return hash32(seed, ...keys) / 4294967296;
}

/** A uniform number in [lo, hi) determined by (seed, keys). */
export function randRange(lo: number, hi: number, seed: number, ...keys: (number | string)[]): number {
  return lo + (hi - lo) * rand01(seed, ...keys);
}

/** The mulberry32 generator: a sequential PRNG for code that draws many values in a row. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'));

/** A lower-case hex string of `chars` digits determined by (seed, keys): addresses, ids. */
export function hexOf(chars: number, seed: number, ...keys: (number | string)[]): string {
  let a = hash32(seed, ...keys);
  let out = '';
  while (out.length < chars) {
    // mulberry32 steps, inlined: this runs for every address of a 10,000-market world.
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    t = (t ^ (t >>> 14)) >>> 0;
    out += (HEX[t >>> 24] as string) + HEX[(t >>> 16) & 255] + HEX[(t >>> 8) & 255] + HEX[t & 255];
  }
  return out.length === chars ? out : out.slice(0, chars);
}

/** A sequential generator seeded by (seed, keys): draw the attributes of one item in a fixed order. */
export function streamOf(seed: number, ...keys: (number | string)[]): () => number {
  return mulberry32(hash32(seed, ...keys));
}

/** A uniform number in [lo, hi) from a draw in [0, 1). */
export function between(lo: number, hi: number, u: number): number {
  return lo + (hi - lo) * u;
}

/** An EVM-style address (0x + 40 hex) determined by (seed, keys). */
export function addressOf(seed: number, ...keys: (number | string)[]): string {
  return '0x' + hexOf(40, seed, ...keys);
}

/** Picks one element of a non-empty list by a uniform draw in [0, 1). */
export function pick<T>(items: readonly T[], u: number): T {
  return items[Math.min(items.length - 1, Math.floor(u * items.length))] as T;
}

/** Picks one element of a non-empty list by weight, using a uniform draw in [0, 1). */
export function pickWeighted<T>(items: readonly (readonly [T, number])[], u: number): T {
  let total = 0;
  for (const [, w] of items) total += w;
  let x = u * total;
  for (const [item, w] of items) {
    if (x < w) return item;
    x -= w;
  }
  return (items[items.length - 1] as readonly [T, number])[0];
}

/**
 * An exact decimal integer string of `value × 10^exp` (value a finite non-negative number),
 * keeping about 15 significant digits: for base-unit amounts and Morpho-scaled prices beyond 2^53.
 */
export function scaledInteger(value: number, exp: number): string {
  if (!(value > 0)) return '0';
  const digits = 15 - Math.ceil(Math.log10(value));
  const shift = Math.min(digits, exp);
  const mantissa = BigInt(Math.round(value * 10 ** shift));
  const rest = exp - shift;
  return (rest >= 0 ? mantissa * 10n ** BigInt(rest) : mantissa / 10n ** BigInt(-rest)).toString();
}
