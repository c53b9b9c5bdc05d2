/**
 * Schema version 13: an alert's row in two tables, by how often its columns change.
 *
 * In an incident every poll judges thousands of active alerts, and each one's value, data time, block, evaluation
 * time and annotations move while its state, labels and times stay. Updating those few columns in the one wide
 * `alerts` row rewrote all of it (~450 bytes, most of them labels): a third of the poll's SQLite time (issue 14, B4).
 * - `alert_standing`: what changes with a transition (state, flapping, labels, times, flap changes) or a
 *   notification (`last_notified_at`); the indexes are on it.
 * - `alert_moving`: what a judged reading moves (value, threshold, previous value, peak, data time, block, evaluation
 *   time, absent polls, annotations: they render the value) and `cleared_at`; ~100 bytes a row.
 * - `alerts` is a view joining them with the columns, names and order of the old table, so every reader (and an
 *   operator's `sqlite3` query) sees what it saw; deleting from it deletes both rows. Writes go to the tables
 *   (src/alerts/repo.ts), both rows of an alert always in the same transaction.
 */
import type { Migration } from '../store/migrations.js';

const STANDING = `fingerprint, rule, kind, entity, state, flapping, severity, labels, pending_since, firing_since, resolved_at,
  last_notified_at, changes`;
/**
 * The columns of `alert_moving` as schema 13 made them (schema 14 adds a row id: src/alerts/moving-id-migration.ts).
 * This and the two constants below are the text of released migrations (13 and 14): never edit them; a later schema
 * that changes the table or the view writes its own.
 */
export const MOVING = `fingerprint, value, threshold, previous_value, peak, data_at, block, last_eval_at, absent_polls, annotations, cleared_at`;

/** The types of the columns of `alert_moving` but its key, as schema 13 made them (schema 14 keeps them). */
export const MOVING_TYPES = `value REAL,
  threshold REAL,
  previous_value REAL,
  peak REAL,
  data_at INTEGER,
  block INTEGER,
  last_eval_at INTEGER NOT NULL,
  absent_polls INTEGER NOT NULL DEFAULT 0,
  annotations TEXT NOT NULL,
  cleared_at INTEGER`;

/**
 * The `alerts` view over both tables, with the old table's columns in their order, and its delete. Schema 14 makes
 * it again over its rebuilt `alert_moving`.
 */
export const ALERTS_VIEW = `
CREATE VIEW alerts AS
  SELECT s.fingerprint, s.rule, s.kind, s.entity, s.state, s.flapping, s.severity, s.labels, m.annotations, m.value,
    m.threshold, m.previous_value, m.peak, m.data_at, m.block, s.pending_since, s.firing_since, s.resolved_at,
    m.last_eval_at, s.last_notified_at, m.absent_polls, s.changes, m.cleared_at
  FROM alert_standing s JOIN alert_moving m ON m.fingerprint = s.fingerprint;
CREATE TRIGGER alerts_delete INSTEAD OF DELETE ON alerts BEGIN
  DELETE FROM alert_standing WHERE fingerprint = old.fingerprint;
  DELETE FROM alert_moving WHERE fingerprint = old.fingerprint;
END;
`;

/** Version 13; see the module comment. */
export const alertMovingMigration = {
  version: 13,
  name: 'alert_moving_columns',
  up: `
CREATE TABLE alert_standing (
  fingerprint TEXT PRIMARY KEY,
  rule TEXT NOT NULL,
  kind TEXT NOT NULL,
  entity TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('inactive', 'pending', 'firing', 'resolved')),
  flapping INTEGER NOT NULL DEFAULT 0 CHECK (flapping IN (0, 1)),
  severity TEXT NOT NULL,
  labels TEXT NOT NULL,
  pending_since INTEGER,
  firing_since INTEGER,
  resolved_at INTEGER,
  last_notified_at INTEGER,
  changes TEXT NOT NULL DEFAULT '[]'
) WITHOUT ROWID;
CREATE TABLE alert_moving (
  fingerprint TEXT PRIMARY KEY,
  ${MOVING_TYPES}
) WITHOUT ROWID;
INSERT INTO alert_standing (${STANDING}) SELECT ${STANDING} FROM alerts;
INSERT INTO alert_moving (${MOVING}) SELECT ${MOVING} FROM alerts;
DROP TABLE alerts;
CREATE UNIQUE INDEX alerts_rule_entity ON alert_standing (rule, entity);
CREATE INDEX alerts_live ON alert_standing (state) WHERE state IN ('pending', 'firing') OR flapping = 1;
${ALERTS_VIEW}`,
} satisfies Migration;
