/** Turns a replay's transitions into what a risk desk reads: one row per firing episode and a summary per rule. */
import type { AlertEvent } from '../model.js';

/** One episode of an alert: from its firing (or flapping) to its resolve, or still open at the end. */
export interface BacktestRow {
  rule: string;
  entity: string;
  fired_at: number;
  /** null when still firing at the end of the range. */
  resolved_at: number | null;
  /** Until resolved_at, or until the end of the range when still firing. */
  duration_ms: number;
  /** Messages it would have sent: firing, resolved, flapping, settled, and repeats every repeat_interval while firing. */
  notifications: number;
  flapped: boolean;
  severity: string;
  /** Peak value while firing, where the rule has one. */
  peak: number | null;
}

/** Per-rule totals. */
export interface RuleSummary {
  rule: string;
  /** Episodes (rows). */
  fired: number;
  /** Times it entered flapping. */
  flapped: number;
  median_firing_ms: number | null;
  notifications: number;
}

/** Builds rows (ordered by fired_at) from transitions in time order. `to` closes open episodes; `repeatMs` is the repeat_interval. */
export function buildRows(events: readonly AlertEvent[], to: number, repeatMs: number): BacktestRow[] {
  interface Open {
    row: BacktestRow;
    /** Start of the current notifying firing stretch (not flapping), for repeats. */
    firingSince: number | null;
  }
  const open = new Map<string, Open>();
  const rows: BacktestRow[] = [];
  const repeats = (from: number, until: number, stillFiring: boolean) =>
    Math.max(0, stillFiring ? Math.floor((until - from) / repeatMs) : Math.ceil((until - from) / repeatMs) - 1);
  const close = (k: string, o: Open, at: number) => {
    o.row.resolved_at = at;
    o.row.duration_ms = at - o.row.fired_at;
    open.delete(k);
  };

  for (const e of events) {
    const k = `${e.alert.rule}\u0000${e.alert.entity}`;
    let o = open.get(k);
    const start = () => {
      const row: BacktestRow = {
        rule: e.alert.rule,
        entity: e.alert.entity,
        fired_at: e.at,
        resolved_at: null,
        duration_ms: 0,
        notifications: 0,
        flapped: false,
        severity: e.alert.severity,
        peak: e.alert.peak,
      };
      rows.push(row);
      o = { row, firingSince: null };
      open.set(k, o);
      return o;
    };
    switch (e.type) {
      case 'firing': {
        const cur = o ?? start();
        cur.row.notifications += 1;
        cur.firingSince = e.at;
        break;
      }
      case 'resolved':
        if (!o) break;
        o.row.notifications += 1 + (o.firingSince !== null ? repeats(o.firingSince, e.at, false) : 0);
        o.row.peak = e.alert.peak ?? o.row.peak;
        close(k, o, e.at);
        break;
      case 'flapping': {
        const cur = o ?? start();
        cur.row.flapped = true;
        cur.row.notifications += 1 + (cur.firingSince !== null ? repeats(cur.firingSince, e.at, false) : 0);
        cur.firingSince = null;
        break;
      }
      case 'settled':
        if (!o) break;
        o.row.notifications += 1;
        if (e.alert.state === 'firing') o.firingSince = e.at;
        else close(k, o, e.at);
        break;
      default:
        if (o && e.alert.peak !== null) o.row.peak = e.alert.peak;
    }
  }
  for (const o of open.values()) {
    o.row.duration_ms = Math.max(0, to - o.row.fired_at);
    if (o.firingSince !== null) o.row.notifications += repeats(o.firingSince, to, true);
  }
  return rows.sort((a, b) => a.fired_at - b.fired_at || a.rule.localeCompare(b.rule) || a.entity.localeCompare(b.entity));
}

function median(xs: number[]): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Totals per rule, for every rule in `rules` (zeros included) and any other rule with rows, ordered by name. */
export function summarize(rows: readonly BacktestRow[], events: readonly AlertEvent[], rules: readonly string[]): RuleSummary[] {
  const names = [...new Set([...rules, ...rows.map((r) => r.rule)])].sort();
  return names.map((rule) => {
    const mine = rows.filter((r) => r.rule === rule);
    return {
      rule,
      fired: mine.length,
      flapped: events.filter((e) => e.type === 'flapping' && e.alert.rule === rule).length,
      median_firing_ms: median(mine.map((r) => r.duration_ms)),
      notifications: mine.reduce((n, r) => n + r.notifications, 0),
    };
  });
}
