/**
 * A time-series chart as inline SVG, server-rendered: no script, no external reference, styled by the page's
 * stylesheet through classes (so light and dark mode are the page's). Used by an alert's page and by the backtest
 * report. Long series are downsampled for drawing (min, max, first and last of each pixel column), so 10,000
 * points draw as a few hundred without losing a spike.
 */
import { escapeHtml } from './escape.js';

/** One value at a time; `v: null` is a gap (no data then), drawn as a break in the line. */
export interface Point {
  t: number;
  v: number | null;
}

/** A horizontal line across the chart: a threshold, a clear level, a what-if threshold. */
export interface HLine {
  value: number;
  label: string;
  /** CSS class suffix: `threshold`, `clear`, `whatif` … */
  kind: string;
  /** Where its label sits (default right), so two lines close together keep both labels readable. */
  align?: 'left' | 'right';
}

/** A shaded time span (pending or firing), optionally in a lane of its own (for variants side by side). */
export interface Band {
  from: number;
  /** null: still going at the chart's end. */
  to: number | null;
  /** CSS class suffix: `pending`, `firing` … */
  kind: string;
  label?: string;
  /** Lane index, for bands drawn as strips under the plot (variants); undefined shades the plot itself. */
  lane?: number;
}

/** A moment marked with a tick at the top (a notification sent). */
export interface Mark {
  at: number;
  label: string;
  kind: string;
}

/** What to draw. */
export interface ChartSpec {
  from: number;
  to: number;
  series: readonly Point[];
  lines?: readonly HLine[];
  bands?: readonly Band[];
  marks?: readonly Mark[];
  /** Names of the lanes under the plot (bands with a `lane`). */
  lanes?: readonly string[];
  /** How a value reads on the axis and in tooltips (e.g. 97.1%). */
  format(v: number): string;
  /** Accessible name of the chart. */
  title: string;
  width?: number;
  height?: number;
}

const PAD = { left: 64, right: 12, top: 14, bottom: 22 };
const LANE_H = 14;

/**
 * Keeps at most about 4 points per column of `columns` over [from, to]: the first, lowest, highest and last of
 * each, in time order, and every gap. Series shorter than that are returned as they are.
 */
export function downsample(points: readonly Point[], from: number, to: number, columns: number): Point[] {
  if (points.length <= columns * 4 || to <= from) return [...points];
  const out: Point[] = [];
  const width = (to - from) / columns;
  let i = 0;
  while (i < points.length) {
    const col = Math.floor((points[i]!.t - from) / width);
    const bucket: Point[] = [];
    while (i < points.length && Math.floor((points[i]!.t - from) / width) === col) bucket.push(points[i++]!);
    // A gap inside a column is kept as a gap, so a break in the data stays a break in the line.
    const runs: Point[][] = [[]];
    for (const p of bucket) {
      if (p.v === null) {
        runs.push([]);
        if (out.at(-1)?.v !== null) out.push(p);
      } else runs.at(-1)!.push(p);
    }
    for (const run of runs) {
      if (run.length === 0) continue;
      let lo = run[0]!;
      let hi = run[0]!;
      for (const p of run) {
        if (p.v! < lo.v!) lo = p;
        if (p.v! > hi.v!) hi = p;
      }
      const keep = [...new Set([run[0]!, lo, hi, run.at(-1)!])].sort((a, b) => a.t - b.t);
      out.push(...keep);
    }
  }
  return out;
}

/** Tick step for a time span: about six ticks on round minutes, hours or days. */
function timeStep(span: number): number {
  const steps = [60_000, 300_000, 900_000, 1_800_000, 3_600_000, 3 * 3_600_000, 6 * 3_600_000, 12 * 3_600_000, 86_400_000, 2 * 86_400_000, 7 * 86_400_000];
  return steps.find((s) => span / s <= 8) ?? steps.at(-1)!;
}

function timeLabel(t: number, step: number): string {
  const iso = new Date(t).toISOString();
  return step >= 86_400_000 ? iso.slice(5, 10) : iso.slice(11, 16);
}

/** Round steps for a value axis: 1, 2 or 5 × 10^k, about five ticks. */
function valueTicks(lo: number, hi: number): number[] {
  const raw = (hi - lo) / 5;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw)!;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

const n = (x: number) => (Math.round(x * 10) / 10).toString();

