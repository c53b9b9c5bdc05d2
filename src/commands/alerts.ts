/** `lookout alerts [-c config.yaml]`: the current alerts from the DB — rule, entity, state, since, last notified. */
import { loadConfig } from '../config/load.js';
import { openStore } from '../store/index.js';
import { createAlertRepo } from '../alerts/repo.js';
import type { Alert } from '../model.js';
import type { Output } from './check.js';

/** Options of the alerts command. */
export interface AlertsOptions extends Output {
  configFile: string;
  json: boolean;
  /** Include resolved (and inactive) alerts. */
  all: boolean;
  now?: number;
}

/** Prints the alerts table (or JSON); returns the exit code. */
export function runAlertsCommand(o: AlertsOptions): number {
  const config = loadConfig(o.configFile);
  const store = openStore(config.storage.path, { readonly: true });
  try {
    const repo = createAlertRepo(store.db);
    const alerts = o.all ? repo.list() : repo.list({ state: ['pending', 'firing'] });
    if (o.json) {
      o.out(JSON.stringify(alerts.map((a) => ({ ...a, since: since(a), last_notified: a.last_notified_at })), null, 2));
      return 0;
    }
    if (alerts.length === 0) {
      o.out(o.all ? 'no alerts recorded' : 'no pending or firing alerts');
      return 0;
    }
    const now = o.now ?? Date.now();
    const rows = alerts.map((a) => [
      a.rule,
      a.entity,
      a.state + (a.flapping ? ' (flapping)' : ''),
      a.severity,
      fmtTime(since(a), now),
      fmtTime(a.last_notified_at, now),
    ]);
    o.out(table(['RULE', 'ENTITY', 'STATE', 'SEVERITY', 'SINCE', 'LAST NOTIFIED'], rows));
    return 0;
  } finally {
    store.close();
  }
}

function since(a: Alert): number | null {
  if (a.state === 'firing') return a.firing_since;
  if (a.state === 'pending') return a.pending_since;
  return a.resolved_at;
}

function fmtTime(t: number | null, now: number): string {
  if (t === null) return '-';
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
