/** Schema version 2: alert state (one row per fingerprint) and every alert transition. */
import type { Migration } from '../store/migrations.js';

/**
 * Version 2.
 * - `alerts`: the current state of each (rule, entity) pair that ever left `inactive`, the {@link Alert} fields with
 *   labels, annotations and changes as JSON, plus `cleared_at` (lifecycle bookkeeping for keep_firing_for).
 * - `alert_events`: every transition (pending, firing, resolved, flapping, settled, cancelled) with the alert as it
 *   was then, for history, `lookout alerts` and the notification outbox.
 */
export const alertsMigration = {
  version: 2,
  name: 'alerts_and_alert_events',
  up: `
CREATE TABLE alerts (
  fingerprint TEXT PRIMARY KEY,
  rule TEXT NOT NULL,
  kind TEXT NOT NULL,
  entity TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('inactive', 'pending', 'firing', 'resolved')),
  flapping INTEGER NOT NULL DEFAULT 0 CHECK (flapping IN (0, 1)),
  severity TEXT NOT NULL,
  labels TEXT NOT NULL,
  annotations TEXT NOT NULL,
  value REAL,
  threshold REAL,
  previous_value REAL,
  peak REAL,
  data_at INTEGER,
  block INTEGER,
  pending_since INTEGER,
  firing_since INTEGER,
  resolved_at INTEGER,
  last_eval_at INTEGER NOT NULL,
  last_notified_at INTEGER,
  absent_polls INTEGER NOT NULL DEFAULT 0,
  changes TEXT NOT NULL DEFAULT '[]',
  cleared_at INTEGER
) WITHOUT ROWID;
CREATE UNIQUE INDEX alerts_rule_entity ON alerts (rule, entity);
CREATE INDEX alerts_live ON alerts (state) WHERE state IN ('pending', 'firing') OR flapping = 1;

CREATE TABLE alert_events (
  id INTEGER PRIMARY KEY,
  fingerprint TEXT NOT NULL,
  rule TEXT NOT NULL,
  entity TEXT NOT NULL,
  type TEXT NOT NULL CHECK (type IN ('pending', 'firing', 'resolved', 'flapping', 'settled', 'cancelled')),
  at INTEGER NOT NULL,
  alert TEXT NOT NULL
);
CREATE INDEX alert_events_fingerprint ON alert_events (fingerprint, id);
CREATE INDEX alert_events_at ON alert_events (at);
`,
} satisfies Migration;
