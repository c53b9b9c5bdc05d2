/**
 * `lookout backtest --html FILE`: the report as one self-contained HTML file (inline CSS and SVG, no script, no
 * network) — per rule, the counts of alerts and notifications per variant, and for each entity that fired its value
 * curve with the threshold and every `--set` what-if threshold drawn over it, and its firing periods per variant in
 * lanes side by side.
 */
import { CHART_CSS, renderChart, type Band, type HLine } from '../html/chart.js';
import { escapeHtml } from '../html/escape.js';
import { htmlDocument, styleSource } from '../html/page.js';
import { PAGE_CSS } from '../http/status-page.js';
import { formatIn, valueUnit } from '../notify/format.js';
import { ruleReads } from '../rules/define.js';
import { getRuleKind } from '../rules/registry.js';
import type { RuleBase } from '../rules/schema.js';
import { valueSeries } from '../rules/series.js';
import { historyView } from '../store/readings.js';
import type { Store } from '../store/index.js';
import type { BacktestRow } from './report.js';
import type { BacktestReport } from './run.js';
import { applySet } from './set.js';

/** Entities drawn per rule at most (the most notifying first); the rest are counted. */
const MAX_ENTITIES = 24;

const iso = (ms: number) => new Date(ms).toISOString().replace('T', ' ').slice(0, 16) + ' UTC';
const dur = (ms: number | null) => (ms === null ? '—' : formatIn('seconds', ms / 1000));

const EXTRA_CSS = `
.variants td.num{text-align:right}.entity{margin:18px 0 4px;font-weight:600}.entity .mono{font-weight:400}
h2 .muted{margin-left:8px}
`;
const CSS = PAGE_CSS + CHART_CSS + EXTRA_CSS;

interface Variant {
  name: string;
  rules: readonly RuleBase[];
  rows: readonly BacktestRow[];
}

/** Renders the report; reads each drawn entity's stored readings from `store` to draw its curve. */
export function renderBacktestHtml(report: BacktestReport, rules: readonly RuleBase[], store: Pick<Store, 'readings'>, opts: { title?: string } = {}): string {
  const variants: Variant[] = [{ name: 'as configured', rules, rows: report.current.rows }];
  if (report.changed) {
    const set = Object.entries(report.changed.set)
      .map(([k, v]) => `${k}=${String(v)}`)
      .join(', ');
    variants.push({ name: `with ${set}`, rules: applySet(rules, report.changed.set), rows: report.changed.rows });
  }
  const history = historyView(store.readings);
  const sections = report.rules.map((name) => ruleSection(name, variants, report, history, store));
  const title = opts.title ?? `lookout backtest ${iso(report.from)} – ${iso(report.to)}`;
  return htmlDocument({
    title,
    css: CSS,
    // A file opened without a server carries its policy itself: no script, nothing fetched, this stylesheet only.
    head: `<meta http-equiv="content-security-policy" content="default-src 'none'; style-src ${styleSource(CSS)}; img-src data:">`,
    body: `<header><h1>lookout backtest</h1><span>${escapeHtml(iso(report.from))} – ${escapeHtml(iso(report.to))}</span>
<span class="muted">${report.runs} poll runs, ${report.readings} readings replayed · repeats counted every ${escapeHtml(dur(report.repeat_interval_ms))}</span></header>
<main>
${sections.join('\n')}
</main>`,
  });
}

function ruleSection(name: string, variants: readonly Variant[], report: BacktestReport, history: ReturnType<typeof historyView>, store: Pick<Store, 'readings'>): string {
  const summaries = [report.current.summary, ...(report.changed ? [report.changed.summary] : [])];
  const counts = variants
    .map((v, i) => {
      const s = summaries[i]!.find((x) => x.rule === name);
      return `<tr><td>${escapeHtml(v.name)}</td><td class="num">${s?.fired ?? 0}</td><td class="num">${s?.notifications ?? 0}</td><td class="num">${s?.flapped ?? 0}</td><td class="num">${escapeHtml(dur(s?.median_firing_ms ?? null))}</td></tr>`;
    })
    .join('');
  const head = `<section><h2>${escapeHtml(name)}</h2>
<div class="scroll"><table class="variants"><thead><tr><th>variant</th><th>alerts fired</th><th>notifications</th><th>flapped</th><th>median firing</th></tr></thead><tbody>${counts}</tbody></table></div>`;

  // The entities that fired in any variant, the most notifying first.
  const weight = new Map<string, number>();
  for (const v of variants) for (const r of v.rows) if (r.rule === name) weight.set(r.entity, (weight.get(r.entity) ?? 0) + r.notifications);
  const entities = [...weight.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([e]) => e);
  if (entities.length === 0) return `${head}<p class="ok-note">Nothing fired.</p></section>`;

  const rule = variants[0]!.rules.find((r) => r.name === name);
  const kind = rule ? getRuleKind(rule.kind) : undefined;
  const unit = valueUnit(rule?.kind ?? name, (rule as { field?: string } | undefined)?.field);
  const charts = entities.slice(0, MAX_ENTITIES).map((entity) => {
    const bands: Band[] = variants.flatMap((v, lane) =>
      v.rows.filter((r) => r.rule === name && r.entity === entity).map((r) => ({ from: r.fired_at, to: r.resolved_at, kind: 'firing', lane, label: `${v.name}: firing ${iso(r.fired_at)} – ${r.resolved_at === null ? 'end' : iso(r.resolved_at)}` })),
    );
    let series: ReturnType<typeof valueSeries>['points'] = [];
    const lines: HLine[] = [];
    if (rule && kind) {
      const readings = ruleReads(kind, rule)
        .map((k) => store.readings.historyRange(k, entity, report.from, report.to))
        .find((list) => list.length > 0);
      if (readings) {
        variants.forEach((v, i) => {
          const r = v.rules.find((x) => x.name === name);
          if (!r) return;
          const judged = valueSeries(kind, r, readings, history);
          if (i === 0) series = judged.points;
          if (judged.threshold !== null && !lines.some((l) => l.value === judged.threshold)) {
            lines.push(i === 0 ? { value: judged.threshold, label: 'threshold', kind: 'threshold' } : { value: judged.threshold, label: `what-if (${v.name})`, kind: 'whatif', align: 'left' });
          }
        });
      }
    }
    const chart = renderChart({
      from: report.from,
      to: report.to,
      series,
      lines,
      bands,
      lanes: variants.map((_, i) => (i === 0 ? 'configured' : 'what-if')),
      format: (x) => formatIn(unit, x),
      title: `${name} on ${entity}`,
      height: 200,
    });
    return `<div class="entity">${escapeHtml(name)} · <span class="mono">${escapeHtml(entity)}</span></div>${chart}`;
  });
  const more = entities.length > MAX_ENTITIES ? `<p class="muted">and ${entities.length - MAX_ENTITIES} more entities not drawn.</p>` : '';
  return `${head}${charts.join('\n')}${more}</section>`;
}
