/**
 * What the HTTP server needs from the daemon, as small interfaces the integrator adapts the real
 * parts to (alert state, poll runs, the silence repository), and the JSON shapes the API returns.
 */
import type { Alert } from '../model.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics/index.js';
import type { PollRunSummary } from '../store/poll-runs.js';
import type { HttpLimits } from './limits.js';
import type { AlertPageView } from './alert-page.js';
import type { LoadedRule } from '../config/load.js';
import { formatDuration } from '../config/duration.js';

/** An alert as the daemon knows it, plus when a notification about it last went out (ms). */
export type ApiAlert = Alert & { last_notified?: number | null };

/** Where one configured poll stands. Times are Unix ms; null when it never happened. */
export interface PollStatus {
  name: string;
  kind: string;
  /** Start and end of the newest run. */
  last_started_at: number | null;
  last_finished_at: number | null;
  /** Outcome of the newest run; null before the first run. */
  ok: boolean | null;
  /** The newest failure's message (kept after later successes), and when it happened. */
  error: string | null;
  error_at?: number | null;
  /** Duration of the newest run, ms. */
  duration_ms: number | null;
  last_success_at: number | null;
  consecutive_failures: number;
  /** Readings and rejected rows of the newest run. */
  rows: number | null;
  rejected: number | null;
}

/** One label matcher of a silence, as in Alertmanager. */
export interface SilenceMatcher {
  name: string;
  op: '=' | '!=' | '=~' | '!~';
  value: string;
}

/** A silence, shaped like the silence repository's (src/silences/repo.ts); times are Unix ms. */
export interface Silence {
  id: string;
  matchers: SilenceMatcher[];
  startsAt: number;
  endsAt: number;
  author: string;
  comment: string;
  createdAt?: number;
  updatedAt?: number;
  /** Judged by the store at query time; derived from the times when absent. */
  status?: 'pending' | 'active' | 'expired';
}

/** The silence repository as the API uses it. */
export interface SilenceStore {
  /** Silences to show (those in force or starting later, at least; expired ones too with `all`). */
  list(opts?: { all?: boolean }): Silence[];
  /** Validates and stores a silence; throws an error with `code: 'E_BAD_REQUEST'` and a message on bad input. */
  add(input: unknown): Silence;
  /** Ends a silence now: false (or an error with `code: 'E_NOT_FOUND'`) when no silence has that id. */
  expire(id: string): boolean | Silence;
}

/** Readiness: ok once config is loaded and the DB is open and writable. */
export interface Readiness {
  ok: boolean;
  reason?: string;
}

/** Everything {@link startHttpServer} serves from. */
export interface HttpDeps {
  /** `host:port`, `[::1]:port` or `:port` (every interface); port 0 picks a free one. */
  listen: string;
  /** When set, every request but /healthz needs `Authorization: Bearer <token>`. */
  token?: string;
  /** `server.allowed_hosts`: more names the `Host` header may carry (a function is read per request, so a reload applies). */
  allowedHosts?: readonly string[] | (() => readonly string[]);
  /** Bounds on clients (timeouts, header size, connections); defaults in `limits.ts`. */
  limits?: Partial<HttpLimits>;
  metrics: Metrics;
  log: Logger;
  ready(): Readiness;
  alerts(): ApiAlert[];
  polls(): PollStatus[];
  silences: SilenceStore;
  /** An alert's page data over a range (`1h`, `6h`, `24h`, `7d`), or undefined when no alert has that fingerprint. */
  alertPage?(fingerprint: string, range: string): AlertPageView | undefined;
  /** The rules loaded now (after the latest reload); absent: GET /api/rules lists none. */
  rules?(): readonly LoadedRule[];
  version?: string;
  clock?: Clock;
  /** Runs `fn` once the database is free (no poll's transaction open): handlers that read or write it run through this. */
  exclusive?<T>(fn: () => T): Promise<T>;
}

