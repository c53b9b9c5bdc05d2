/**
 * The dispatcher: a loop of small stages. fold (outbox → groups) → flush (silence, inhibit, decide,
 * persist the message with its dedup key) → deliver (rate limit → notifier.send → record), where one
 * retry stage owns backoff, Retry-After and giving up. At-least-once: a message is marked sent only
 * after its notifier returned, so a crash in between resends it with the same key. A message sent as several
 * posts (a long Slack group) records each accepted part, spends a token per part, and resumes after the last one.
 */
import type Database from 'better-sqlite3';
import { systemClock, type Clock } from '../clock.js';
import { NotifyError, redact } from '../errors.js';
import { silentLogger, type Logger } from '../log.js';
import type { Alert } from '../model.js';
import { matchesAll, type Matcher } from '../silences/matcher.js';
import { backoffDelay, MessageStore, TokenBucket, type DeliveryPolicy, type MessageRow } from './delivery.js';
import { dueGroups, flushGroup, foldOutbox, nextFlushAt, pendingCount } from './groups.js';
import { defaultInhibitRules, Inhibitor } from './inhibit.js';
import type { DeliveryProgress, NotificationMessage, Notifier } from './message.js';
import type { Outbox, WatchdogConfig } from './outbox.js';
import { whenStoreFree, type StoreGate } from './notifier-module.js';
import type { ValueUnit } from './format.js';
import type { InhibitConfig } from './schema.js';

/** Outcomes counted by `lookout_notifications_total{notifier,outcome}`. */
export type NotifyOutcome = 'sent' | 'failed' | 'retry' | 'dropped' | 'silenced' | 'inhibited';

/** The timer seam: real timers by default, fakes in tests. */
export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The alert engine's view the dispatcher needs (the integrator wires it to the alerts repository). */
export interface FiringAlerts {
  /** Alerts firing now: sources for inhibition, fresh values for repeats; grouped alerts missing here are dropped quietly. */
  firing(): Alert[];
  /** Records that a message about this alert was delivered (shown by `lookout alerts`). */
  markNotified(fingerprint: string, at: number): void;
}

/** The silence stage's view of the silences (a {@link SilenceRepo} fits). */
export interface SilenceView {
  activeAt(now: number): Matcher[][];
}

/** The parts of the config the dispatcher follows; replaced on reload with {@link Dispatcher.configure}. */
export interface DispatcherConfig {
  /** Configured notifiers by name. */
  notifiers: ReadonlyMap<string, Notifier>;
  /** Messages per second per notifier (the config's `rate_limit`); absent: unlimited. */
  rateLimits?: Readonly<Record<string, number>>;
  delivery: DeliveryPolicy;
  /** Inhibit rules; undefined: the shipped defaults. */
  inhibit?: readonly InhibitConfig[] | undefined;
  watchdog?: WatchdogConfig | undefined;
  /** The unit of an alert's values when its kind alone does not say (see {@link unitsOfRules}); default: the kind's. */
  unitOf?: ((alert: Alert) => ValueUnit | undefined) | undefined;
  /** The link to an alert's page (from `server.external_url`), frozen into each message. */
  linkOf?: ((alert: Alert) => string | undefined) | undefined;
}

/** Options of {@link Dispatcher}. */
export interface DispatcherOptions extends DispatcherConfig {
  db: Database.Database;
  /** The store's gate: while a poll's transaction is open, the dispatcher's database work waits for it (see store/gate.ts). */
  gate?: StoreGate;
  /** Needed for the watchdog (and nothing else). */
  outbox?: Outbox;
  silences?: SilenceView;
  alerts?: FiringAlerts;
  clock?: Clock;
  timers?: Timers;
  /** Jitter source in [0, 1); default Math.random. */
  random?: () => number;
  log?: Logger;
  /** Called for each outcome (feed `lookout_notifications_total`). */
  onResult?: (notifier: string, outcome: NotifyOutcome) => void;
  /** Secrets to scrub from stored error texts (the log scrubs its own). */
  secrets?: () => readonly (string | undefined)[];
  /** Longest sleep between two looks at the DB (other processes add silences); default 30s. */
  maxIdleMs?: number;
  /** Called when a write to the DB failed (disk full, read-only, locked); the dispatcher backs off and tries again. */
  onStoreError?: (err: unknown) => void;
}

/** How long the dispatcher waits before it touches the DB again after a write failed, ms. */
const STORE_RETRY_MS = 1_000;

/** Thrown by a progress's `beforePart` when the rate limit holds the next part: the message stays pending and resumes after its sent parts. */
class PartDeferred extends Error {}

