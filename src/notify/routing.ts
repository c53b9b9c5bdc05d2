/** Routing: which route an alert takes (first match wins), which notifiers it goes to, and its group. Pure. */
import type { Alert } from '../model.js';
import { digest, matchesConfig, routingLabels } from './labels.js';
import type { NotifierConfig, RouteConfig } from './schema.js';

/** Longest pause between two flushes of a group bound for Alertmanager. */
export const ALERTMANAGER_GROUP_INTERVAL = 5000;

/** How a group's messages are timed, per (route, notifier); snapshotted into the outbox row. */
export interface GroupTiming {
  group_wait: number;
  group_interval: number;
  repeat_interval: number;
  send_resolved: boolean;
  /**
   * An alert announced as firing that resolves while silenced or inhibited still gets its RESOLVED (default
   * true; Alertmanager drops it, leaving the channel with an orphaned firing alert). Absent in groups
   * persisted before the setting existed: true.
   */
  send_resolved_when_muted?: boolean;
}

/** Where one alert goes for one notifier. */
export interface Destination {
  routeId: string;
  notifier: string;
  groupKey: string;
  groupLabels: Record<string, string>;
  timing: GroupTiming;
}

/** Resolves a rule's own `notify` list (which replaces its route's), or undefined. */
export type RuleNotifyResolver = (rule: string) => readonly string[] | undefined;

/** Inputs of {@link Routing}: the config sections plus the rules' `notify` lists. */
export interface RoutingOptions {
  routes: readonly RouteConfig[];
  notifiers: Readonly<Record<string, NotifierConfig>>;
  /** A map rule name → notifier names, or a function; a rule's list overrides its route's `notify`. */
  ruleNotify?: ReadonlyMap<string, readonly string[]> | RuleNotifyResolver;
}

const DEFAULT_TIMING: Required<GroupTiming> = { group_wait: 10_000, group_interval: 60_000, repeat_interval: 4 * 3_600_000, send_resolved: true, send_resolved_when_muted: true };

/** A route with its stable id (a digest of its matchers, so reordering routes keeps groups). */
interface CompiledRoute {
  id: string;
  cfg: RouteConfig;
}

/** Decides routes and groups. When `routes` is empty, every alert goes to every notifier with the default timing. */
export class Routing {
  private readonly routes: CompiledRoute[];
  private readonly notifiers: Readonly<Record<string, NotifierConfig>>;
  private readonly ruleNotify: RuleNotifyResolver;

  /** Builds the routing from validated config sections. */
  constructor(opts: RoutingOptions) {
    this.notifiers = opts.notifiers;
    const rn = opts.ruleNotify;
    this.ruleNotify = typeof rn === 'function' ? rn : (rule) => rn?.get(rule);
    const list: RouteConfig[] = opts.routes.length
      ? [...opts.routes]
      : [{ default: true, match: {}, match_re: {}, notify: Object.keys(opts.notifiers), group_by: ['rule'], ...DEFAULT_TIMING }];
    // `default: true` catches the rest wherever it is written, so it is tried last.
    const ordered = [...list.filter((r) => !r.default), ...list.filter((r) => r.default)];
    this.routes = ordered.map((cfg) => ({ id: cfg.default ? 'default' : digest([cfg.match, cfg.match_re], 12), cfg }));
  }

  /** The configured notifier names. */
  notifierNames(): string[] {
    return Object.keys(this.notifiers);
  }

  /** The first route whose matchers accept the alert, or undefined when none does and there is no default. */
  route(alert: Pick<Alert, 'labels' | 'kind'>): { id: string; cfg: RouteConfig } | undefined {
    const labels = routingLabels(alert);
    return this.routes.find((r) => r.cfg.default || matchesConfig(labels, r.cfg.match, r.cfg.match_re));
  }

  /** Every destination of an alert: one per notifier of its route (or of its rule's `notify`, or `notifyOverride`), known notifiers only. */
  destinations(
    alert: Pick<Alert, 'labels' | 'kind' | 'rule'>,
    notifyOverride?: readonly string[],
  ): { destinations: Destination[]; unknown: string[] } {
    const r = this.route(alert);
    if (!r) return { destinations: [], unknown: [] };
    const names = notifyOverride ?? this.ruleNotify(alert.rule) ?? r.cfg.notify;
    const unknown: string[] = [];
    const destinations: Destination[] = [];
    const groupLabels = pickGroupLabels(alert.labels, r.cfg.group_by);
    for (const notifier of new Set(names)) {
      const ncfg = this.notifiers[notifier];
      if (!ncfg) {
        unknown.push(notifier);
        continue;
      }
      const timing = effectiveTiming(r.cfg, ncfg);
      destinations.push({ routeId: r.id, notifier, groupLabels, timing, groupKey: digest([r.id, notifier, groupLabels], 24) });
    }
    return { destinations, unknown };
  }
}

/** The group labels of an alert: the `group_by` labels it has (`...` means all of them). */
export function pickGroupLabels(labels: Readonly<Record<string, string>>, groupBy: readonly string[]): Record<string, string> {
  if (groupBy.includes('...')) return { ...labels };
  const out: Record<string, string> = {};
  for (const name of groupBy) out[name] = labels[name] ?? '';
  return out;
}

/**
 * The route's timing, adjusted for the notifier: Alertmanager groups by itself and expects alerts to be
 * re-posted while they fire, so it gets no group_wait, a short group_interval, a repeat every `resend_interval`,
 * and always the resolve.
 */
export function effectiveTiming(route: GroupTiming, notifier: NotifierConfig): GroupTiming {
  const t: GroupTiming = {
    group_wait: route.group_wait,
    group_interval: route.group_interval,
    repeat_interval: route.repeat_interval,
    send_resolved: route.send_resolved,
    send_resolved_when_muted: route.send_resolved_when_muted ?? true,
  };
  if (notifier.type === 'alertmanager') {
    t.group_wait = 0;
    // Alertmanager does its own grouping: changes (a resolve among firing alerts) go within seconds.
    t.group_interval = Math.min(t.group_interval, notifier.resend_interval, ALERTMANAGER_GROUP_INTERVAL);
    t.repeat_interval = notifier.resend_interval;
    t.send_resolved = true;
    // Alertmanager must hear every resolve, or the alert stays active there until its endsAt.
    t.send_resolved_when_muted = true;
  }
  return t;
}
