/**
 * Small lookup tables that give a repeated text (an entity, a poll's name, a reading's shape) a short integer id, so a
 * history row carries a 1–3 byte number instead of the text. Ids are cached in memory; a transaction that rolls back
 * can take a freshly allocated id with it, so the store calls {@link Dictionary.forget} whenever one does.
 */
import { hash } from 'node:crypto';
import type Database from 'better-sqlite3';

/** A text ↔ id table. */
export interface Dictionary<T> {
  /** The id of `key`, allocating one when it is new (a write: call inside the caller's transaction); `text` is the value as stored. */
  idOf(key: string, text: () => string): number;
  /**
   * {@link idOf} of the key `key()` gives, cached under `cacheKey`, a digest the caller knows to determine that key
   * (src/store/shape-key.ts): a hit builds no key text. It must be a digest of another text than any key (a key's
   * own digest is what idOf caches under with `cacheByDigest`).
   */
  idOfCached(cacheKey: string, key: () => string, text: (key: string) => string): number;
  /** The id cached under `cacheKey` by {@link idOfCached}, if it is (a lookup only: no key built, nothing written). */
  cachedId(cacheKey: string): number | undefined;
  /** The id of `key` when it has one (no write). */
  find(key: string): number | undefined;
  /** The value stored under `id`, or undefined for an unknown id. */
  valueOf(id: number): T | undefined;
  /** Drops the caches (after a rollback). */
  forget(): void;
}

const CACHE_LIMIT = 100_000;

/**
 * A dictionary over `table (id INTEGER PRIMARY KEY, hash TEXT UNIQUE, value TEXT)`: rows are found by a digest of
 * their key and hold the value as JSON text (`decode` turns it back). With `cacheByDigest` the id cache is keyed by
 * its SHA-256 digest instead of the key itself: for long keys (a reading's shape, ~500 characters, one per
 * entity: 35 MB of heap at SPEC §8 scale) memory matters more than the digest each lookup then costs (~1.5 µs).
 */
export function hashedDictionary<T>(
  db: Database.Database,
  table: string,
  decode: (text: string) => T,
  opts: { cacheByDigest?: boolean; /** False: ids are not cached here (the caller caches them its own way). */ cacheIds?: boolean } = {},
): Dictionary<T> {
  const insert = db.prepare<[string, string]>(`INSERT OR IGNORE INTO ${table} (hash, value) VALUES (?, ?)`);
  const find = db.prepare<[string], { id: number }>(`SELECT id FROM ${table} WHERE hash = ?`);
  const get = db.prepare<[number], { value: string }>(`SELECT value FROM ${table} WHERE id = ?`);
  const ids = new Map<string, number>();
  const values = new Map<number, T>();
  // The one-shot hash: no Hash object per call (a quarter less time than createHash for a shape's ~500 characters).
  const hashOf = (key: string) => hash('sha256', key, 'base64url').slice(0, 22);
  // The cache's key with cacheByDigest: the whole digest as a flat 32-character string. The stored hash, 22 characters
  // cut from a 43, is a slice that keeps its 43-character parent alive: ~90 bytes an entry against 48.
  const digestOf = (key: string) => hash('sha256', key, 'binary'); // latin1: one byte a character
  const hashOfDigest = (digest: string) => Buffer.from(digest, 'binary').toString('base64url').slice(0, 22);
  const cacheIds = opts.cacheIds !== false;
  const remember = (key: string, id: number) => {
    if (!cacheIds) return id;
    if (ids.size >= CACHE_LIMIT) ids.clear();
    ids.set(key, id);
    return id;
  };
  const byDigest = opts.cacheByDigest === true;
  /** The id stored under hash `h`, inserting `text` when there is none. */
  const stored = (h: string, text: () => string) => {
    let row = find.get(h);
    if (!row) {
      insert.run(h, text());
      row = find.get(h)!;
    }
    return row.id;
  };
  return {
    idOf(key, text) {
      const cacheKey = byDigest ? digestOf(key) : key;
      const cached = ids.get(cacheKey);
      if (cached !== undefined) return cached;
      return remember(cacheKey, stored(byDigest ? hashOfDigest(cacheKey) : hashOf(key), text));
    },
    idOfCached(cacheKey, key, text) {
      const cached = ids.get(cacheKey);
      if (cached !== undefined) return cached;
      // Cached under `cacheKey` alone: one entry a shape (60,000 at SPEC §8 scale, within the cache's limit).
      const k = key();
      return remember(cacheKey, stored(hashOf(k), () => text(k)));
    },
    cachedId(cacheKey) {
      return ids.get(cacheKey);
    },
    find(key) {
      const cacheKey = byDigest ? digestOf(key) : key;
      const cached = ids.get(cacheKey);
      if (cached !== undefined) return cached;
      const row = find.get(byDigest ? hashOfDigest(cacheKey) : hashOf(key));
      return row ? remember(cacheKey, row.id) : undefined;
    },
    valueOf(id) {
      let v = values.get(id);
      if (v === undefined) {
        const row = get.get(id);
        if (!row) return undefined;
        v = decode(row.value);
        if (values.size >= CACHE_LIMIT) values.clear();
        values.set(id, v);
      }
      return v;
    },
    forget() {
      ids.clear();
      values.clear();
    },
  };
}

/** Ids of keys made of two texts (an entity's kind and name), the first from a small set. */
export interface PairIds {
  /** The id of (`a`, `b`), allocating one when it is new (a write: call inside the caller's transaction). */
  idOf(a: string, b: string): number;
  /** The id of (`a`, `b`) when it has one (no write). */
  find(a: string, b: string): number | undefined;
  /** Drops the cache (after a rollback). */
  forget(): void;
}

/**
 * A cache in front of `dict` (built with `cacheIds: false`) for keys made of two texts: by the first, then by the
 * second as it came. A save looks up every reading's entity; the key text (`kind`, a separator and the name) built
 * for each, flattened and hashed to find it in one map, cost ~1.4 µs a reading, twice the lookup of the name alone
 * (whose hash V8 computes once a string). `key` and `text` give the dictionary's key and stored value of a pair, for
 * what the cache does not hold. At most {@link CACHE_LIMIT} pairs are kept, as in the dictionary.
 */
export function pairIds<T>(dict: Dictionary<T>, key: (a: string, b: string) => string, text: (a: string, b: string) => string): PairIds {
  const byFirst = new Map<string, Map<string, number>>();
  let size = 0;
  const mapOf = (a: string) => {
    let m = byFirst.get(a);
    if (m === undefined) {
      m = new Map();
      byFirst.set(a, m);
    }
    return m;
  };
  const remember = (m: Map<string, number>, b: string, id: number) => {
    if (size >= CACHE_LIMIT) {
      for (const inner of byFirst.values()) inner.clear();
      size = 0;
    }
    m.set(b, id);
    size++;
    return id;
  };
  return {
    idOf(a, b) {
      const m = mapOf(a);
      return m.get(b) ?? remember(m, b, dict.idOf(key(a, b), () => text(a, b)));
    },
    find(a, b) {
      const m = mapOf(a);
      const cached = m.get(b);
      if (cached !== undefined) return cached;
      const id = dict.find(key(a, b));
      return id === undefined ? undefined : remember(m, b, id);
    },
    forget() {
      byFirst.clear();
      size = 0;
      dict.forget();
    },
  };
}
