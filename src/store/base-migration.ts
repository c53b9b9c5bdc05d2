/** Schema version 1: the meta table, readings (latest per entity + history) and poll runs. */
import type { Migration } from './migrations.js';

/**
 * Version 1.
 * - `latest_readings`: the newest reading per (kind, entity), labels and fields inline as JSON.
 * - `reading_history`: one row per distinct (kind, entity, at); labels are not repeated per row but
 *   point to `reading_labelsets`, each distinct label set stored once under a digest of its JSON.
 * - `poll_runs`: one row per poll run; `poll_status`: a running summary per poll, so consecutive
 *   failures and the last success survive the pruning of old runs.
 */
export const baseMigration = {
  version: 1,
  name: 'readings_and_poll_runs',
  up: `
CREATE TABLE meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL,
  updated_at INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE latest_readings (
  kind TEXT NOT NULL,
  entity TEXT NOT NULL,
  at INTEGER NOT NULL,
  labels TEXT NOT NULL,
  fields TEXT NOT NULL,
  poll TEXT NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (kind, entity)
) WITHOUT ROWID;
CREATE INDEX latest_readings_poll ON latest_readings (poll);

CREATE TABLE reading_labelsets (
  hash TEXT PRIMARY KEY,
  labels TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE reading_history (
  kind TEXT NOT NULL,
  entity TEXT NOT NULL,
  at INTEGER NOT NULL,
  fields TEXT NOT NULL,
  labelset TEXT NOT NULL,
  poll TEXT NOT NULL,
  PRIMARY KEY (kind, entity, at)
) WITHOUT ROWID;
CREATE INDEX reading_history_at ON reading_history (at, kind, entity);

CREATE TABLE poll_runs (
  id INTEGER PRIMARY KEY,
  poll TEXT NOT NULL,
  kind TEXT NOT NULL,
  started_at INTEGER NOT NULL,
  finished_at INTEGER NOT NULL,
  ok INTEGER NOT NULL CHECK (ok IN (0, 1)),
  error TEXT,
  error_reason TEXT,
  rows INTEGER NOT NULL,
  rejected INTEGER NOT NULL,
  rejected_reasons TEXT
);
CREATE INDEX poll_runs_poll ON poll_runs (poll, id);
CREATE INDEX poll_runs_started ON poll_runs (started_at);

CREATE TABLE poll_status (
  poll TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  last_run_id INTEGER NOT NULL,
  last_success_at INTEGER,
  last_error TEXT,
  last_error_reason TEXT,
  last_error_at INTEGER,
  consecutive_failures INTEGER NOT NULL,
  runs INTEGER NOT NULL,
  failures INTEGER NOT NULL
) WITHOUT ROWID;
`,
} satisfies Migration;
