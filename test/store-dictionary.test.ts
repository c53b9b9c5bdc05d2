import { createHash } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { hashedDictionary, pairIds } from '../src/store/dictionary.js';
import { tempDirs } from './store-helpers.js';

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

/** A dictionary table in a real file, as the history tables are made. */
function openTable(): Database.Database {
  const db = new Database(join(dirs.make(), 'dict.db'));
  db.exec('CREATE TABLE shapes (id INTEGER PRIMARY KEY, hash TEXT NOT NULL UNIQUE, value TEXT NOT NULL)');
  return db;
}

/** The hash a row is stored under: the first 22 characters of the key's SHA-256 in base64url (what older versions wrote). */
const storedHash = (key: string) => createHash('sha256').update(key).digest('base64url').slice(0, 22);

describe('hashedDictionary', () => {
  it.each([false, true])('finds rows by the same stored hash whatever its cache is keyed by (cacheByDigest %s)', (cacheByDigest) => {
    const db = openTable();
    try {
      const long = JSON.stringify({ labels: { market_id: '0x' + 'ab'.repeat(32) }, keys: ['a', 'b'], note: 'é €' });
      // A row written before: by an older version, or by another connection.
      db.prepare('INSERT INTO shapes (hash, value) VALUES (?, ?)').run(storedHash(long), JSON.stringify(long));
      const dict = hashedDictionary<string>(db, 'shapes', (t) => JSON.parse(t) as string, { cacheByDigest });
      expect(dict.find(long)).toBe(1);
      expect(dict.idOf(long, () => 'never written')).toBe(1);
      // A new key is stored under its hash, found again from the cache and after it is dropped.
      const id = dict.idOf('other', () => JSON.stringify('other'));
      expect(id).toBe(2);
      expect(db.prepare('SELECT hash FROM shapes WHERE id = ?').pluck().get(id)).toBe(storedHash('other'));
      expect(dict.find('other')).toBe(2);
      dict.forget();
      expect(dict.find('other')).toBe(2);
      expect(dict.valueOf(2)).toBe('other');
      expect(dict.find('unknown')).toBeUndefined();
      expect(db.prepare('SELECT count(*) FROM shapes').pluck().get()).toBe(2);
    } finally {
      db.close();
    }
  });

  it('finds a row by a key it builds only on a cache miss, under the stored hash of that key', () => {
    const db = openTable();
    try {
      const dict = hashedDictionary<string>(db, 'shapes', (t) => JSON.parse(t) as string, { cacheByDigest: true });
      const existing = dict.idOf('a shape', () => JSON.stringify('a shape'));
      let built = 0;
      const key = (k: string) => () => (built++, k);
      // A miss builds the key, finds the row stored under the key's hash (or stores one), and caches the id under the cache key.
      expect(dict.idOfCached('cache key 1', key('a shape'), (k) => JSON.stringify(k))).toBe(existing);
      expect(dict.idOfCached('cache key 2', key('new shape'), (k) => JSON.stringify(k))).toBe(2);
      expect(built).toBe(2);
      expect(db.prepare('SELECT hash FROM shapes WHERE id = 2').pluck().get()).toBe(storedHash('new shape'));
      expect(dict.valueOf(2)).toBe('new shape');
      // A hit builds nothing.
      expect(dict.idOfCached('cache key 2', key('never built'), (k) => JSON.stringify(k))).toBe(2);
      expect(built).toBe(2);
      // The cache alone answers for a cache key it holds, and for no other (nor for a key's own text).
      expect(dict.cachedId('cache key 2')).toBe(2);
      expect(dict.cachedId('cache key 3')).toBeUndefined();
      expect(dict.cachedId('new shape')).toBeUndefined();
      // After a rollback's forget, the key is built again and finds the same row.
      dict.forget();
      expect(dict.cachedId('cache key 2')).toBeUndefined();
      expect(dict.idOfCached('cache key 2', key('new shape'), (k) => JSON.stringify(k))).toBe(2);
      expect(dict.find('new shape')).toBe(2);
      expect(db.prepare('SELECT count(*) FROM shapes').pluck().get()).toBe(2);
    } finally {
      db.close();
    }
  });

  it('gives pairs of texts their ids by the first, then the second (no cache of its own in the dictionary), and drops them all on forget', () => {
    const db = openTable();
    try {
      const dict = hashedDictionary<{ kind: string; entity: string }>(db, 'shapes', (t) => JSON.parse(t) as { kind: string; entity: string }, { cacheIds: false });
      const ids = pairIds(dict, (kind, entity) => `${kind}\u0000${entity}`, (kind, entity) => JSON.stringify({ kind, entity }));
      const m = ids.idOf('market', 'x');
      // The same name under another kind is another entity; the same pair is the same id, from the cache or the table.
      const p = ids.idOf('position', 'x');
      expect(p).not.toBe(m);
      expect(ids.idOf('market', 'x')).toBe(m);
      expect(ids.find('position', 'x')).toBe(p);
      expect(ids.find('position', 'y')).toBeUndefined();
      expect(dict.valueOf(p)).toEqual({ kind: 'position', entity: 'x' });
      // Stored under the hash of the dictionary's key for the pair, as the entity table's rows always were.
      expect(db.prepare('SELECT hash FROM shapes WHERE id = ?').pluck().get(p)).toBe(storedHash('position\u0000x'));
      // An id allocated in a transaction that rolls back is gone from the table: forget drops it from the cache too, and
      // the pair gets the table's next id, not the lost one.
      db.exec('BEGIN');
      const lost = ids.idOf('position', 'z');
      db.exec('ROLLBACK');
      ids.forget();
      expect(ids.find('position', 'z')).toBeUndefined();
      const again = ids.idOf('position', 'z');
      expect(db.prepare('SELECT value FROM shapes WHERE id = ?').pluck().get(again)).toBe(JSON.stringify({ kind: 'position', entity: 'z' }));
      expect(lost).toBe(again); // SQLite reuses the rowid the rollback freed: the cache must not hold it for another pair
      expect(ids.idOf('market', 'x')).toBe(m);
      // The dictionary itself caches no id (only the pairs do): a row gone from the table is gone for it at once.
      db.prepare('DELETE FROM shapes WHERE id = ?').run(m);
      expect(dict.find('market\u0000x')).toBeUndefined();
    } finally {
      db.close();
    }
  });
});
