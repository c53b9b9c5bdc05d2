/**
 * Grouping stages over SQLite: `foldOutbox` moves outbox rows into per-(route, group, notifier) state;
 * `flushGroup` decides, when a group is due, whether a message goes out (new firing, new resolve,
 * repeat), after the silence and inhibition stages, and persists it with its dedup key before any send.
 */
import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { Alert } from '../model.js';
import { digest } from './labels.js';
import type { ValueUnit } from './format.js';
import { buildMessage, type MessageAlert, type MessageAlertStatus } from './message.js';
import type { GroupTiming } from './routing.js';
import { compareText } from '../text-format.js';

/** The shortest pause between two flushes of one group, whatever group_interval says. */
const MIN_INTERVAL = 1000;

interface OutboxRow {
  id: number;
  created_at: number;
  event_type: string;
  fingerprint: string;
  notifier: string;
  group_key: string;
  group_labels: string;
  timing: string;
  alert: string;
}

interface GroupRow {
  group_key: string;
  notifier: string;
  group_labels: string;
  timing: string;
  created_at: number;
  next_flush_at: number;
  last_sent_at: number | null;
  seq: number;
  epoch: string;
}

interface EntryRow {
  fingerprint: string;
  state: MessageAlertStatus;
  alert: string;
  sent_state: MessageAlertStatus | null;
  muted: string | null;
}

/** Folds every outbox row into group state, in one transaction; returns how many rows were folded. */
export function foldOutbox(db: Database.Database, now: number): number {
  const rows = db.prepare(`SELECT * FROM notify_outbox ORDER BY id LIMIT 5000`).all() as OutboxRow[];
  if (rows.length === 0) return 0;
  const getGroup = db.prepare(`SELECT * FROM notify_groups WHERE group_key = ?`);
  const insGroup = db.prepare(
    `INSERT INTO notify_groups (group_key, notifier, route, group_labels, timing, created_at, next_flush_at, seq, epoch)
     VALUES (?, ?, '', ?, ?, ?, ?, 0, ?)`,
  );
  const setTiming = db.prepare(`UPDATE notify_groups SET timing = ? WHERE group_key = ?`);
  const upsert = db.prepare(
    `INSERT INTO notify_group_alerts (group_key, fingerprint, state, alert, updated_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (group_key, fingerprint) DO UPDATE SET state = excluded.state, alert = excluded.alert, updated_at = excluded.updated_at`,
  );
  const elsewhere = db.prepare(
    `SELECT a.group_key FROM notify_group_alerts a JOIN notify_groups g ON g.group_key = a.group_key
     WHERE a.fingerprint = ? AND g.notifier = ?`,
  );
  const delEntry = db.prepare(`DELETE FROM notify_group_alerts WHERE group_key = ? AND fingerprint = ?`);
  const setResolved = db.prepare(`UPDATE notify_group_alerts SET state = 'resolved', alert = ?, updated_at = ? WHERE group_key = ? AND fingerprint = ?`);
  const delRow = db.prepare(`DELETE FROM notify_outbox WHERE id = ?`);
  const touched = new Set<string>();

  db.transaction(() => {
    for (const r of rows) {
      const alert = JSON.parse(r.alert) as Alert;
      const others = (elsewhere.all(r.fingerprint, r.notifier) as Array<{ group_key: string }>).map((x) => x.group_key);
      let state: MessageAlertStatus | 'remove' = 'remove';
      if (r.event_type === 'firing') state = 'firing';
      else if (r.event_type === 'flapping') state = 'flapping';
      else if (r.event_type === 'settled') state = alert.state === 'firing' ? 'firing' : 'resolved';
      else if (r.event_type === 'resolved') state = 'resolved';

      if (state === 'firing' || state === 'flapping') {
        for (const g of others) if (g !== r.group_key) {
          delEntry.run(g, r.fingerprint);
          touched.add(g);
        }
        const timing = JSON.parse(r.timing) as GroupTiming;
        if (!getGroup.get(r.group_key)) {
          insGroup.run(r.group_key, r.notifier, r.group_labels, r.timing, r.created_at, r.created_at + timing.group_wait, randomUUID());
        } else {
          setTiming.run(r.timing, r.group_key);
        }
        upsert.run(r.group_key, r.fingerprint, state, r.alert, now);
      } else if (state === 'resolved') {
        // A resolve follows its alert wherever it was grouped, even if routes changed since it fired.
        for (const g of others) setResolved.run(r.alert, now, g, r.fingerprint);
        for (const g of others) touched.add(g);
      } else {
        for (const g of others) delEntry.run(g, r.fingerprint);
        for (const g of others) touched.add(g);
      }
      touched.add(r.group_key);
      delRow.run(r.id);
    }
    const counts = db.prepare(
      `SELECT count(*) AS total,
              sum(state != 'resolved') AS active,
              sum(state = 'resolved' AND sent_state IN ('firing', 'flapping')) AS owed
       FROM notify_group_alerts WHERE group_key = ?`,
    );
    const delGroup = db.prepare(`DELETE FROM notify_groups WHERE group_key = ?`);
    const flushNow = db.prepare(`UPDATE notify_groups SET next_flush_at = MIN(next_flush_at, ?) WHERE group_key = ?`);
    for (const g of touched) {
      const c = counts.get(g) as { total: number; active: number | null; owed: number | null };
      if (c.total === 0) delGroup.run(g);
      // The whole group has resolved: its resolved message goes out at once, not after group_interval.
      else if ((c.active ?? 0) === 0 && (c.owed ?? 0) > 0) flushNow.run(now, g);
    }
  })();
  return rows.length;
}

