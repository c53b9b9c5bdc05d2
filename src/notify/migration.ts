/** Schema version 3: the notification outbox, grouping state, messages (deliveries) and silences. */
import type { Migration } from '../store/migrations.js';

/** Tables of the notify pipeline and of silences; appended to the store's migration list as version 3. */
export const notifyMigration = {
  version: 3,
  name: 'notify_outbox_silences',
  up: `
CREATE TABLE notify_outbox (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  created_at INTEGER NOT NULL,
  event_type TEXT NOT NULL,
  event_at INTEGER NOT NULL,
  fingerprint TEXT NOT NULL,
  notifier TEXT NOT NULL,
  group_key TEXT NOT NULL,
  group_labels TEXT NOT NULL,
  timing TEXT NOT NULL,
  alert TEXT NOT NULL
);
CREATE TABLE notify_groups (
  group_key TEXT PRIMARY KEY,
  notifier TEXT NOT NULL,
  route TEXT NOT NULL,
  group_labels TEXT NOT NULL,
  timing TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  next_flush_at INTEGER NOT NULL,
  last_sent_at INTEGER,
  seq INTEGER NOT NULL DEFAULT 0,
  epoch TEXT NOT NULL
);
CREATE INDEX notify_groups_due ON notify_groups (next_flush_at);
CREATE TABLE notify_group_alerts (
  group_key TEXT NOT NULL REFERENCES notify_groups (group_key) ON DELETE CASCADE,
  fingerprint TEXT NOT NULL,
  state TEXT NOT NULL,
  alert TEXT NOT NULL,
  updated_at INTEGER NOT NULL,
  sent_state TEXT,
  muted TEXT,
  PRIMARY KEY (group_key, fingerprint)
);
CREATE INDEX notify_group_alerts_fp ON notify_group_alerts (fingerprint);
CREATE TABLE notify_messages (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  dedup_key TEXT NOT NULL UNIQUE,
  notifier TEXT NOT NULL,
  group_key TEXT NOT NULL,
  status TEXT NOT NULL,
  payload TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  last_attempt_at INTEGER,
  sent_at INTEGER,
  error TEXT
);
CREATE INDEX notify_messages_pending ON notify_messages (status, notifier, next_attempt_at);
CREATE INDEX notify_messages_group ON notify_messages (group_key, status);
CREATE TABLE silences (
  id TEXT PRIMARY KEY,
  matchers TEXT NOT NULL,
  starts_at INTEGER NOT NULL,
  ends_at INTEGER NOT NULL,
  author TEXT NOT NULL,
  comment TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX silences_ends ON silences (ends_at);
`,
} satisfies Migration;