/** Renders the chart as one `<svg>` element. */
export function renderChart(spec: ChartSpec): string {
  const width = spec.width ?? 900;
  const lanes = spec.lanes ?? [];
  const plotH = (spec.height ?? 260) - PAD.top - PAD.bottom;
  const height = PAD.top + plotH + PAD.bottom + lanes.length * (LANE_H + 4);
  const plotW = width - PAD.left - PAD.right;
  const from = spec.from;
  const to = spec.to > from ? spec.to : from + 1;
  const x = (t: number) => PAD.left + ((Math.min(Math.max(t, from), to) - from) / (to - from)) * plotW;

  const points = downsample(spec.series.filter((p) => p.t >= from && p.t <= to), from, to, Math.ceil(plotW));
  const values = [...points.map((p) => p.v).filter((v): v is number => v !== null && Number.isFinite(v)), ...(spec.lines ?? []).map((l) => l.value)];
  let lo = values.length ? Math.min(...values) : 0;
  let hi = values.length ? Math.max(...values) : 1;
  if (hi === lo) {
    const d = Math.abs(hi) * 0.1 || 1;
    lo -= d;
    hi += d;
  }
  const padV = (hi - lo) * 0.08;
  lo -= padV;
  hi += padV;
  const y = (v: number) => PAD.top + (1 - (v - lo) / (hi - lo)) * plotH;

  const parts: string[] = [];
  parts.push(`<rect class="chart-bg" x="${PAD.left}" y="${PAD.top}" width="${n(plotW)}" height="${n(plotH)}"/>`);
  for (const b of (spec.bands ?? []).filter((b) => b.lane === undefined)) {
    const x0 = x(b.from);
    const x1 = x(b.to ?? to);
    parts.push(`<rect class="chart-band chart-band-${escapeHtml(b.kind)}" x="${n(x0)}" y="${PAD.top}" width="${n(Math.max(1, x1 - x0))}" height="${n(plotH)}"><title>${escapeHtml(b.label ?? b.kind)}</title></rect>`);
  }
  const step = timeStep(to - from);
  for (let t = Math.ceil(from / step) * step; t <= to; t += step) {
    parts.push(`<line class="chart-grid" x1="${n(x(t))}" x2="${n(x(t))}" y1="${PAD.top}" y2="${n(PAD.top + plotH)}"/>`);
    parts.push(`<text class="chart-tick" x="${n(x(t))}" y="${n(PAD.top + plotH + 15)}" text-anchor="middle">${escapeHtml(timeLabel(t, step))}</text>`);
  }
  for (const v of valueTicks(lo, hi)) {
    parts.push(`<line class="chart-grid" x1="${PAD.left}" x2="${n(PAD.left + plotW)}" y1="${n(y(v))}" y2="${n(y(v))}"/>`);
    parts.push(`<text class="chart-tick" x="${PAD.left - 6}" y="${n(y(v) + 4)}" text-anchor="end">${escapeHtml(spec.format(v))}</text>`);
  }
  // The series: one path, broken at every gap.
  let d = '';
  let pen = false;
  for (const p of points) {
    if (p.v === null || !Number.isFinite(p.v)) {
      pen = false;
      continue;
    }
    d += `${pen ? 'L' : 'M'}${n(x(p.t))} ${n(y(p.v))}`;
    pen = true;
  }
  if (d) parts.push(`<path class="chart-series" d="${d}"><title>${escapeHtml(spec.title)}</title></path>`);
  else parts.push(`<text class="chart-empty" x="${n(PAD.left + plotW / 2)}" y="${n(PAD.top + plotH / 2)}" text-anchor="middle">no stored readings in this range</text>`);
  for (const l of spec.lines ?? []) {
    parts.push(
      `<g class="chart-hline chart-hline-${escapeHtml(l.kind)}"><line x1="${PAD.left}" x2="${n(PAD.left + plotW)}" y1="${n(y(l.value))}" y2="${n(y(l.value))}"/>` +
        `<text x="${n(l.align === 'left' ? PAD.left + 4 : PAD.left + plotW - 4)}" y="${n(y(l.value) - 4)}" text-anchor="${l.align === 'left' ? 'start' : 'end'}">${escapeHtml(`${l.label} ${spec.format(l.value)}`)}</text><title>${escapeHtml(`${l.label} ${spec.format(l.value)}`)}</title></g>`,
    );
  }
  for (const m of spec.marks ?? []) {
    if (m.at < from || m.at > to) continue;
    parts.push(`<g class="chart-mark chart-mark-${escapeHtml(m.kind)}"><line x1="${n(x(m.at))}" x2="${n(x(m.at))}" y1="${PAD.top - 6}" y2="${n(PAD.top + plotH)}"/><circle cx="${n(x(m.at))}" cy="${PAD.top - 6}" r="3.5"/><title>${escapeHtml(m.label)}</title></g>`);
  }
  lanes.forEach((name, i) => {
    const top = PAD.top + plotH + PAD.bottom + i * (LANE_H + 4);
    parts.push(`<text class="chart-lane-name" x="${PAD.left - 6}" y="${top + LANE_H - 3}" text-anchor="end">${escapeHtml(name)}</text>`);
    parts.push(`<rect class="chart-lane" x="${PAD.left}" y="${top}" width="${n(plotW)}" height="${LANE_H}"/>`);
    for (const b of (spec.bands ?? []).filter((b) => b.lane === i)) {
      const x0 = x(b.from);
      const x1 = x(b.to ?? to);
      parts.push(`<rect class="chart-band chart-band-${escapeHtml(b.kind)}" x="${n(x0)}" y="${top}" width="${n(Math.max(1, x1 - x0))}" height="${LANE_H}"><title>${escapeHtml(b.label ?? b.kind)}</title></rect>`);
    }
  });
  return `<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" role="img" aria-label="${escapeHtml(spec.title)}" data-points="${points.length}">${parts.join('')}</svg>`;
}

/** The chart's styles, for the page that embeds it (colours follow the page's light/dark variables). */
export const CHART_CSS = `
.chart{width:100%;height:auto;display:block;font:11px system-ui,sans-serif}
.chart-bg{fill:none}.chart-grid{stroke:var(--line);stroke-width:1}.chart-tick,.chart-lane-name,.chart-empty{fill:var(--muted)}
.chart-series{fill:none;stroke:var(--info);stroke-width:1.6;stroke-linejoin:round}
.chart-band-pending{fill:var(--pend);opacity:.16}.chart-band-firing{fill:var(--crit);opacity:.18}.chart-lane{fill:var(--chip)}
.chart-hline line{stroke-width:1.2;stroke-dasharray:6 4}.chart-hline text{font-size:11px}
.chart-hline-threshold line{stroke:var(--crit)}.chart-hline-threshold text{fill:var(--crit)}
.chart-hline-clear line{stroke:var(--ok)}.chart-hline-clear text{fill:var(--ok)}
.chart-hline-whatif line{stroke:var(--warn);stroke-dasharray:2 3}.chart-hline-whatif text{fill:var(--warn)}
.chart-mark line{stroke:var(--muted);stroke-width:1;stroke-dasharray:1 3}.chart-mark circle{fill:var(--fg)}
`;
