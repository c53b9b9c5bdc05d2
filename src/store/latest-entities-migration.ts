/** Schema version 10: the latest reading is history's newest; what is kept per entity is which poll returned it last. */
import type Database from 'better-sqlite3';
import type { Migration } from './migrations.js';
import { createLatestKeeper } from './readings.js';
import type { ReadingKind } from '../model.js';

/**
 * Version 10. `latest_readings` held each entity's newest reading, packed: every poll rewrote every entity's row (a
 * second statement per reading beside the history insert, ~16% of a save of 10,000 markets, and 50,000 updates per
 * positions poll whose readings mostly did not change), while no code but tests read the values back — only which poll
 * returned each entity last (for the entities a poll no longer returns). The values are in history already: every
 * reading that changed is a history row. So `latest_entities` keeps the entity (its `history_entities` id) and the
 * poll (`history_polls` id), written only when that changes; the latest reading is history's newest, raw or bucketed.
 * Where pruning takes an entity's newest stored reading while the entity is still current, the reading moves to
 * `latest_kept` first. Every latest reading of the old table stays answerable: one with no history left (pruned) goes
 * to `latest_kept` here (test/store-migration.test.ts).
 */
export const latestEntitiesMigration = {
  version: 10,
  name: 'latest_entities',
  up: `
CREATE TABLE latest_entities (
  entity INTEGER PRIMARY KEY,
  poll INTEGER NOT NULL
);
CREATE INDEX latest_entities_poll ON latest_entities (poll, entity);
CREATE TABLE latest_kept (
  entity INTEGER PRIMARY KEY,
  seen_at INTEGER NOT NULL,
  at INTEGER NOT NULL,
  poll INTEGER NOT NULL,
  shape INTEGER NOT NULL,
  vals BLOB NOT NULL
);
`,
  run(db: Database.Database) {
    const keep = createLatestKeeper(db);
    // In pages: better-sqlite3 cannot write on a connection while a statement of it is still being read.
    const page = db.prepare<[number], { id: number; kind: ReadingKind; entity: string; at: number; shape: number; vals: Buffer; poll: string; updated_at: number }>(
      `SELECT id, kind, entity, at, shape, vals, poll, updated_at FROM latest_readings WHERE id > ? ORDER BY id LIMIT 5000`,
    );
    for (let rows = page.all(0); rows.length > 0; rows = page.all(rows[rows.length - 1]!.id)) {
      for (const r of rows) keep(r);
    }
    db.exec(`DROP TABLE latest_readings;`);
  },
} satisfies Migration;
