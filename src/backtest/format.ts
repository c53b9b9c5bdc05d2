/** Prints a backtest report as text tables (or JSON for machines). */
import { formatDuration } from '../config/duration.js';
import type { BacktestRow, RuleSummary } from './report.js';
import type { BacktestReport, BacktestRun } from './run.js';

const time = (t: number) => new Date(t).toISOString().slice(0, 16).replace('T', ' ');

function table(head: string[], rows: string[][], right: Set<number> = new Set()): string[] {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (right.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(head), ...rows.map(line)];
}

function rowCells(r: BacktestRow): string[] {
  const entity = r.entity.length > 40 ? `${r.entity.slice(0, 24)}…${r.entity.slice(-12)}` : r.entity;
  return [
    r.rule,
    entity,
    time(r.fired_at),
    r.resolved_at === null ? 'still firing' : time(r.resolved_at),
    formatDuration(r.duration_ms),
    String(r.notifications),
    r.flapped ? 'yes' : '',
  ];
}

function episodes(run: BacktestRun): string[] {
  if (run.rows.length === 0) return ['(nothing fired)'];
  return table(['rule', 'entity', 'fired at (UTC)', 'resolved at', 'duration', 'notifications', 'flapped'], run.rows.map(rowCells), new Set([5]));
}

const sumCells = (s: RuleSummary | undefined): string[] => [
  String(s?.fired ?? 0),
  String(s?.flapped ?? 0),
  s?.median_firing_ms === null || s === undefined ? '-' : formatDuration(s.median_firing_ms),
  String(s?.notifications ?? 0),
];

/** The report as lines of text, or as one JSON document. */
export function formatBacktest(report: BacktestReport, opts: { json?: boolean } = {}): string {
  if (opts.json) return JSON.stringify(report, null, 2);
  const lines: string[] = [];
  const how = report.grouping.length === 0 ? 'nothing to replay' : `runs rebuilt from ${report.grouping.join(' and ')}`;
  lines.push(`backtest ${time(report.from)} → ${time(report.to)} UTC: ${report.runs} poll runs, ${report.readings} readings (${how})`);
  if (report.resolution.some((p) => p.resolution !== 'raw')) {
    const parts = report.resolution.map((p) => `${time(p.from)} → ${time(p.to)} ${p.resolution === 'raw' ? 'every reading' : '5-minute buckets (each rule judged the worst value of a bucket for its direction; no absence or source_down there)'}`);
    lines.push(`resolution: ${parts.join('; ')}`);
  }
  if (report.unassigned > 0) lines.push(`note: ${report.unassigned} readings stored too long after their poll run finished were not replayed`);
  const set = report.changed ? Object.entries(report.changed.set).map(([k, v]) => `${k}=${String(v)}`).join(', ') : '';
  lines.push('');
  lines.push(report.changed ? '== current rules ==' : '== episodes ==');
  lines.push(...episodes(report.current));
  if (report.changed) {
    lines.push('');
    lines.push(`== with ${set} ==`);
    lines.push(...episodes(report.changed));
  }
  lines.push('');
  const repeat = formatDuration(report.repeat_interval_ms);
  if (!report.changed) {
    lines.push(`== summary (notifications count repeats every ${repeat} while firing) ==`);
    lines.push(...table(['rule', 'fired', 'flapped', 'median firing', 'notifications'], report.current.summary.map((s) => [s.rule, ...sumCells(s)]), new Set([1, 2, 4])));
  } else {
    lines.push(`== summary: current | with ${set} (notifications count repeats every ${repeat}) ==`);
    const changed = new Map(report.changed.summary.map((s) => [s.rule, s]));
    const rows = report.current.summary.map((s) => [s.rule, ...sumCells(s), '|', ...sumCells(changed.get(s.rule))]);
    lines.push(...table(['rule', 'fired', 'flapped', 'median', 'notif', '|', 'fired', 'flapped', 'median', 'notif'], rows, new Set([1, 2, 4, 6, 7, 9])));
  }
  if (report.current.dataErrors > 0) lines.push('', `${report.current.dataErrors} readings could not be judged (data errors: stale or impossible values)`);
  return lines.join('\n');
}
