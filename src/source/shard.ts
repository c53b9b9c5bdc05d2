/**
 * Sharding (SPEC §8): replicas split markets and wallets by rendezvous (highest-random-weight) hashing. Each key
 * is owned by the replica whose (key, replica) weight is highest, so going from n to n+1 replicas moves only the
 * keys the new replica wins — about 1/(n+1) of them — and no key moves between the replicas that stay. (FNV-1a
 * modulo n, used before, moved about three quarters of all keys from 3 to 4 replicas.)
 */

/** The replica's share: the keys whose highest-weight replica is `index` of `total`. */
export interface Shard {
  index: number;
  total: number;
}

/** 32-bit FNV-1a of a string's UTF-16 code units: stable across processes, versions and platforms. */
export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** MurmurHash3's 32-bit finalizer: every input bit affects every output bit. */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The weight of `key` (its FNV-1a hash) on replica `i`. */
function weight(keyHash: number, i: number): number {
  return fmix32(keyHash ^ fmix32(Math.imul(i + 1, 0x9e3779b1)));
}

/** The replica (0 … total−1) that owns `key`. */
export function ownerOf(key: string, total: number): number {
  const h = fnv1a(key);
  let best = 0;
  let bestWeight = -1;
  for (let i = 0; i < total; i++) {
    const w = weight(h, i);
    if (w > bestWeight) {
      best = i;
      bestWeight = w;
    }
  }
  return best;
}

/** Whether `key` belongs to this replica; everything does when there is no shard (or only one). */
export function inShard(key: string, shard: Shard | undefined): boolean {
  if (!shard || shard.total <= 1) return true;
  return ownerOf(key, shard.total) === shard.index;
}

/**
 * The key a reading is sharded by: its wallet when it has one (a wallet's positions, assets and
 * holdings stay on one replica), else its entity (market_id, network/code, organization).
 */
export function shardKey(r: { entity: string; labels: Record<string, string> }): string {
  return r.labels.wallet ?? r.entity;
}