const realTimers: Timers = { setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout) };

/** Delivers the outbox. Create it once; `start()` runs it in the background; `runDue()` drives it by hand (tests, tools). */
export class Dispatcher {
  private cfg: DispatcherConfig;
  private readonly db: Database.Database;
  private readonly messages: MessageStore;
  private readonly clock: Clock;
  private readonly timers: Timers;
  private readonly random: () => number;
  private readonly log: Logger;
  private readonly workers = new Map<string, Promise<void>>();
  private readonly buckets = new Map<string, TokenBucket>();
  private readonly pausedUntil = new Map<string, number>();
  private abort = new AbortController();
  private timer: unknown;
  private timerAt = Infinity;
  private running = false;
  private stopping = false;
  /** A pass is waiting for a poll's open transaction to close (one waiter, however often it is asked for meanwhile). */
  private waitingForGate = false;

  /** Builds the dispatcher; nothing runs until `start()` or `runDue()`. */
  constructor(private readonly opts: DispatcherOptions) {
    this.db = opts.db;
    this.cfg = opts;
    this.messages = new MessageStore(opts.db);
    this.clock = opts.clock ?? systemClock;
    this.timers = opts.timers ?? realTimers;
    this.random = opts.random ?? Math.random;
    this.log = opts.log ?? silentLogger;
  }

  /** Replaces notifiers, rate limits, delivery policy, inhibit rules and watchdog (config reload). */
  configure(cfg: DispatcherConfig): void {
    this.cfg = cfg;
    this.buckets.clear();
    this.ensureWatchdog();
    this.wake();
  }

  /** The delivery records (for tools and tests). */
  get deliveries(): MessageStore {
    return this.messages;
  }

  /** Notifications waiting to go out (the `lookout_outbox_pending` gauge). */
  pending(): number {
    return pendingCount(this.db);
  }

  /** Starts the background loop (and the watchdog when enabled). */
  start(): void {
    this.running = true;
    this.stopping = false;
    this.ensureWatchdog();
    this.schedule(0);
  }

  /** Asks for a pass soon: call it after each commit that enqueued events. */
  wake(): void {
    if (this.running && !this.stopping) this.schedule(0);
  }

  /**
   * Stops the loop: folds and flushes what is due, lets deliveries run until `deadlineMs` (then aborts
   * them; an aborted message stays pending and goes out after the restart), and resolves.
   */
  async stop(deadlineMs = 5000): Promise<void> {
    this.stopping = true;
    this.running = false;
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
    let deadline: unknown;
    const expired = new Promise<void>((resolve) => {
      deadline = this.timers.setTimeout(() => {
        // Cut short, a message stays in the outbox and goes out after the restart under the same dedup key.
        this.log.warn('stop_aborting_deliveries', { notifiers: [...this.workers.keys()], grace_ms: deadlineMs });
        this.abort.abort();
        resolve();
      }, deadlineMs);
    });
    try {
      this.pump();
    } catch (err) {
      this.log.error('notify_pump_failed', { err });
    }
    await Promise.race([Promise.all([...this.workers.values()]), expired]);
    this.abort.abort();
    await Promise.all([...this.workers.values()]);
    this.timers.clearTimeout(deadline);
    this.abort = new AbortController();
  }

  /** Runs every stage for what is due at the clock's now, and waits for the deliveries it started (tests, tools). */
  async runDue(): Promise<void> {
    for (let i = 0; i < 10_000; i++) {
      this.pump();
      if (this.workers.size === 0) return;
      await Promise.all([...this.workers.values()]);
    }
  }

  /**
   * When something will next be due, or undefined when nothing waits. A notifier's messages wait for the notifier: while
   * it is paused (a retry's backoff, a store fault) until the pause ends, while its worker runs until the worker is done
   * (it looks again then), and while its rate limit holds a due message until the next token — never "now" for a
   * message that cannot go now, or the loop would spin.
   */
  nextDueAt(): number | undefined {
    const now = this.clock.now();
    const held = new Set(this.workers.keys());
    const times = [nextFlushAt(this.db)];
    for (const [n, t] of this.pausedUntil) {
      if (t <= now || held.has(n)) continue;
      held.add(n);
      times.push(t);
    }
    for (const [n, b] of this.buckets) {
      if (held.has(n) || b.ready(now) || !this.messages.nextDue(n, now)) continue;
      held.add(n);
      times.push(b.nextAt(now));
    }
    times.push(this.messages.nextAttemptAt(held));
    const defined = times.filter((t): t is number => t !== undefined);
    return defined.length ? Math.min(...defined) : undefined;
  }

