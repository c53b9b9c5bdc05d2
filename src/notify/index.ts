/** Notifications: build the outbox, the dispatcher and the notifiers from the config, and re-export the parts. */
import type Database from 'better-sqlite3';
import type { Dispatcher as UndiciDispatcher } from 'undici';
import { systemClock, type Clock } from '../clock.js';
import { silentLogger, type Logger } from '../log.js';
import { SilenceRepo } from '../silences/repo.js';
import { unitsOfRules } from './format.js';
import { Dispatcher, type FiringAlerts, type NotifyOutcome, type Timers } from './dispatcher.js';
import type { DeliveryPolicy } from './delivery.js';
import type { Notifier } from './message.js';
import type { StoreGate } from './notifier-module.js';
import { Outbox, type WatchdogConfig } from './outbox.js';
import { NotifierRegistry } from './registry.js';
import { Routing, type RuleNotifyResolver } from './routing.js';
import type { InhibitConfig, NotifierConfig, RouteConfig } from './schema.js';

export { Dispatcher, type DispatcherOptions, type DispatcherConfig, type FiringAlerts, type NotifyOutcome, type SilenceView, type Timers } from './dispatcher.js';
export { Outbox, type OutboxOptions, type WatchdogConfig, watchdogAlert, WATCHDOG_FINGERPRINT } from './outbox.js';
export { Routing, type RoutingOptions, type Destination, type GroupTiming, effectiveTiming, pickGroupLabels } from './routing.js';
export { Inhibitor, defaultInhibitRules } from './inhibit.js';
export { NotifierRegistry, notifierModules } from './registry.js';
export { MessageStore, TokenBucket, backoffDelay, type DeliveryPolicy, type Delivery } from './delivery.js';
export type { Notifier, NotificationMessage, MessageAlert, DeliveryProgress } from './message.js';
export type { NotifierModule, NotifierDeps } from './notifier-module.js';
export { renderNotification } from './preview.js';
export { notifyMigration } from './migration.js';
export { partsSentMigration } from './parts-migration.js';
export { slackThreadsMigration } from './threads-migration.js';
export { formatIn, formatValue, fieldUnit, valueUnit, unitsOfRules, type ValueUnit } from './format.js';

/** The config sections notifications read (a loaded `Config` fits). */
export interface NotifyConfig {
  notifiers: Record<string, NotifierConfig>;
  routes: RouteConfig[];
  inhibit?: InhibitConfig[] | undefined;
  delivery: DeliveryPolicy;
  watchdog: WatchdogConfig;
  /** `server.external_url`: messages link each alert to its page there. */
  server?: { external_url?: string | undefined } | undefined;
  /** The loaded rules, read for the unit of a `threshold` rule's values (its `field`); absent: plain numbers. */
  rules?: ReadonlyArray<{ rule: { name: string; kind: string; field?: unknown } }>;
}

/** Options of {@link createNotifications}. */
export interface CreateNotificationsOptions {
  db: Database.Database;
  /** The store's gate (store/gate.ts): delivery records wait while a poll's transaction is open. */
  gate?: StoreGate;
  config: NotifyConfig;
  /** A rule's `notify` list (replaces its route's): a map rule → names, or a resolver. */
  ruleNotify?: ReadonlyMap<string, readonly string[]> | RuleNotifyResolver;
  alerts?: FiringAlerts;
  clock?: Clock;
  timers?: Timers;
  log?: Logger;
  /** undici dispatcher for the HTTP notifiers. */
  http?: UndiciDispatcher;
  stdout?: { write(text: string): unknown; isTTY?: boolean };
  onResult?: (notifier: string, outcome: NotifyOutcome) => void;
  /** Called when the dispatcher could not write to the DB (it backs off and retries). */
  onStoreError?: (err: unknown) => void;
  secrets?: () => readonly (string | undefined)[];
  random?: () => number;
}

