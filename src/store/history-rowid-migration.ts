/** Schema version 5: readings (history and latest) as rowid tables, so a market's row fits on its page. */
import type { Migration } from './migrations.js';

/**
 * Version 5. `reading_history` was a `WITHOUT ROWID` table: its rows live in an index-style B-tree that keeps at
 * most about 1,000 bytes of a row on a 4 KB page, and a market reading (about 1,050 bytes with its fields JSON)
 * spilled onto an overflow page of its own — 4.7 KB on disk per row and most of a poll's write time
 * (docs/performance.md). As a rowid table the same row sits on a shared page; the old primary key becomes a
 * UNIQUE index (so `INSERT OR IGNORE` still keeps one row per revision) and the two time indexes carry the full key,
 * so the replay's keyset paging still reads them in order without a sort. `latest_readings` had the same layout and the
 * same spill (4.7 KB per market), and gets the same change.
 */
export const historyRowidMigration = {
  version: 5,
  name: 'readings_rowid',
  up: `
CREATE TABLE reading_history_v5 (
  id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL,
  entity TEXT NOT NULL,
  at INTEGER NOT NULL,
  seen_at INTEGER NOT NULL,
  fields TEXT NOT NULL,
  labelset TEXT NOT NULL,
  poll TEXT NOT NULL
);
INSERT INTO reading_history_v5 (kind, entity, at, seen_at, fields, labelset, poll)
  SELECT kind, entity, at, seen_at, fields, labelset, poll FROM reading_history ORDER BY at, kind, entity, seen_at, poll;
DROP TABLE reading_history;
ALTER TABLE reading_history_v5 RENAME TO reading_history;
CREATE UNIQUE INDEX reading_history_key ON reading_history (kind, entity, at, seen_at, poll);
CREATE INDEX reading_history_at ON reading_history (at, kind, entity, seen_at, poll);
CREATE INDEX reading_history_seen ON reading_history (seen_at, kind, entity, at, poll);

CREATE TABLE latest_readings_v5 (
  id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL,
  entity TEXT NOT NULL,
  at INTEGER NOT NULL,
  labels TEXT NOT NULL,
  fields TEXT NOT NULL,
  poll TEXT NOT NULL,
  updated_at INTEGER NOT NULL
);
INSERT INTO latest_readings_v5 (kind, entity, at, labels, fields, poll, updated_at)
  SELECT kind, entity, at, labels, fields, poll, updated_at FROM latest_readings ORDER BY kind, entity;
DROP TABLE latest_readings;
ALTER TABLE latest_readings_v5 RENAME TO latest_readings;
CREATE UNIQUE INDEX latest_readings_key ON latest_readings (kind, entity);
CREATE INDEX latest_readings_poll ON latest_readings (poll, kind, entity);
`,
} satisfies Migration;