  private ensureWatchdog(): void {
    if (this.cfg.watchdog && this.opts.outbox) this.opts.outbox.ensureWatchdog(this.cfg.watchdog, this.clock.now());
  }

  private schedule(delay?: number): void {
    if (!this.running || this.stopping) return;
    // Looking for what is due reads the database: not while a poll's transaction is open; once it closes.
    if (delay === undefined && this.opts.gate?.busy) return this.afterGate();
    const now = this.clock.now();
    let at: number;
    if (delay !== undefined) at = now + delay;
    else {
      const due = this.nextDueAt();
      at = Math.min(due ?? Infinity, now + (this.opts.maxIdleMs ?? 30_000));
    }
    if (this.timer !== undefined && this.timerAt <= at) return;
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = this.timers.setTimeout(() => {
      this.timer = undefined;
      this.timerAt = Infinity;
      // A poll's transaction is open: the pass that was due now runs as soon as it closes.
      if (this.opts.gate?.busy) return this.afterGate();
      let failed = false;
      try {
        this.pump();
      } catch (err) {
        // Folding or flushing could not write (a full disk): what was due stays due; look again after a pause, not at once.
        failed = true;
        this.log.error('notify_pump_failed', { err });
        this.storeError(err);
      }
      this.schedule(failed ? STORE_RETRY_MS : undefined);
    }, Math.max(0, at - now));
  }

  /** Once the poll's open transaction has closed: a pass at once (it looks at what is due then). */
  private afterGate(): void {
    if (this.waitingForGate) return;
    this.waitingForGate = true;
    void this.opts.gate!.idle().then(() => {
      this.waitingForGate = false;
      this.schedule(0);
    });
  }

  /** fold → flush → start a delivery worker per notifier with something due. Synchronous but for the workers. */
  private pump(): void {
    const now = this.clock.now();
    foldOutbox(this.db, now);
    const due = dueGroups(this.db, now);
    if (due.length > 0) {
      const firing = this.opts.alerts?.firing();
      const firingNow = firing ? new Map(firing.map((a) => [a.fingerprint, a])) : undefined;
      const sources = firing ?? this.groupedFiring();
      const inhibitor = new Inhibitor(this.cfg.inhibit ?? defaultInhibitRules, sources);
      const silences = this.opts.silences?.activeAt(now) ?? [];
      for (const g of due) {
        flushGroup(this.db, g, {
          now,
          firingNow,
          isSilenced: (labels) => silences.some((ms) => matchesAll(ms, labels)),
          isInhibited: (a) => inhibitor.isInhibited(a),
          onMuted: (n, why) => this.result(n, why),
          unitOf: this.cfg.unitOf,
          linkOf: this.cfg.linkOf,
        });
      }
    }
    for (const n of this.messages.dueNotifiers(now)) {
      if (this.workers.has(n) || (this.pausedUntil.get(n) ?? 0) > now) continue;
      if (!this.bucket(n, now).ready(now)) continue;
      const w = this.deliverAll(n)
        .catch((err: unknown) => {
          // A delivery record could not be written: the message stays pending (sent again later with the same key if it got out).
          this.pausedUntil.set(n, this.clock.now() + STORE_RETRY_MS);
          this.log.error('notify_store_failed', { notifier: n, err });
          this.storeError(err);
        })
        .finally(() => {
          this.workers.delete(n);
          this.schedule();
        });
      this.workers.set(n, w);
    }
  }

  /** Firing alerts known to the groups, when no engine view was given. */
  private groupedFiring(): Alert[] {
    const rows = this.db.prepare(`SELECT alert FROM notify_group_alerts WHERE state = 'firing' GROUP BY fingerprint`).all() as Array<{ alert: string }>;
    return rows.map((r) => JSON.parse(r.alert) as Alert);
  }

  private bucket(n: string, now: number): TokenBucket {
    let b = this.buckets.get(n);
    if (!b) {
      const rate = this.cfg.rateLimits?.[n] ?? 1e6;
      b = new TokenBucket(rate, Math.max(1, Math.floor(rate)), now);
      this.buckets.set(n, b);
    }
    return b;
  }

  private storeError(err: unknown): void {
    try {
      this.opts.onStoreError?.(err);
    } catch (e) {
      this.log.warn('notify_callback_failed', { err: e });
    }
  }

  private result(n: string, outcome: NotifyOutcome): void {
    try {
      this.opts.onResult?.(n, outcome);
    } catch (err) {
      this.log.warn('notify_callback_failed', { err });
    }
  }