/** An alert in the API's JSON (times as ISO-8601 strings). */
export interface AlertJson {
  fingerprint: string;
  rule: string;
  entity: string;
  state: string;
  severity: string;
  flapping: boolean;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  value: number | null;
  threshold: number | null;
  since: string | null;
  last_notified: string | null;
}

/** ISO-8601 of a Unix ms time, or null. */
export function iso(ms: number | null | undefined): string | null {
  return typeof ms === 'number' && Number.isFinite(ms) ? new Date(ms).toISOString() : null;
}

/** Since when an alert has been in its current state, ms. */
export function alertSince(a: Alert): number | null {
  if (a.state === 'firing') return a.firing_since ?? a.pending_since;
  if (a.state === 'pending') return a.pending_since;
  if (a.state === 'resolved') return a.resolved_at;
  return null;
}

/** The API's JSON of one alert. */
export function alertJson(a: ApiAlert): AlertJson {
  return {
    fingerprint: a.fingerprint,
    rule: a.rule,
    entity: a.entity,
    state: a.state,
    severity: a.severity,
    flapping: a.flapping,
    labels: a.labels,
    annotations: a.annotations,
    value: a.value,
    threshold: a.threshold,
    since: iso(alertSince(a)),
    last_notified: iso(a.last_notified !== undefined ? a.last_notified : a.last_notified_at),
  };
}

/** A rule in the API's JSON: what `lookout rules` lists. */
export interface RuleJson {
  name: string;
  kind: string;
  severity: string;
  enabled: boolean;
  /** Durations as written in YAML (`10m`, `0s`). */
  for: string;
  keep_firing_for: string;
  labels: Record<string, string>;
  /** Notifier names that replace the route's; null: the route's. */
  notify: string[] | null;
  /** Where the rule is written: `file:line:col`. */
  source: string;
}

/** The API's JSON of one loaded rule. */
export function ruleJson(r: LoadedRule): RuleJson {
  return {
    name: r.rule.name,
    kind: r.rule.kind,
    severity: r.rule.severity,
    enabled: r.rule.enabled,
    for: formatDuration(r.rule.for),
    keep_firing_for: formatDuration(r.rule.keep_firing_for),
    labels: r.rule.labels,
    notify: r.rule.notify ?? null,
    source: `${r.file}:${r.line}:${r.col}`,
  };
}

/** The API's JSON of one poll. */
export function pollJson(p: PollStatus): Record<string, unknown> {
  return {
    name: p.name,
    kind: p.kind,
    ok: p.ok,
    last_started_at: iso(p.last_started_at),
    last_finished_at: iso(p.last_finished_at),
    duration_seconds: p.duration_ms === null ? null : p.duration_ms / 1000,
    last_success_at: iso(p.last_success_at),
    consecutive_failures: p.consecutive_failures,
    error: p.error,
    error_at: iso(p.error_at),
    rows: p.rows,
    rejected: p.rejected,
  };
}

/** The API's JSON of one silence (Alertmanager's field names; times as ISO-8601). */
export function silenceJson(s: Silence, now: number): Record<string, unknown> {
  return {
    id: s.id,
    status: s.status ?? (now < s.startsAt ? 'pending' : now < s.endsAt ? 'active' : 'expired'),
    matchers: s.matchers,
    startsAt: iso(s.startsAt),
    endsAt: iso(s.endsAt),
    author: s.author,
    comment: s.comment,
    createdAt: iso(s.createdAt),
    updatedAt: iso(s.updatedAt),
  };
}

/** Adapts the store's poll-run summary to a {@link PollStatus} (a poll that never ran has no summary). */
export function pollStatusFromSummary(s: PollRunSummary): PollStatus {
  return {
    name: s.poll,
    kind: s.kind,
    last_started_at: s.last.started_at,
    last_finished_at: s.last.finished_at,
    ok: s.last.ok,
    error: s.last_error,
    error_at: s.last_error_at,
    duration_ms: s.duration_ms,
    last_success_at: s.last_success_at,
    consecutive_failures: s.consecutive_failures,
    rows: s.last.rows,
    rejected: s.last.rejected,
  };
}
