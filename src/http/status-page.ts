/**
 * The status page at `GET /`: firing and pending alerts by severity, each poll's last run, active
 * silences. Server-rendered HTML with inline CSS, no script; every value from the data service or
 * a user is escaped (symbols and labels are untrusted).
 */
import { escapeHtml } from '../html/escape.js';
import { htmlDocument, pageCsp } from '../html/page.js';
import { formatValue as formatEvidence } from '../notify/format.js';
import { SEVERITIES } from '../model.js';
import { alertSince, type ApiAlert, type PollStatus, type Readiness, type Silence } from './types.js';
import { compareText } from '../text-format.js';

/** What the page shows. */
export interface StatusView {
  now: number;
  alerts: readonly ApiAlert[];
  polls: readonly PollStatus[];
  silences: readonly Silence[];
  ready: Readiness;
  version?: string;
}

export { escapeHtml };

/** "3m ago" / "in 2h" relative to now, for a Unix ms time. */
export function relativeTime(ms: number | null | undefined, now: number): string {
  if (typeof ms !== 'number' || !Number.isFinite(ms)) return '—';
  const d = Math.round((now - ms) / 1000);
  const abs = Math.abs(d);
  const text =
    abs < 60 ? `${abs}s` : abs < 3600 ? `${Math.floor(abs / 60)}m` : abs < 86_400 ? `${Math.floor(abs / 3600)}h ${Math.floor((abs % 3600) / 60)}m` : `${Math.floor(abs / 86_400)}d ${Math.floor((abs % 86_400) / 3600)}h`;
  return d >= 0 ? `${text} ago` : `in ${text}`;
}

const time = (ms: number | null | undefined, now: number) =>
  typeof ms === 'number' && Number.isFinite(ms)
    ? `<time datetime="${new Date(ms).toISOString()}" title="${new Date(ms).toISOString()}">${escapeHtml(relativeTime(ms, now))}</time>`
    : '—';

const HIDDEN_LABELS = new Set(['rule', 'alertname', 'severity']);

function labelChips(labels: Record<string, string>, entity?: string): string {
  return Object.entries(labels)
    .filter(([k, v]) => !HIDDEN_LABELS.has(k) && v !== entity)
    .map(([k, v]) => `<span class="chip">${escapeHtml(k)}=<b>${escapeHtml(v)}</b></span>`)
    .join(' ');
}

function alertRows(alerts: readonly ApiAlert[], now: number): string {
  return alerts
    .map((a) => {
      const summary = a.annotations.summary ?? a.annotations.description ?? '';
      return `<tr class="sev-${escapeHtml(a.severity)}">
<td><span class="badge ${escapeHtml(a.state)}">${escapeHtml(a.state)}${a.flapping ? ' · flapping' : ''}</span></td>
<td class="rule"><a href="/alerts/${escapeHtml(encodeURIComponent(a.fingerprint))}">${escapeHtml(a.rule)}</a>${summary ? `<div class="muted">${escapeHtml(summary)}</div>` : ''}</td>
<td class="mono">${escapeHtml(a.entity)}</td>
<td class="labels">${labelChips(a.labels, a.entity)}</td>
<td class="num">${escapeHtml(formatEvidence(a.kind, a.value))}${a.threshold !== null ? ` <span class="muted">vs ${escapeHtml(formatEvidence(a.kind, a.threshold))}</span>` : ''}</td>
<td>${time(alertSince(a), now)}</td>
<td>${time(a.last_notified !== undefined ? a.last_notified : a.last_notified_at, now)}</td>
</tr>`;
    })
    .join('\n');
}

