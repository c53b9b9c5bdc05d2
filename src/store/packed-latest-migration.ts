/** Schema version 9: the latest reading per entity in the packed form history rows use. */
import type Database from 'better-sqlite3';
import type { Migration } from './migrations.js';
import { createLatestImporter } from './readings.js';
import type { ReadingKind } from '../model.js';

/**
 * Version 9. `latest_readings` held each entity's newest reading as labels and fields JSON (about 1,300 bytes for a
 * market): every poll rewrote 13 MB of it at SPEC §8 scale, a JSON text built per reading to do so. It now holds the
 * reading as history does: a shape id (`history_shapes`: labels, keys, the values that are not numbers, the
 * unreadable map) and the packed values (src/store/codec.ts), about 100 bytes. Every row is converted, none dropped
 * (test/store-migration.test.ts).
 */
export const packedLatestMigration = {
  version: 9,
  name: 'latest_readings_packed',
  up: `
ALTER TABLE latest_readings RENAME TO latest_readings_v8;
DROP INDEX IF EXISTS latest_readings_key;
DROP INDEX IF EXISTS latest_readings_poll;
CREATE TABLE latest_readings (
  id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL,
  entity TEXT NOT NULL,
  at INTEGER NOT NULL,
  shape INTEGER NOT NULL,
  vals BLOB NOT NULL,
  poll TEXT NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX latest_readings_key ON latest_readings (kind, entity);
CREATE INDEX latest_readings_poll ON latest_readings (poll, kind, entity);
`,
  run(db: Database.Database) {
    const write = createLatestImporter(db);
    // In pages: better-sqlite3 cannot write on a connection while a statement of it is still being read.
    const page = db.prepare<[number], { id: number; kind: ReadingKind; entity: string; at: number; labels: string; fields: string; poll: string; updated_at: number }>(
      `SELECT id, kind, entity, at, labels, fields, poll, updated_at FROM latest_readings_v8 WHERE id > ? ORDER BY id LIMIT 5000`,
    );
    for (let rows = page.all(0); rows.length > 0; rows = page.all(rows[rows.length - 1]!.id)) {
      for (const r of rows) {
        write({ ...r, labels: JSON.parse(r.labels) as Record<string, string>, fields: JSON.parse(r.fields) as Record<string, unknown> });
      }
    }
    db.exec(`DROP TABLE latest_readings_v8;`);
  },
} satisfies Migration;
