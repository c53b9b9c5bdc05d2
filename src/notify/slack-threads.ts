/** The Slack bot mode's record of its parent messages: one row per notifier and incident, in `notify_slack_threads`. */
import type Database from 'better-sqlite3';
import type { MessageAlert } from './message.js';

/** The parent message of one incident: where it is, and the alerts it shows now. */
export interface SlackThread {
  notifier: string;
  incident: string;
  groupKey: string;
  /** The channel ID Slack answered with (chat.update needs the ID, not a #name). */
  channel: string;
  ts: string;
  alerts: MessageAlert[];
}

interface ThreadRow {
  notifier: string;
  incident: string;
  group_key: string;
  channel: string;
  ts: string;
  alerts: string;
}

/** Statements over `notify_slack_threads`; each write commits at once (or joins the caller's transaction). */
export class SlackThreadStore {
  /** Prepares nothing up front: the notifier is built before a test or tool may have migrated `db`. */
  constructor(private readonly db: Database.Database) {}

  /** The parent of `incident` for `notifier`, if one was posted. */
  get(notifier: string, incident: string): SlackThread | undefined {
    const r = this.db.prepare(`SELECT * FROM notify_slack_threads WHERE notifier = ? AND incident = ?`).get(notifier, incident) as ThreadRow | undefined;
    return r && { notifier: r.notifier, incident: r.incident, groupKey: r.group_key, channel: r.channel, ts: r.ts, alerts: JSON.parse(r.alerts) as MessageAlert[] };
  }

  /**
   * Records a newly posted parent (a first post, or a new one after a person deleted the old). Earlier incidents of
   * the same group are over by now (a group's messages go out in order), so their rows go.
   */
  posted(t: SlackThread, now: number): void {
    this.db.transaction(() => {
      this.db.prepare(`DELETE FROM notify_slack_threads WHERE notifier = ? AND group_key = ? AND incident != ?`).run(t.notifier, t.groupKey, t.incident);
      this.db
        .prepare(
          `INSERT INTO notify_slack_threads (notifier, incident, group_key, channel, ts, alerts, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (notifier, incident) DO UPDATE SET channel = excluded.channel, ts = excluded.ts, alerts = excluded.alerts, updated_at = excluded.updated_at`,
        )
        .run(t.notifier, t.incident, t.groupKey, t.channel, t.ts, JSON.stringify(t.alerts), now, now);
    })();
  }

  /** Records the alerts the parent shows after an edit. */
  shows(notifier: string, incident: string, alerts: readonly MessageAlert[], now: number): void {
    this.db.prepare(`UPDATE notify_slack_threads SET alerts = ?, updated_at = ? WHERE notifier = ? AND incident = ?`).run(JSON.stringify(alerts), now, notifier, incident);
  }

  /** Forgets a resolved incident: the group's next firing starts a new parent. */
  closed(notifier: string, incident: string): void {
    this.db.prepare(`DELETE FROM notify_slack_threads WHERE notifier = ? AND incident = ?`).run(notifier, incident);
  }
}
