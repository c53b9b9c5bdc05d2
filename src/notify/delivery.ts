/** The retry stage's parts: the messages table, exponential backoff with jitter, and a token bucket per notifier. */
import type Database from 'better-sqlite3';
import type { NotificationMessage } from './message.js';

/** The `delivery` config section: first retry delay, its cap, and when to give up (ms). */
export interface DeliveryPolicy {
  backoff: number;
  max_backoff: number;
  give_up_after: number;
}

/** The delay before retry number `attempt` (1-based): doubling from `backoff`, capped, with "equal jitter" (half fixed, half random). */
export function backoffDelay(attempt: number, policy: DeliveryPolicy, random: () => number): number {
  const base = Math.min(policy.max_backoff, policy.backoff * 2 ** Math.max(0, attempt - 1));
  return Math.round(base / 2 + (random() * base) / 2);
}

/** A token bucket: `rate` tokens per second, holding at most `burst`. */
export class TokenBucket {
  private tokens: number;
  private last: number;

  /** Starts full at time `now`. */
  constructor(
    private readonly rate: number,
    private readonly burst: number,
    now: number,
  ) {
    this.tokens = burst;
    this.last = now;
  }

  private refill(now: number): void {
    if (now > this.last) {
      this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.rate);
      this.last = now;
    }
  }

  /** True (and one token spent) when a send may go now. */
  take(now: number): boolean {
    this.refill(now);
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return true;
    }
    return false;
  }

  /** True when a token is available now, without spending it. */
  ready(now: number): boolean {
    this.refill(now);
    return this.tokens >= 1;
  }

  /** When the next token will be available. */
  nextAt(now: number): number {
    this.refill(now);
    return this.tokens >= 1 ? now : now + Math.ceil(((1 - this.tokens) / this.rate) * 1000);
  }
}

/** One stored message. */
export interface MessageRow {
  id: number;
  dedup_key: string;
  notifier: string;
  group_key: string;
  status: 'pending' | 'sent' | 'failed' | 'dropped';
  payload: string;
  created_at: number;
  attempts: number;
  next_attempt_at: number;
  last_attempt_at: number | null;
  sent_at: number | null;
  error: string | null;
  /** Parts of a multi-post message the receiver accepted so far (schema 6); a retry or restart resumes after them. */
  parts_sent: number;
}

/** A delivery record as tools and tests read it. */
export interface Delivery extends Omit<MessageRow, 'payload'> {
  message: NotificationMessage;
}

/** Statements over `notify_messages`. */
export class MessageStore {
  private readonly next: Database.Statement;
  /** Prepares the statements on `db`. */
  constructor(private readonly db: Database.Database) {
    // Within a group messages go in order: a resolve never overtakes its firing message.
    this.next = db.prepare(
      `SELECT * FROM notify_messages m
       WHERE m.status = 'pending' AND m.notifier = ? AND m.next_attempt_at <= ?
         AND NOT EXISTS (SELECT 1 FROM notify_messages e WHERE e.group_key = m.group_key AND e.status = 'pending' AND e.id < m.id)
       ORDER BY m.id LIMIT 1`,
    );
  }

  /** The next message of `notifier` that may be attempted at `now`. */
  nextDue(notifier: string, now: number): MessageRow | undefined {
    return this.next.get(notifier, now) as MessageRow | undefined;
  }

  /** Notifiers that have a message due at `now`. */
  dueNotifiers(now: number): string[] {
    return (this.db.prepare(`SELECT DISTINCT notifier FROM notify_messages WHERE status = 'pending' AND next_attempt_at <= ?`).all(now) as Array<{ notifier: string }>).map(
      (r) => r.notifier,
    );
  }

  /** The earliest next attempt of any pending message (optionally skipping notifiers), or undefined. */
  nextAttemptAt(skip: ReadonlySet<string> = new Set()): number | undefined {
    const rows = this.db.prepare(`SELECT notifier, min(next_attempt_at) AS t FROM notify_messages WHERE status = 'pending' GROUP BY notifier`).all() as Array<{
      notifier: string;
      t: number;
    }>;
    const ts = rows.filter((r) => !skip.has(r.notifier)).map((r) => r.t);
    return ts.length ? Math.min(...ts) : undefined;
  }

  /** Records that an attempt starts now (a write before the send: it fails, and nothing is sent, while the DB takes no writes). */
  markAttempt(id: number, now: number): void {
    this.db.prepare(`UPDATE notify_messages SET last_attempt_at = ? WHERE id = ?`).run(now, id);
  }

  /** Marks a message delivered. */
  markSent(id: number, now: number): void {
    this.db.prepare(`UPDATE notify_messages SET status = 'sent', sent_at = ?, last_attempt_at = ?, attempts = attempts + 1, error = NULL WHERE id = ?`).run(now, now, id);
  }

  /** Records that the first `partsSent` parts of a message were accepted, at once: a crash or a retry resumes after them. */
  markPartsSent(id: number, partsSent: number): void {
    this.db.prepare(`UPDATE notify_messages SET parts_sent = max(parts_sent, ?) WHERE id = ?`).run(partsSent, id);
  }

  /** Records a failed attempt that will be retried at `next`. */
  markRetry(id: number, now: number, next: number, error: string): void {
    this.db.prepare(`UPDATE notify_messages SET attempts = attempts + 1, last_attempt_at = ?, next_attempt_at = ?, error = ? WHERE id = ?`).run(now, next, error, id);
  }

  /** Gives up on a message; the row stays, with its error. */
  markFailed(id: number, now: number, error: string, status: 'failed' | 'dropped' = 'failed'): void {
    this.db.prepare(`UPDATE notify_messages SET status = ?, attempts = attempts + 1, last_attempt_at = ?, error = ? WHERE id = ?`).run(status, now, error, id);
  }

  /** Delivery records, newest first (for tools and tests). */
  list(opts: { status?: MessageRow['status']; limit?: number } = {}): Delivery[] {
    const rows = (
      opts.status
        ? this.db.prepare(`SELECT * FROM notify_messages WHERE status = ? ORDER BY id DESC LIMIT ?`).all(opts.status, opts.limit ?? 1000)
        : this.db.prepare(`SELECT * FROM notify_messages ORDER BY id DESC LIMIT ?`).all(opts.limit ?? 1000)
    ) as MessageRow[];
    return rows.map(({ payload, ...rest }) => ({ ...rest, message: JSON.parse(payload) as NotificationMessage }));
  }

  /** Deletes delivered, failed and dropped messages older than `olderThan`; returns how many. */
  prune(olderThan: number): number {
    return this.db.prepare(`DELETE FROM notify_messages WHERE status != 'pending' AND created_at < ?`).run(olderThan).changes;
  }
}
