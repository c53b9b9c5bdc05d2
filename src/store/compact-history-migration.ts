/** Schema version 8: compact reading history, and 5-minute buckets past `storage.raw_retention`. */
import type Database from 'better-sqlite3';
import type { Migration } from './migrations.js';
import { createHistoryImporter } from './readings.js';
import type { ReadingKind } from '../model.js';

/**
 * Version 8. `reading_history` held each reading's fields as JSON text (about 900 bytes for a market, 1,641 bytes a
 * row with its three indexes: 1.4 TB for 30 days at SPEC §8). It becomes a table of compact rows ordered by storage
 * time — entity, poll and shape as small ids (`history_entities`, `history_polls`, `history_shapes`, the last
 * replacing `reading_labelsets`), the values packed (src/store/codec.ts) — with one index by entity and time.
 * `reading_buckets` holds the 5-minute buckets that rows older than `storage.raw_retention` are folded into.
 * Every row of the old table is converted, none dropped (test/store-migration.test.ts).
 */
export const compactHistoryMigration = {
  version: 8,
  name: 'compact_history_and_buckets',
  up: `
ALTER TABLE reading_history RENAME TO reading_history_v7;
DROP INDEX IF EXISTS reading_history_key;
DROP INDEX IF EXISTS reading_history_at;
DROP INDEX IF EXISTS reading_history_seen;
CREATE TABLE history_entities (id INTEGER PRIMARY KEY, hash TEXT NOT NULL UNIQUE, value TEXT NOT NULL);
CREATE TABLE history_polls (id INTEGER PRIMARY KEY, hash TEXT NOT NULL UNIQUE, value TEXT NOT NULL);
CREATE TABLE history_shapes (id INTEGER PRIMARY KEY, hash TEXT NOT NULL UNIQUE, value TEXT NOT NULL);
CREATE TABLE reading_history (
  seen_at INTEGER NOT NULL,
  entity INTEGER NOT NULL,
  at INTEGER NOT NULL,
  poll INTEGER NOT NULL,
  shape INTEGER NOT NULL,
  vals BLOB NOT NULL,
  PRIMARY KEY (seen_at, entity, at, poll)
) WITHOUT ROWID;
CREATE INDEX reading_history_entity ON reading_history (entity, at, seen_at);
CREATE TABLE reading_buckets (
  entity INTEGER NOT NULL,
  start INTEGER NOT NULL,
  at INTEGER NOT NULL,
  seen_at INTEGER NOT NULL,
  poll INTEGER NOT NULL,
  shape INTEGER NOT NULL,
  n INTEGER NOT NULL,
  vals BLOB NOT NULL,
  PRIMARY KEY (start, entity)
) WITHOUT ROWID;
CREATE INDEX reading_buckets_entity ON reading_buckets (entity, start);
`,
  run(db: Database.Database) {
    const write = createHistoryImporter(db);
    // In pages: better-sqlite3 cannot write on a connection while a statement of it is still being read.
    const page = db.prepare<[number], { id: number; kind: ReadingKind; entity: string; at: number; seen_at: number; poll: string; fields: string; labels: string | null }>(
      `SELECT h.id, h.kind, h.entity, h.at, h.seen_at, h.poll, h.fields, l.labels
       FROM reading_history_v7 h LEFT JOIN reading_labelsets l ON l.hash = h.labelset WHERE h.id > ? ORDER BY h.id LIMIT 5000`,
    );
    for (let rows = page.all(0); rows.length > 0; rows = page.all(rows[rows.length - 1]!.id)) {
      for (const r of rows) {
        write({ ...r, labels: JSON.parse(r.labels ?? '{}') as Record<string, string>, fields: JSON.parse(r.fields) as Record<string, unknown> });
      }
    }
    db.exec(`DROP TABLE reading_history_v7; DROP TABLE reading_labelsets;`);
  },
} satisfies Migration;
