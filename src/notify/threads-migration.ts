/** Schema version 7: where a Slack bot-mode notifier keeps the one message it edits per incident. */
import type { Migration } from '../store/migrations.js';

/**
 * Version 7. `notify_slack_threads`: per notifier and incident of a group (the group's `epoch`), the channel and `ts`
 * of the parent message Slack returned, and the alerts it shows, so later changes (and a restart) edit that message
 * and reply in its thread instead of posting a new one.
 */
export const slackThreadsMigration = {
  version: 7,
  name: 'notify_slack_threads',
  up: `
CREATE TABLE notify_slack_threads (
  notifier TEXT NOT NULL,
  incident TEXT NOT NULL,
  group_key TEXT NOT NULL,
  channel TEXT NOT NULL,
  ts TEXT NOT NULL,
  alerts TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (notifier, incident)
);
CREATE INDEX notify_slack_threads_group ON notify_slack_threads (notifier, group_key);
`,
} satisfies Migration;
