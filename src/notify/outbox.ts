/**
 * The outbox: alert events that should notify, written in the caller's SQLite transaction (no I/O),
 * with their route, notifier and group decided at write time. The dispatcher folds them into groups.
 */
import type Database from 'better-sqlite3';
import type { Alert, AlertEvent, Severity } from '../model.js';
import { newAlert } from '../alerts/lifecycle.js';
import { silentLogger, type Logger } from '../log.js';
import type { Routing } from './routing.js';

/** Event types that reach the outbox: the notifying ones, plus `cancelled` which removes an alert from its group quietly. */
const KEPT = new Set<AlertEvent['type']>(['firing', 'resolved', 'flapping', 'settled', 'cancelled']);

/** Fingerprint of the built-in watchdog alert. */
export const WATCHDOG_FINGERPRINT = 'lookout-watchdog';

/** The `watchdog` config section. */
export interface WatchdogConfig {
  enabled: boolean;
  severity: Severity;
  notify?: string[] | undefined;
}

/** Options of {@link Outbox}. */
export interface OutboxOptions {
  routing: Routing;
  log?: Logger;
}

/** Writes notifying alert events to `notify_outbox`; safe inside the caller's transaction. */
export class Outbox {
  private routing: Routing;
  private readonly log: Logger;
  private readonly insert: Database.Statement;
  private readonly warnedUnknown = new Set<string>();

  /** `db` is `store.db` (the same connection the alert engine writes with). */
  constructor(
    private readonly db: Database.Database,
    opts: OutboxOptions,
  ) {
    this.routing = opts.routing;
    this.log = opts.log ?? silentLogger;
    this.insert = db.prepare(
      `INSERT INTO notify_outbox (created_at, event_type, event_at, fingerprint, notifier, group_key, group_labels, timing, alert)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
  }

  /** Replaces the routing (config reload); events already written keep the route they were given. */
  setRouting(routing: Routing): void {
    this.routing = routing;
  }

  /**
   * Writes one row per (event, notifier) for the events that notify (firing, resolved, flapping, settled;
   * cancelled removes quietly; pending is ignored). Only writes: call it inside the transaction that changed
   * the alert state, then `dispatcher.wake()` after the commit. Returns the number of rows written.
   */
  enqueue(events: readonly AlertEvent[], now: number, notifyOverride?: (alert: Alert) => readonly string[] | undefined): number {
    let n = 0;
    const write = () => {
      for (const ev of events) {
        if (!KEPT.has(ev.type)) continue;
        const { destinations, unknown } = this.routing.destinations(ev.alert, notifyOverride?.(ev.alert));
        for (const name of unknown) {
          if (this.warnedUnknown.has(name)) continue;
          this.warnedUnknown.add(name);
          this.log.warn('notify_unknown_notifier', { notifier: name, rule: ev.alert.rule });
        }
        if (destinations.length === 0) {
          if (ev.type !== 'cancelled') this.log.debug('notify_no_route', { rule: ev.alert.rule, fingerprint: ev.alert.fingerprint });
          continue;
        }
        const alertJson = JSON.stringify(ev.alert);
        for (const d of destinations) {
          this.insert.run(now, ev.type, ev.at, ev.alert.fingerprint, d.notifier, d.groupKey, JSON.stringify(d.groupLabels), JSON.stringify(d.timing), alertJson);
          n++;
        }
      }
    };
    if (this.db.inTransaction) write();
    else this.db.transaction(write)();
    return n;
  }

  /**
   * Makes the built-in watchdog alert fire forever (a dead-man's switch downstream: it repeats every
   * repeat_interval, every resend_interval for Alertmanager), or removes it quietly when disabled.
   */
  ensureWatchdog(cfg: WatchdogConfig, now: number): void {
    const known =
      this.db.prepare(`SELECT 1 FROM notify_group_alerts WHERE fingerprint = ? LIMIT 1`).get(WATCHDOG_FINGERPRINT) !== undefined ||
      this.db.prepare(`SELECT 1 FROM notify_outbox WHERE fingerprint = ? LIMIT 1`).get(WATCHDOG_FINGERPRINT) !== undefined;
    if (!cfg.enabled) {
      if (known) this.enqueue([{ type: 'cancelled', at: now, alert: watchdogAlert(cfg.severity, now) }], now, () => cfg.notify);
      return;
    }
    if (!known) this.enqueue([{ type: 'firing', at: now, alert: watchdogAlert(cfg.severity, now) }], now, () => cfg.notify);
  }

  /** Rows written but not yet folded into groups by the dispatcher. */
  unfolded(): number {
    return (this.db.prepare(`SELECT count(*) AS n FROM notify_outbox`).get() as { n: number }).n;
  }
}

/** The watchdog alert: always firing, severity from the config. */
export function watchdogAlert(severity: Severity, now: number): Alert {
  return {
    ...newAlert({ rule: 'watchdog', kind: 'watchdog', entity: 'lookout', severity }, now),
    fingerprint: WATCHDOG_FINGERPRINT,
    state: 'firing',
    labels: { rule: 'watchdog', alertname: 'watchdog', severity },
    annotations: {
      summary: 'lookout is alive: this alert always fires',
      description: 'A dead-man switch: when it stops arriving, lookout (or its path to you) is down.',
    },
    pending_since: now,
    firing_since: now,
  };
}