/** What the flush stage needs to judge a group. */
export interface FlushContext {
  now: number;
  /** The silence stage: true when a silence in force mutes these labels. */
  isSilenced(labels: Record<string, string>): boolean;
  /** The inhibition stage: true when a firing source alert mutes this alert. */
  isInhibited(alert: Alert): boolean;
  /** The alerts firing now, by fingerprint (from the alert engine): refreshes repeats, drops alerts it forgot. */
  firingNow?: ReadonlyMap<string, Alert> | undefined;
  /** Called once when an alert that had something to say becomes muted. */
  onMuted(notifier: string, why: 'silenced' | 'inhibited'): void;
  /** The unit of an alert's values when its kind alone does not say (a `threshold` rule's field); frozen into the message. */
  unitOf?: ((alert: Alert) => ValueUnit | undefined) | undefined;
  /** The link to an alert's page, frozen into the message (from `server.external_url`). */
  linkOf?: ((alert: Alert) => string | undefined) | undefined;
}

/** The groups due for a flush at `now`. */
export function dueGroups(db: Database.Database, now: number): string[] {
  return (db.prepare(`SELECT group_key FROM notify_groups WHERE next_flush_at <= ? ORDER BY next_flush_at LIMIT 1000`).all(now) as Array<{ group_key: string }>).map(
    (r) => r.group_key,
  );
}

