/**
 * An alert's page at `GET /alerts/{fingerprint}`: the rule's value over the chosen range from stored history, the
 * threshold (and `clear_below`) as lines, pending and firing periods shaded, each notification sent marked; then
 * the labels, annotations, the silences that match it and its transitions. Server-rendered HTML with an inline SVG
 * chart, no script; every value from the data service or a user is escaped.
 */
import { renderChart, CHART_CSS, type Point } from '../html/chart.js';
import { escapeHtml } from '../html/escape.js';
import type { Period } from '../alerts/periods.js';
import { formatIn, type ValueUnit } from '../notify/format.js';
import { htmlDocument, pageCsp } from '../html/page.js';
import { PAGE_CSS, relativeTime } from './status-page.js';
import type { ApiAlert, Silence } from './types.js';

/** The ranges a page offers, by name. */
export const ALERT_PAGE_RANGES: Readonly<Record<string, number>> = { '1h': 3_600_000, '6h': 6 * 3_600_000, '24h': 24 * 3_600_000, '7d': 7 * 86_400_000 };
/** The range shown when none is asked for. */
export const DEFAULT_ALERT_RANGE = '6h';

/** One notification that went out about the alert. */
export interface SentNote {
  at: number;
  notifier: string;
  /** How the alert was announced in it. */
  status: string;
}

/** One stored transition of the alert. */
export interface Transition {
  at: number;
  type: string;
  value: number | null;
}

/** Everything the page shows. */
export interface AlertPageView {
  now: number;
  alert: ApiAlert;
  /** The range's name (a key of {@link ALERT_PAGE_RANGES}). */
  range: string;
  series: readonly Point[];
  threshold: number | null;
  clearBelow: number | null;
  unit: ValueUnit;
  periods: readonly Period[];
  notifications: readonly SentNote[];
  transitions: readonly Transition[];
  silences: readonly Silence[];
  /** Why there is no curve (e.g. `source_down` has no value), when there is none to draw. */
  noSeries?: string;
  version?: string;
}

const PAGE_EXTRA_CSS = `
.ranges a{margin-right:8px}.ranges a.on{font-weight:700;text-decoration:none;color:var(--fg)}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:4px 16px;margin:8px 0}dl.kv dt{color:var(--muted)}dl.kv dd{margin:0;word-break:break-word}
a{color:var(--info)}
`;
const CSS = PAGE_CSS + CHART_CSS + PAGE_EXTRA_CSS;

/** The alert page's Content-Security-Policy (its own stylesheet hash; no script). */
export const ALERT_PAGE_CSP = pageCsp(CSS);

const iso = (ms: number) => new Date(ms).toISOString().replace('T', ' ').slice(0, 19) + ' UTC';
const when = (ms: number | null, now: number) =>
  ms === null ? '—' : `<time datetime="${new Date(ms).toISOString()}" title="${iso(ms)}">${escapeHtml(relativeTime(ms, now))}</time>`;

function kv(record: Readonly<Record<string, string>>): string {
  const rows = Object.entries(record).map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd class="mono">${escapeHtml(v)}</dd>`);
  return rows.length ? `<dl class="kv">${rows.join('')}</dl>` : '<p class="muted">none</p>';
}

function table(head: string[], rows: string[][], empty: string): string {
  if (rows.length === 0) return `<p class="muted">${escapeHtml(empty)}</p>`;
  return `<div class="scroll"><table><thead><tr>${head.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr></thead><tbody>${rows
    .map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join('')}</tr>`)
    .join('')}</tbody></table></div>`;
}

/** Renders the whole page. */
export function renderAlertPage(view: AlertPageView): string {
  const a = view.alert;
  const span = ALERT_PAGE_RANGES[view.range] ?? ALERT_PAGE_RANGES[DEFAULT_ALERT_RANGE]!;
  const from = view.now - span;
  const fmt = (v: number) => formatIn(view.unit, v);
  const lines = [
    ...(view.threshold !== null ? [{ value: view.threshold, label: 'threshold', kind: 'threshold' }] : []),
    ...(view.clearBelow !== null ? [{ value: view.clearBelow, label: 'clears below', kind: 'clear' }] : []),
  ];
  const chart = view.noSeries
    ? `<p class="muted">${escapeHtml(view.noSeries)}</p>`
    : renderChart({
        from,
        to: view.now,
        series: view.series,
        lines,
        bands: view.periods.map((p) => ({ from: p.from, to: p.to, kind: p.kind, label: `${p.kind} ${iso(p.from)} – ${p.to === null ? 'now' : iso(p.to)}` })),
        marks: view.notifications.map((n) => ({ at: n.at, kind: n.status, label: `${n.status} sent to ${n.notifier} at ${iso(n.at)}` })),
        format: fmt,
        title: `${a.rule} on ${a.entity}: value over the last ${view.range}`,
      });
  const ranges = Object.keys(ALERT_PAGE_RANGES)
    .map((r) => `<a href="?range=${encodeURIComponent(r)}"${r === view.range ? ' class="on" aria-current="page"' : ''}>${escapeHtml(r)}</a>`)
    .join('');
  const value = a.value === null ? '—' : fmt(a.value);
  return htmlDocument({
    title: `${a.state} ${a.rule} ${a.entity} · lookout`,
    css: CSS,
    body: `<header><h1><a href="/">lookout</a></h1>${view.version ? `<span class="muted">v${escapeHtml(view.version)}</span>` : ''}
<span class="badge ${escapeHtml(a.state)}">${escapeHtml(a.state)}${a.flapping ? ' · flapping' : ''}</span>
<span class="rule">${escapeHtml(a.rule)}</span><span class="mono">${escapeHtml(a.entity)}</span>
<span class="muted">${escapeHtml(a.severity)} · value ${escapeHtml(value)}${a.threshold !== null ? ` vs ${escapeHtml(fmt(a.threshold))}` : ''}</span></header>
<main>
<section><h2>Value</h2><p class="ranges">${ranges}</p>
${chart}
<p class="muted">Shaded: pending (amber) and firing (red). Dots on top: notifications sent. As of ${escapeHtml(iso(view.now))}.</p></section>
<section><h2>Annotations</h2>${kv(a.annotations)}</section>
<section><h2>Labels</h2>${kv(a.labels)}<p class="muted">fingerprint <span class="mono">${escapeHtml(a.fingerprint)}</span></p></section>
<section><h2>Silences that match</h2>${table(
    ['id', 'matchers', 'ends', 'author', 'comment'],
    view.silences.map((s) => [
      `<span class="mono">${escapeHtml(s.id)}</span>`,
      s.matchers.map((m) => `<span class="chip">${escapeHtml(m.name)}${escapeHtml(m.op)}<b>${escapeHtml(m.value)}</b></span>`).join(' '),
      when(s.endsAt, view.now),
      escapeHtml(s.author),
      escapeHtml(s.comment),
    ]),
    'No silence matches this alert.',
  )}</section>
<section><h2>Notifications in range</h2>${table(
    ['sent', 'notifier', 'as'],
    [...view.notifications].reverse().map((n) => [when(n.at, view.now), escapeHtml(n.notifier), escapeHtml(n.status)]),
    'None sent in this range.',
  )}</section>
<section><h2>Transitions</h2>${table(
    ['at', 'to', 'value'],
    [...view.transitions].reverse().map((t) => [when(t.at, view.now), escapeHtml(t.type), escapeHtml(t.value === null ? '—' : fmt(t.value))]),
    'No transitions stored.',
  )}</section>
</main>`,
  });
}
