/** Schema version 12: full-resolution history of past hours as one chunk per entity and hour. */
import type { Migration } from './migrations.js';

/**
 * Version 12. A full-resolution history row was one row of `reading_history` (its key and row overhead about 30
 * bytes, its entry in `reading_history_entity` about 24, beside ~91 bytes of packed values: 151 bytes a market
 * reading). Rows of hours that are over now go into `reading_history_chunks`: one row per entity and hour of storage
 * time (src/store/raw-chunks.ts), its key and index entries shared by the hour's rows. `reading_history` stays for the
 * rows of the last hour or so; sealing (ReadingsRepo.sealHistory) moves them. Existing rows are not sealed here (two
 * days of them at SPEC §8 would hold the start-up for minutes in one transaction, with a WAL as big): they answer from
 * the head as before, and the daemon's turns seal them in the background, an entity's rows at a time, none dropped
 * (test/store-migration.test.ts).
 */
export const rawChunksMigration = {
  version: 12,
  name: 'raw_chunks',
  up: `
CREATE TABLE reading_history_chunks (
  id INTEGER PRIMARY KEY,
  entity INTEGER NOT NULL,
  first INTEGER NOT NULL, -- storage time of its first row; its hour is the chunk's
  last INTEGER NOT NULL, -- of its last row
  lo_at INTEGER NOT NULL, -- the oldest and newest time of its readings (vanished markers aside)
  hi_at INTEGER NOT NULL,
  n INTEGER NOT NULL, -- its readings (vanished markers aside)
  shapes TEXT NOT NULL, -- JSON array of the shape ids its readings use
  data BLOB NOT NULL
);
CREATE INDEX reading_history_chunks_first ON reading_history_chunks (first);
CREATE INDEX reading_history_chunks_entity ON reading_history_chunks (entity, hi_at);
`,
} satisfies Migration;