/** Flushes one due group in one transaction; returns the id of the message it persisted, if any. */
export function flushGroup(db: Database.Database, groupKey: string, ctx: FlushContext): number | undefined {
  return db.transaction((): number | undefined => {
    const g = db.prepare(`SELECT * FROM notify_groups WHERE group_key = ?`).get(groupKey) as GroupRow | undefined;
    if (!g || g.next_flush_at > ctx.now) return undefined;
    const timing = JSON.parse(g.timing) as GroupTiming;
    const entries = db.prepare(`SELECT fingerprint, state, alert, sent_state, muted FROM notify_group_alerts WHERE group_key = ?`).all(groupKey) as EntryRow[];
    const del = db.prepare(`DELETE FROM notify_group_alerts WHERE group_key = ? AND fingerprint = ?`);
    const update = db.prepare(`UPDATE notify_group_alerts SET alert = ?, sent_state = ?, muted = ? WHERE group_key = ? AND fingerprint = ?`);

    type Judged = { row: EntryRow; alert: Alert; muted: 'silenced' | 'inhibited' | null };
    const judged: Judged[] = [];
    for (const row of entries) {
      let alert = JSON.parse(row.alert) as Alert;
      if (row.state === 'firing' && ctx.firingNow && alert.kind !== 'watchdog') {
        const live = ctx.firingNow.get(row.fingerprint);
        if (!live) {
          // The engine no longer has it firing (rule removed, state reset): leave quietly.
          del.run(groupKey, row.fingerprint);
          continue;
        }
        alert = live;
      }
      const muted = ctx.isSilenced(alert.labels) ? 'silenced' : ctx.isInhibited(alert) ? 'inhibited' : null;
      judged.push({ row, alert, muted });
    }

    // As Alertmanager's notification pipeline decides (mute stage, then dedup against the notification log): muted
    // alerts leave the flush; what is left is compared with what the group's last message said. `sent_state` is
    // that log: the state each alert had in the last message, null for an alert the last message left out.
    const whenMuted = timing.send_resolved_when_muted ?? true;
    const announced = (j: Judged) => j.row.sent_state === 'firing' || j.row.sent_state === 'flapping';
    for (const j of judged) {
      // Going beyond Alertmanager (its issues #226, #2754): an announced alert that resolves while muted gets its RESOLVED.
      if (j.muted && whenMuted && j.row.state === 'resolved' && announced(j)) j.muted = null;
    }
    for (const j of judged) {
      const hadSay = j.row.state !== 'resolved' ? j.row.sent_state !== j.row.state : j.row.sent_state !== null;
      if (j.muted && j.row.muted !== j.muted && hadSay) ctx.onMuted(g.notifier, j.muted);
    }
    const heard = judged.filter((j) => j.muted === null);
    const active = heard.filter((j) => j.row.state !== 'resolved');
    const resolved = heard.filter((j) => j.row.state === 'resolved');
    const changed = active.filter((j) => j.row.sent_state !== j.row.state);
    let notify: boolean;
    if (heard.length === 0) notify = false; // every alert muted: nothing to say, and the log stays as it was
    else if (g.last_sent_at === null) notify = active.length > 0;
    else if (changed.length > 0) notify = true;
    else if (active.length === 0) notify = judged.some(announced); // all resolved: clear what the channel was told
    else if (timing.send_resolved && resolved.length > 0) notify = true;
    else notify = ctx.now - g.last_sent_at >= timing.repeat_interval;

    let messageId: number | undefined;
    let seq = g.seq;
    // A flapping alert is said once, then left out of repeats until it settles.
    const included = notify ? [...active.filter((j) => j.row.state === 'firing' || j.row.sent_state !== j.row.state), ...(timing.send_resolved ? resolved : [])] : [];
    if (included.length > 0) {
      const order: Record<MessageAlertStatus, number> = { firing: 0, flapping: 1, resolved: 2 };
      included.sort((a, b) => order[a.row.state] - order[b.row.state] || compareText(a.alert.entity, b.alert.entity));
      seq += 1;
      const dedupKey = `lk-${digest([g.epoch, seq], 24)}`;
      const alerts: MessageAlert[] = included.map((j) => {
        const unit = ctx.unitOf?.(j.alert);
        const url = ctx.linkOf?.(j.alert);
        const repeat = j.row.sent_state === j.row.state;
        return { status: j.row.state, alert: j.alert, ...(unit ? { unit } : {}), ...(url ? { url } : {}), ...(repeat ? { repeat } : {}) };
      });
      const message = buildMessage({
        dedupKey,
        notifier: g.notifier,
        groupKey,
        incident: g.epoch,
        groupLabels: JSON.parse(g.group_labels) as Record<string, string>,
        alerts,
        createdAt: ctx.now,
      });
      messageId = Number(
        db
          .prepare(
            `INSERT INTO notify_messages (dedup_key, notifier, group_key, status, payload, created_at, next_attempt_at)
             VALUES (?, ?, ?, 'pending', ?, ?, ?)`,
          )
          .run(dedupKey, g.notifier, groupKey, JSON.stringify(message), ctx.now, ctx.now).lastInsertRowid,
      );
    }
    // The log: what this message said (a muted alert it left out is no longer "told").
    if (notify) for (const j of judged) j.row.sent_state = j.muted === null ? j.row.state : null;
    let left = 0;
    for (const j of judged) {
      if (j.row.state === 'resolved') del.run(groupKey, j.row.fingerprint);
      else {
        left++;
        update.run(JSON.stringify(j.alert), j.row.sent_state, j.muted, groupKey, j.row.fingerprint);
      }
    }
    if (left === 0) db.prepare(`DELETE FROM notify_groups WHERE group_key = ?`).run(groupKey);
    else {
      db.prepare(`UPDATE notify_groups SET seq = ?, last_sent_at = ?, next_flush_at = ? WHERE group_key = ?`).run(
        seq,
        notify ? ctx.now : g.last_sent_at,
        ctx.now + Math.max(MIN_INTERVAL, timing.group_interval),
        groupKey,
      );
    }
    return messageId;
  })();
}

/** Notifications waiting: unfolded outbox rows, group entries owed a message, and undelivered messages. */
export function pendingCount(db: Database.Database): number {
  const r = db
    .prepare(
      `SELECT (SELECT count(*) FROM notify_outbox)
            + (SELECT count(*) FROM notify_messages WHERE status = 'pending')
            + (SELECT count(*) FROM notify_group_alerts
               WHERE muted IS NULL AND ((state IN ('firing', 'flapping') AND coalesce(sent_state, '') != state)
                  OR (state = 'resolved' AND sent_state IN ('firing', 'flapping')))) AS n`,
    )
    .get() as { n: number };
  return r.n;
}

/** The earliest next_flush_at of any group, or undefined. */
export function nextFlushAt(db: Database.Database): number | undefined {
  const r = db.prepare(`SELECT min(next_flush_at) AS t FROM notify_groups`).get() as { t: number | null };
  return r.t ?? undefined;
}
