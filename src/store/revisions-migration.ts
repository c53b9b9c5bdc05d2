/** Schema version 4: reading history keeps every revision a poll saw, with when it saw it. */
import type { Migration } from './migrations.js';

/**
 * Version 4. `reading_history` gains `seen_at` (the time of the poll that stored the row) and keeps a new row
 * whenever a poll returns an entity differently from how that poll last returned it — also when the reading's own
 * time did not move (a benchmark day that becomes complete) or moved back (a benchmark whose newest day is days
 * old again). Version 1 kept only the first row per (kind, entity, at), so those changes were lost and a backtest
 * replayed the first version for the rest of the day. Rows kept from version 1 get `seen_at = at`.
 */
export const revisionsMigration = {
  version: 4,
  name: 'reading_history_revisions',
  up: `
CREATE TABLE reading_history_v4 (
  kind TEXT NOT NULL,
  entity TEXT NOT NULL,
  at INTEGER NOT NULL,
  seen_at INTEGER NOT NULL,
  fields TEXT NOT NULL,
  labelset TEXT NOT NULL,
  poll TEXT NOT NULL,
  PRIMARY KEY (kind, entity, at, seen_at, poll)
) WITHOUT ROWID;
INSERT INTO reading_history_v4 (kind, entity, at, seen_at, fields, labelset, poll)
  SELECT kind, entity, at, at, fields, labelset, poll FROM reading_history;
DROP TABLE reading_history;
ALTER TABLE reading_history_v4 RENAME TO reading_history;
CREATE INDEX reading_history_at ON reading_history (at, kind, entity);
CREATE INDEX reading_history_seen ON reading_history (seen_at, kind, entity);
`,
} satisfies Migration;