function alertsSection(view: StatusView): string {
  const active = view.alerts.filter((a) => a.state === 'firing' || a.state === 'pending');
  if (active.length === 0) return `<section><h2>Alerts</h2><p class="ok-note">No firing or pending alerts.</p></section>`;
  const rank = (a: ApiAlert) => (a.state === 'firing' ? 0 : 1);
  const parts: string[] = [];
  for (const severity of [...SEVERITIES].reverse()) {
    const list = active
      .filter((a) => a.severity === severity)
      .sort((a, b) => rank(a) - rank(b) || compareText(a.rule, b.rule) || compareText(a.entity, b.entity));
    if (list.length === 0) continue;
    const firing = list.filter((a) => a.state === 'firing').length;
    parts.push(`<h3 class="sev-title sev-${severity}">${severity} <span class="muted">${firing} firing, ${list.length - firing} pending</span></h3>
<div class="scroll"><table>
<thead><tr><th>state</th><th>rule</th><th>entity</th><th>labels</th><th>value</th><th>since</th><th>last notified</th></tr></thead>
<tbody>
${alertRows(list, view.now)}
</tbody></table></div>`);
  }
  return `<section><h2>Alerts</h2>\n${parts.join('\n')}</section>`;
}

function pollsSection(view: StatusView): string {
  if (view.polls.length === 0) return `<section><h2>Polls</h2><p class="muted">No poll has run yet.</p></section>`;
  const rows = view.polls
    .map((p) => {
      const state = p.ok === null ? 'never run' : p.ok ? 'ok' : 'failing';
      const cls = p.ok === null ? 'pending' : p.ok ? 'ok' : 'firing';
      const error = p.error ? `${escapeHtml(p.error.length > 300 ? p.error.slice(0, 300) + '…' : p.error)}${p.error_at ? ` <span class="muted">(${time(p.error_at, view.now)})</span>` : ''}` : '—';
      return `<tr>
<td class="rule">${escapeHtml(p.name)}<div class="muted">${escapeHtml(p.kind)}</div></td>
<td><span class="badge ${cls}">${state}</span>${p.consecutive_failures > 0 ? ` <span class="muted">×${p.consecutive_failures}</span>` : ''}</td>
<td>${time(p.last_success_at, view.now)}</td>
<td>${time(p.last_finished_at, view.now)}</td>
<td class="num">${p.duration_ms === null ? '—' : escapeHtml((p.duration_ms / 1000).toFixed(2)) + ' s'}</td>
<td class="num">${p.rows ?? '—'}${p.rejected ? ` <span class="muted">(${p.rejected} rejected)</span>` : ''}</td>
<td class="err">${error}</td>
</tr>`;
    })
    .join('\n');
  return `<section><h2>Polls</h2><div class="scroll"><table>
<thead><tr><th>poll</th><th>status</th><th>last success</th><th>last run</th><th>duration</th><th>rows</th><th>last error</th></tr></thead>
<tbody>
${rows}
</tbody></table></div></section>`;
}

function silencesSection(view: StatusView): string {
  const active = view.silences.filter((s) => s.endsAt > view.now);
  if (active.length === 0) return `<section><h2>Silences</h2><p class="muted">No active silences.</p></section>`;
  const rows = active
    .map(
      (s) => `<tr>
<td class="mono">${escapeHtml(s.id)}</td>
<td>${s.matchers.map((m) => `<span class="chip">${escapeHtml(m.name)}${escapeHtml(m.op)}<b>${escapeHtml(m.value)}</b></span>`).join(' ')}</td>
<td>${s.startsAt > view.now ? `starts ${time(s.startsAt, view.now)}, ` : ''}ends ${time(s.endsAt, view.now)}</td>
<td>${escapeHtml(s.author)}</td>
<td>${escapeHtml(s.comment)}</td>
</tr>`,
    )
    .join('\n');
  return `<section><h2>Silences</h2><div class="scroll"><table>
<thead><tr><th>id</th><th>matchers</th><th>time</th><th>author</th><th>comment</th></tr></thead>
<tbody>
${rows}
</tbody></table></div></section>`;
}

