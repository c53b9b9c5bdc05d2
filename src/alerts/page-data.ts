/**
 * What an alert's page shows, gathered from the store: the rule's value over the range (stored readings judged by
 * the rule's kind), the alert's transitions and periods, and the notifications that went out about it.
 */
import type Database from 'better-sqlite3';
import { ALERT_PAGE_RANGES, type AlertPageView, type SentNote } from '../http/alert-page.js';
import type { ApiAlert, Silence } from '../http/types.js';
import { valueUnit } from '../notify/format.js';
import type { NotificationMessage } from '../notify/message.js';
import { ruleReads } from '../rules/define.js';
import { getRuleKind } from '../rules/registry.js';
import type { RuleBase } from '../rules/schema.js';
import { clearLevel, valueSeries } from '../rules/series.js';
import { matchesAll } from '../silences/matcher.js';
import { historyView, type ReadingsRepo } from '../store/readings.js';
import { periodsOf } from './periods.js';
import type { AlertRepo } from './repo.js';

/** Where the data comes from. */
export interface AlertPageSources {
  db: Database.Database;
  readings: ReadingsRepo;
  alertRepo: AlertRepo;
  rules: () => readonly RuleBase[];
  silences: () => readonly Silence[];
  version?: string;
}

/** Readings drawn at most, newest kept: a 7-day range of a 30 s poll is 20,160 (the chart downsamples what it draws). */
const MAX_READINGS = 50_000;

/** The notifications sent in [from, to] whose message carried the alert, oldest first. */
function sentAbout(db: Database.Database, fingerprint: string, from: number, to: number): SentNote[] {
  // A message names its alerts' fingerprints in its payload: the LIKE narrows, the parse decides.
  const rows = db
    .prepare<[number, number, string], { sent_at: number; notifier: string; payload: string }>(
      `SELECT sent_at, notifier, payload FROM notify_messages
       WHERE status = 'sent' AND sent_at BETWEEN ? AND ? AND instr(payload, ?) > 0 ORDER BY sent_at`,
    )
    .all(from, to, fingerprint);
  const out: SentNote[] = [];
  for (const r of rows) {
    const m = JSON.parse(r.payload) as NotificationMessage;
    const mine = m.alerts.find((a) => a.alert.fingerprint === fingerprint);
    if (mine) out.push({ at: r.sent_at, notifier: r.notifier, status: mine.status });
  }
  return out;
}

/** The page's view of one alert over `range` (a key of ALERT_PAGE_RANGES), or undefined when no such alert exists. */
export function alertPageView(src: AlertPageSources, fingerprint: string, range: string, now: number): AlertPageView | undefined {
  const alert: ApiAlert | undefined = src.alertRepo.get(fingerprint);
  if (!alert) return undefined;
  const from = now - ALERT_PAGE_RANGES[range]!;
  const rule = src.rules().find((r) => r.name === alert.rule);
  const kind = rule ? getRuleKind(rule.kind) : undefined;
  const events = src.alertRepo.events(fingerprint, { limit: 5000 });
  const base = {
    now,
    alert,
    range,
    threshold: alert.threshold,
    clearBelow: rule ? clearLevel(rule) : null,
    unit: valueUnit(alert.kind, (rule as { field?: string } | undefined)?.field),
    periods: periodsOf(events).filter((p) => (p.to ?? now) >= from),
    notifications: sentAbout(src.db, fingerprint, from, now),
    transitions: events.filter((e) => e.at >= from).map((e) => ({ at: e.at, type: e.type, value: e.alert.value })),
    silences: src.silences().filter((s) => s.startsAt <= now && s.endsAt > now && matchesAll(s.matchers, alert.labels)),
    ...(src.version ? { version: src.version } : {}),
  };
  if (!rule || !kind) {
    const why = alert.kind === 'source_down' ? 'source_down has no value to draw: it counts failed polls.' : `rule '${alert.rule}' is no longer configured: its value cannot be drawn.`;
    return { ...base, series: [], noSeries: why };
  }
  const history = historyView(src.readings);
  for (const readingKind of ruleReads(kind, rule)) {
    const readings = src.readings.historyRange(readingKind, alert.entity, from, now).slice(-MAX_READINGS);
    if (readings.length > 0) return { ...base, series: valueSeries(kind, rule, readings, history).points };
  }
  return { ...base, series: [] };
}
