/**
 * Timing and the result table of `npm run bench`: medians over repetitions, the spread, and the ratio
 * against a bare baseline measured in the same run. No figure here is a pass/fail threshold.
 */

/** Summary of one series of timings, ms. */
export interface Summary {
  n: number;
  median: number;
  min: number;
  max: number;
  p90: number;
}

/** The `q` quantile (0–1) of `samples` by nearest rank; NaN for an empty list. */
export function percentile(samples: readonly number[], q: number): number {
  const s = [...samples].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
}

/** Median, min, max and p90 (nearest rank) of `samples`; NaN everywhere for an empty list. */
export function summarize(samples: readonly number[]): Summary {
  const s = [...samples].sort((a, b) => a - b);
  const n = s.length;
  if (n === 0) return { n: 0, median: NaN, min: NaN, max: NaN, p90: NaN };
  const mid = Math.floor(n / 2);
  const median = n % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  return { n, median, min: s[0]!, max: s[n - 1]!, p90: percentile(s, 0.9) };
}

/** How many times to run a measured function. */
export interface Reps {
  /** Untimed runs first (JIT, caches, connection pools). */
  warmup: number;
  /** Timed runs. */
  runs: number;
}

/** One timed step: `before` (untimed) prepares the run, `run` is what is measured. */
export interface Step {
  before?: () => unknown | Promise<unknown>;
  run: () => unknown | Promise<unknown>;
}

/**
 * Times `subject` and `baseline` alternately (A, B, A, B, ...) so drift of the machine (GC, the other
 * core's load) falls on both alike. Returns the samples of each, ms.
 */
export async function timePair(subject: Step, baseline: Step | undefined, reps: Reps): Promise<{ subject: number[]; baseline: number[] }> {
  const out = { subject: [] as number[], baseline: [] as number[] };
  for (let i = 0; i < reps.warmup + reps.runs; i++) {
    const a = await timeOnce(subject);
    const b = baseline ? await timeOnce(baseline) : NaN;
    if (i < reps.warmup) continue;
    out.subject.push(a);
    if (baseline) out.baseline.push(b);
  }
  return out;
}

async function timeOnce(step: Step): Promise<number> {
  if (step.before) await step.before();
  const t0 = performance.now();
  await step.run();
  return performance.now() - t0;
}

/** One line of the result table. */
export interface Row {
  name: string;
  /** What one run processes, e.g. "10,000 markets". */
  n: string;
  subject: Summary;
  baseline?: Summary;
  /** What the baseline is, in a few words. */
  baselineName?: string;
}

const COLUMNS = ['benchmark', 'n', 'median ms', 'spread ms (min–p90–max)', 'runs', 'baseline median ms', 'ratio'] as const;
const WIDTHS = [21, 28, 10, 24, 5, 19, 7];

/** Formats ms with a precision that suits its size. */
export function ms(v: number): string {
  if (!Number.isFinite(v)) return '–';
  if (v >= 100) return v.toFixed(0);
  if (v >= 10) return v.toFixed(1);
  if (v >= 0.1) return v.toFixed(2);
  return v.toFixed(4);
}

/** The ratio subject/baseline, formatted (e.g. "3.4×"). */
export function ratio(subject: number, baseline: number | undefined): string {
  if (baseline === undefined || !Number.isFinite(baseline) || baseline <= 0) return '–';
  const r = subject / baseline;
  return r >= 100 ? `${r.toFixed(0)}×` : r >= 10 ? `${r.toFixed(1)}×` : `${r.toFixed(2)}×`;
}

function cells(values: readonly string[]): string {
  return '| ' + values.map((v, i) => (i < 2 ? v.padEnd(WIDTHS[i]!) : v.padStart(WIDTHS[i]!))).join(' | ') + ' |';
}

/** The table header (Markdown, so the output pastes into docs/performance.md as is). */
export function header(): string {
  return [cells([...COLUMNS]), '|' + WIDTHS.map((w, i) => (i < 2 ? ':' + '-'.repeat(w + 1) : '-'.repeat(w + 1) + ':')).join('|') + '|'].join('\n');
}

/** One table row. */
export function formatRow(r: Row): string {
  const s = r.subject;
  return cells([r.name, r.n, ms(s.median), `${ms(s.min)}–${ms(s.p90)}–${ms(s.max)}`, String(s.n), r.baseline ? ms(r.baseline.median) : '–', ratio(s.median, r.baseline?.median)]);
}
