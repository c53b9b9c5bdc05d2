/** Sharding (SPEC §8): replicas split markets and wallets by a stable hash of their key. */

/** The replica's share: keep the keys whose hash mod `total` is `index`. */
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

/** Whether `key` belongs to this replica; everything does when there is no shard (or only one). */
export function inShard(key: string, shard: Shard | undefined): boolean {
  if (!shard || shard.total <= 1) return true;
  return fnv1a(key) % shard.total === shard.index;
}

/**
 * The key a reading is sharded by: its wallet when it has one (a wallet's positions, assets and
 * holdings stay on one replica), else its entity (market_id, network/code, organization).
 */
export function shardKey(r: { entity: string; labels: Record<string, string> }): string {
  return r.labels.wallet ?? r.entity;
}