/** The stylesheet of lookout's pages (light and dark), shared by the status page and an alert's page. */
export const PAGE_CSS = `
:root{color-scheme:light dark;--bg:#f6f7f9;--fg:#1c2026;--card:#fff;--muted:#68707c;--line:#e1e4e8;--chip:#eef1f4;
--crit:#c62828;--warn:#b26a00;--info:#1565c0;--ok:#2e7d32;--pend:#8a6d00}
@media (prefers-color-scheme:dark){:root{--bg:#121417;--fg:#e4e7eb;--card:#1b1e22;--muted:#9aa3ad;--line:#2c3138;--chip:#262b31;
--crit:#ef5350;--warn:#ffb74d;--info:#64b5f6;--ok:#81c784;--pend:#e6c14d}}
*{box-sizing:border-box}body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--bg);color:var(--fg)}
header{display:flex;flex-wrap:wrap;gap:12px;align-items:baseline;padding:16px 24px;border-bottom:1px solid var(--line);background:var(--card)}
header h1{margin:0;font-size:20px}main{padding:8px 24px 32px;max-width:1400px}
section{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:4px 16px 12px;margin:16px 0}
h2{font-size:16px;margin:12px 0 8px}h3{font-size:14px;margin:14px 0 6px;text-transform:uppercase;letter-spacing:.04em}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:6px 8px;border-top:1px solid var(--line);vertical-align:top}
th{font-weight:600;color:var(--muted);font-size:12px;border-top:none}.scroll{overflow-x:auto}
.muted{color:var(--muted);font-size:12px;font-weight:400}time{white-space:nowrap}.mono{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px;word-break:break-all}
.num{font-variant-numeric:tabular-nums;white-space:nowrap}.rule{font-weight:600}.err{max-width:420px;word-break:break-word}
.chip{display:inline-block;background:var(--chip);border-radius:4px;padding:0 6px;margin:1px 0;font-size:12px;font-family:ui-monospace,Menlo,Consolas,monospace}
.badge{display:inline-block;border-radius:10px;padding:0 8px;font-size:12px;font-weight:600;border:1px solid currentColor}
.badge.firing{color:var(--crit)}.badge.pending{color:var(--pend)}.badge.ok{color:var(--ok)}
.sev-title.sev-critical{color:var(--crit)}.sev-title.sev-warning{color:var(--warn)}.sev-title.sev-info{color:var(--info)}
tr.sev-critical td:first-child{box-shadow:inset 3px 0 var(--crit)}tr.sev-warning td:first-child{box-shadow:inset 3px 0 var(--warn)}
tr.sev-info td:first-child{box-shadow:inset 3px 0 var(--info)}.ok-note{color:var(--ok)}
.rule a{color:inherit}.ready{font-weight:600}.ready.yes{color:var(--ok)}.ready.no{color:var(--crit)}
`;

/** The status page's Content-Security-Policy. */
export const STATUS_PAGE_CSP = pageCsp(PAGE_CSS);

/** Renders the whole page. */
export function renderStatusPage(view: StatusView): string {
  const firing = view.alerts.filter((a) => a.state === 'firing').length;
  const pending = view.alerts.filter((a) => a.state === 'pending').length;
  const ready = view.ready.ok
    ? '<span class="ready yes">ready</span>'
    : `<span class="ready no">not ready: ${escapeHtml(view.ready.reason ?? 'starting')}</span>`;
  return htmlDocument({
    title: `${firing > 0 ? `(${firing} firing) ` : ''}lookout`,
    css: PAGE_CSS,
    head: '<meta http-equiv="refresh" content="10">',
    body: `<header><h1>lookout</h1>${view.version ? `<span class="muted">v${escapeHtml(view.version)}</span>` : ''}
${ready}<span>${firing} firing · ${pending} pending</span>
<span class="muted">as of <time datetime="${new Date(view.now).toISOString()}">${new Date(view.now).toISOString().replace('T', ' ').slice(0, 19)} UTC</time> · refreshes every 10 s</span></header>
<main>
${alertsSection(view)}
${pollsSection(view)}
${silencesSection(view)}
</main>`,
  });
}
