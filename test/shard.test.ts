/**
 * Minimal-movement sharding (SPEC §8), as properties over 100,000 keys of the shapes lookout shards by (market ids,
 * wallets): every key has exactly one owner among n replicas, shares are even, and going from n to n+1 replicas
 * moves at most 1/(n+1) + 2% of the keys — all of them to the new replica. FNV-1a modulo n (the hash before)
 * moved about 75% from 3 to 4, which the movement property refuses (shown in the last test).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fnv1a, inShard, ownerOf } from '../src/source/shard.js';

const KEYS = Array.from({ length: 100_000 }, (_, i) =>
  i % 2 === 0 ? `morpho-base-0x${(i * 2654435761 >>> 0).toString(16).padStart(40, '0')}` : `0x${(i * 40503 + 7).toString(16).padStart(40, 'a')}`,
);

/** The share of keys whose owner differs between `before` and `after`, and whether every moved key went to a new replica. */
function movement(owner: (key: string, total: number) => number, n: number): { moved: number; onlyToNew: boolean } {
  let moved = 0;
  let onlyToNew = true;
  for (const k of KEYS) {
    const a = owner(k, n);
    const b = owner(k, n + 1);
    if (a !== b) {
      moved++;
      if (b !== n) onlyToNew = false;
    }
  }
  return { moved: moved / KEYS.length, onlyToNew };
}

const fnvModulo = (key: string, total: number) => fnv1a(key) % total;

describe('rendezvous sharding', () => {
  it('every key is owned by exactly one of n replicas, with even shares', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 12 }), (n) => {
        const sizes = new Array<number>(n).fill(0);
        for (const k of KEYS.slice(0, 20_000)) {
          const owners = Array.from({ length: n }, (_, i) => i).filter((index) => inShard(k, { index, total: n }));
          expect(owners).toHaveLength(1);
          sizes[owners[0]!]!++;
        }
        // Each replica's share within 15% of 1/n.
        for (const s of sizes) expect(Math.abs(s / 20_000 - 1 / n)).toBeLessThan(0.15 / n);
      }),
      { numRuns: 12 },
    );
    expect(KEYS.every((k) => inShard(k, undefined) && inShard(k, { index: 0, total: 1 }))).toBe(true);
  });

  it.each([1, 2, 3, 4, 7, 15])('from %i to n+1 replicas moves at most 1/(n+1) + 2% of 100,000 keys, all to the new one', (n) => {
    const { moved, onlyToNew } = movement(ownerOf, n);
    expect(moved).toBeLessThanOrEqual(1 / (n + 1) + 0.02);
    expect(moved).toBeGreaterThan(1 / (n + 1) - 0.02);
    expect(onlyToNew).toBe(true);
  });

  it('is stable: the same owner in every process and version (known vectors)', () => {
    expect([0, 1, 2, 3].map((i) => ownerOf(`morpho-base-0x${'0'.repeat(39)}${i}`, 4))).toEqual([1, 0, 0, 1]);
  });

  it('the movement property refuses FNV-1a modulo n (the hash before): ~75% move from 3 to 4', () => {
    const { moved } = movement(fnvModulo, 3);
    expect(moved).toBeGreaterThan(0.7);
    expect(moved).toBeGreaterThan(1 / 4 + 0.02);
  });
});