/** Everything the daemon wires: enqueue through `outbox`, run `dispatcher`, serve `silences`. */
export interface Notifications {
  outbox: Outbox;
  dispatcher: Dispatcher;
  silences: SilenceRepo;
  notifiers: Map<string, Notifier>;
  /** Applies a reloaded config (routes, notifiers, inhibit, delivery, watchdog, rule notify lists). */
  reload(config: NotifyConfig, ruleNotify?: ReadonlyMap<string, readonly string[]> | RuleNotifyResolver): void;
  /** Stops the dispatcher within `deadlineMs` and closes the notifiers. */
  close(deadlineMs?: number): Promise<void>;
}

/** Builds the outbox, the dispatcher (not started) and the notifiers from the config. */
export function createNotifications(opts: CreateNotificationsOptions): Notifications {
  const clock = opts.clock ?? systemClock;
  const log = opts.log ?? silentLogger;
  const registry = new NotifierRegistry();
  const deps = { clock, log, db: opts.db, ...(opts.gate ? { gate: opts.gate } : {}), ...(opts.http ? { dispatcher: opts.http } : {}), ...(opts.stdout ? { stdout: opts.stdout } : {}) };
  const rateLimits = (c: NotifyConfig) =>
    Object.fromEntries(Object.entries(c.notifiers).flatMap(([n, cfg]) => ('rate_limit' in cfg ? [[n, cfg.rate_limit]] : [])));
  let notifiers = registry.createAll(opts.config.notifiers, deps);
  const outbox = new Outbox(opts.db, { routing: new Routing({ routes: opts.config.routes, notifiers: opts.config.notifiers, ruleNotify: opts.ruleNotify }), log });
  const silences = new SilenceRepo(opts.db, clock);
  const dispatcher = new Dispatcher({
    db: opts.db,
    ...(opts.gate ? { gate: opts.gate } : {}),
    outbox,
    silences,
    notifiers,
    rateLimits: rateLimits(opts.config),
    delivery: opts.config.delivery,
    inhibit: opts.config.inhibit,
    watchdog: opts.config.watchdog,
    unitOf: unitsOfRules((opts.config.rules ?? []).map((r) => r.rule)),
    linkOf: alertLinks(opts.config.server?.external_url),
    clock,
    log,
    ...(opts.alerts ? { alerts: opts.alerts } : {}),
    ...(opts.timers ? { timers: opts.timers } : {}),
    ...(opts.onResult ? { onResult: opts.onResult } : {}),
    ...(opts.onStoreError ? { onStoreError: opts.onStoreError } : {}),
    ...(opts.secrets ? { secrets: opts.secrets } : {}),
    ...(opts.random ? { random: opts.random } : {}),
  });
  const closeAll = async (list: Iterable<Notifier>) => {
    for (const n of list) await n.close?.().catch(() => undefined);
  };
  return {
    outbox,
    dispatcher,
    silences,
    get notifiers() {
      return notifiers;
    },
    reload(config, ruleNotify) {
      const old = notifiers;
      notifiers = registry.createAll(config.notifiers, deps);
      outbox.setRouting(new Routing({ routes: config.routes, notifiers: config.notifiers, ruleNotify: ruleNotify ?? opts.ruleNotify }));
      dispatcher.configure({ notifiers, rateLimits: rateLimits(config), delivery: config.delivery, inhibit: config.inhibit, watchdog: config.watchdog, unitOf: unitsOfRules((config.rules ?? []).map((r) => r.rule)), linkOf: alertLinks(config.server?.external_url) });
      void closeAll(old.values());
    },
    async close(deadlineMs = 5000) {
      await dispatcher.stop(deadlineMs);
      await closeAll(notifiers.values());
    },
  };
}

/** Links each alert to its page under `externalUrl` (`…/alerts/{fingerprint}`); undefined without one. */
export function alertLinks(externalUrl: string | undefined): ((alert: { fingerprint: string }) => string) | undefined {
  if (!externalUrl) return undefined;
  const base = externalUrl.replace(/\/+$/, '');
  return (alert) => `${base}/alerts/${encodeURIComponent(alert.fingerprint)}`;
}