  /** The delivery worker of one notifier: sends its due messages one at a time, within its rate limit. */
  private async deliverAll(name: string): Promise<void> {
    const signal = this.abort.signal;
    while (!signal.aborted) {
      const now = this.clock.now();
      if ((this.pausedUntil.get(name) ?? 0) > now) return;
      if (this.opts.gate?.busy) {
        await this.opts.gate.idle();
        continue; // time moved on: look again
      }
      const row = this.messages.nextDue(name, now);
      if (!row) return;
      const notifier = this.cfg.notifiers.get(name);
      if (!notifier) {
        this.messages.markFailed(row.id, now, `notifier '${name}' is no longer configured`, 'dropped');
        this.log.warn('notify_dropped', { notifier: name, dedup_key: row.dedup_key, reason: 'notifier not configured' });
        this.result(name, 'dropped');
        continue;
      }
      if (!this.bucket(name, now).take(now)) return;
      // Claim the attempt in the DB before sending: when the DB takes no writes (a full disk), nothing goes out that could
      // not be recorded as sent, and so nothing is announced twice once it takes writes again.
      this.messages.markAttempt(row.id, now);
      const message = JSON.parse(row.payload) as NotificationMessage;
      try {
        await notifier.send(message, signal, this.progress(row, name, signal));
      } catch (err) {
        if (signal.aborted) return; // stopping: the message stays pending, with the parts it got out
        if (err instanceof PartDeferred) {
          // Not a failure: the next part waits for a token like any message; the scheduler wakes at the bucket's next token.
          this.log.debug('notify_part_deferred', { notifier: name, dedup_key: row.dedup_key });
          return;
        }
        while (this.opts.gate?.busy) await this.opts.gate.idle();
        this.retryStage(row, name, err);
        return;
      }
      while (this.opts.gate?.busy) await this.opts.gate.idle();
      const at = this.clock.now();
      this.db.transaction(() => {
        this.messages.markSent(row.id, at);
        for (const ma of message.alerts) {
          try {
            this.opts.alerts?.markNotified(ma.alert.fingerprint, at);
          } catch (err) {
            this.log.warn('notify_mark_notified_failed', { fingerprint: ma.alert.fingerprint, err });
          }
        }
      })();
      this.log.info('notify_sent', { notifier: name, dedup_key: row.dedup_key, status: message.status, alerts: message.alerts.length, attempts: row.attempts + 1 });
      this.result(name, 'sent');
    }
  }

  /** The progress of a message sent as several posts: resumes from the row, spends a token per later part, persists each accepted part. */
  private progress(row: MessageRow, name: string, signal: AbortSignal): DeliveryProgress {
    return {
      partsSent: row.parts_sent,
      beforePart: async () => {
        signal.throwIfAborted();
        const now = this.clock.now();
        if (!this.bucket(name, now).take(now)) throw new PartDeferred(`${name}: rate limit holds the next part of ${row.dedup_key}`);
      },
      partSent: (index) => whenStoreFree(this.opts.gate, () => void this.messages.markPartsSent(row.id, index + 1)),
    };
  }

  /** The one place that owns backoff: retry with exponential backoff and jitter (or Retry-After), or give up and record it. */
  private retryStage(row: MessageRow, name: string, err: unknown): void {
    const now = this.clock.now();
    const ne = err instanceof NotifyError ? err : undefined;
    const secrets = this.opts.secrets?.() ?? [];
    const text = redact(ne ? ne.message : `${name}: unexpected ${(err as Error)?.name ?? 'error'}: ${(err as Error)?.message ?? String(err)}`, secrets);
    const retryable = ne ? ne.retryable : true;
    const p = this.cfg.delivery;
    const giveUpAt = row.created_at + p.give_up_after;
    if (!retryable || now >= giveUpAt) {
      this.messages.markFailed(row.id, now, text);
      this.log.error('notify_failed', { notifier: name, dedup_key: row.dedup_key, attempts: row.attempts + 1, error: text, gave_up: retryable });
      this.result(name, 'failed');
      return;
    }
    const delay = ne?.retryAfterMs !== undefined ? Math.min(ne.retryAfterMs, p.max_backoff) : backoffDelay(row.attempts + 1, p, this.random);
    const next = Math.min(now + delay, giveUpAt);
    this.messages.markRetry(row.id, now, next, text);
    // The whole notifier waits: an outage costs one request per backoff, not one per queued message.
    this.pausedUntil.set(name, next);
    this.log.warn('notify_retry', { notifier: name, dedup_key: row.dedup_key, attempts: row.attempts + 1, retry_in_ms: next - now, error: text });
    this.result(name, 'retry');
  }
}
