/** Schema version 6: a message remembers how many of its posts the receiver accepted. */
import type { Migration } from '../store/migrations.js';

/**
 * Version 6. `notify_messages` gains `parts_sent`: a Slack group too long for one post goes out as several, and a
 * retry (part 2 got a 500) or a restart resumes after the last part Slack accepted instead of reposting part 1.
 */
export const partsSentMigration = {
  version: 6,
  name: 'notify_messages_parts_sent',
  up: `ALTER TABLE notify_messages ADD COLUMN parts_sent INTEGER NOT NULL DEFAULT 0;`,
} satisfies Migration;
