/** A small key/value table for the store's own bookkeeping ("last pruned at", ...). */
import type Database from 'better-sqlite3';
import type { Clock } from '../clock.js';

/** Get and set string values by key; use the caller's transaction when there is one. */
export interface MetaRepo {
  get(key: string): string | undefined;
  set(key: string, value: string): void;
  delete(key: string): void;
  /** The value parsed as a number, undefined when absent or not numeric. */
  getNumber(key: string): number | undefined;
}

/** Builds the meta repository over an open, migrated database. */
export function createMetaRepo(db: Database.Database, clock: Clock): MetaRepo {
  const getStmt = db.prepare<[string], { value: string }>(`SELECT value FROM meta WHERE key = ?`);
  const setStmt = db.prepare(
    `INSERT INTO meta (key, value, updated_at) VALUES (?, ?, ?)
     ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
  );
  const deleteStmt = db.prepare(`DELETE FROM meta WHERE key = ?`);
  const get = (key: string): string | undefined => getStmt.get(key)?.value;
  return {
    get,
    set: (key, value) => void setStmt.run(key, value, clock.now()),
    delete: (key) => void deleteStmt.run(key),
    getNumber: (key) => {
      const v = get(key);
      if (v === undefined || v.trim() === '') return undefined;
      const n = Number(v);
      return Number.isFinite(n) ? n : undefined;
    },
  };
}
