/**
 * `lookout alerts`: the current alerts — rule, entity, state, since, last notified — from the DB file named by the
 * config, or from a running daemon (`--url`); filtered by label matchers, rule and severity.
 */
import { loadConfig } from '../config/load.js';
import { openStore } from '../store/index.js';
import { createAlertRepo } from '../alerts/repo.js';
import { alertJson, type AlertJson } from '../http/types.js';
import { matches, parseMatcher } from '../silences/matcher.js';
import { SEVERITIES } from '../model.js';
import { LookoutError } from '../errors.js';
import { daemonRequest, type DaemonTarget } from './daemon-api.js';
import type { Output } from './config-report.js';

/** Which alerts to show, beyond the state. */
export interface AlertFilter {
  /** Label matchers as on the command line (`chain=base`, `market_id=~0xab.*`), all of which must hold. */
  match?: string[];
  rule?: string;
  severity?: string;
}

/** Options of the alerts command. */
export interface AlertsOptions extends Output, AlertFilter {
  configFile: string;
  json: boolean;
  /** Include resolved (and inactive) alerts. */
  all: boolean;
  /** A running daemon to ask instead of the DB file. */
  target?: DaemonTarget;
  now?: number;
}

/** Prints the alerts table (or JSON, the API's shape with ISO times); returns the exit code. */
export async function runAlertsCommand(o: AlertsOptions): Promise<number> {
  const keep = alertFilter(o);
  const alerts = (o.target ? await fromDaemon(o.target, o.all) : fromFile(o.configFile, o.all)).filter(keep);
  if (o.json) {
    o.out(JSON.stringify(alerts, null, 2));
    return 0;
  }
  if (alerts.length === 0) {
    const filtered = o.match?.length || o.rule !== undefined || o.severity !== undefined;
    o.out(`${o.all ? 'no alerts recorded' : 'no pending or firing alerts'}${filtered ? ' that match' : ''}`);
    return 0;
  }
  const now = o.now ?? Date.now();
  const rows = alerts.map((a) => [
    a.rule,
    a.entity,
    a.state + (a.flapping ? ' (flapping)' : ''),
    a.severity,
    fmtTime(a.since, now),
    fmtTime(a.last_notified, now),
  ]);
  o.out(table(['RULE', 'ENTITY', 'STATE', 'SEVERITY', 'SINCE', 'LAST NOTIFIED'], rows));
  return 0;
}

/** A predicate for `--match` (label matchers, as for silences), `--rule` and `--severity`; throws E_BAD_REQUEST on a bad one. */
export function alertFilter(f: AlertFilter): (a: AlertJson) => boolean {
  const matchers = (f.match ?? []).map(parseMatcher);
  if (f.severity !== undefined && !(SEVERITIES as readonly string[]).includes(f.severity)) {
    throw new LookoutError('E_BAD_REQUEST', `unknown --severity '${f.severity}': use one of ${SEVERITIES.join(', ')}`);
  }
  return (a) =>
    (f.rule === undefined || a.rule === f.rule) && (f.severity === undefined || a.severity === f.severity) && matchers.every((m) => matches(m, a.labels));
}

function fromFile(configFile: string, all: boolean): AlertJson[] {
  const config = loadConfig(configFile);
  const store = openStore(config.storage.path, { readonly: true });
  try {
    const repo = createAlertRepo(store.db);
    return (all ? repo.list() : repo.list({ state: ['pending', 'firing'] })).map(alertJson);
  } finally {
    store.close();
  }
}

function fromDaemon(target: DaemonTarget, all: boolean): Promise<AlertJson[]> {
  return daemonRequest<AlertJson[]>(target, 'GET', all ? '/api/alerts' : '/api/alerts?state=pending,firing');
}

function fmtTime(iso: string | null, now: number): string {
  if (iso === null) return '-';
  const t = Date.parse(iso);
  const ago = Math.max(0, Math.round((now - t) / 1000));
  const rel = ago < 120 ? `${ago}s` : ago < 7200 ? `${Math.round(ago / 60)}m` : ago < 172_800 ? `${Math.round(ago / 3600)}h` : `${Math.round(ago / 86_400)}d`;
  return `${new Date(t).toISOString().replace('.000Z', 'Z')} (${rel} ago)`;
}

/** Left-aligned columns separated by two spaces. */
export function table(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(head), ...rows.map(line)].join('\n');
}
