/**
 * The performance targets (issue "Performance close to the floor", ids B1–B12) judged against what this run
 * measured: each target's figure, met or missed — or "not measured", with what is missing, where no benchmark
 * measures it yet. Printed under the table so a run says at once where lookout stands.
 */
import type { Row } from './stats.js';

/** Figures a benchmark reports besides its rows (bytes per row, RSS, event-loop blocks), by key. */
export type Figures = ReadonlyMap<string, number>;

/** One target's verdict in this run. */
export interface TargetResult {
  id: string;
  what: string;
  target: string;
  /** What was measured, in words; empty when nothing was. */
  measured: string;
  status: 'met' | 'missed' | 'not measured';
  /** What the figure covers that the target does not, or what is missing. */
  note?: string;
}

interface Target {
  id: string;
  what: string;
  target: string;
  judge(rows: ReadonlyMap<string, Row>, figures: Figures): Omit<TargetResult, 'id' | 'what' | 'target'>;
}

const ratio = (r: Row | undefined) => (r?.baseline ? r.subject.median / r.baseline.median : undefined);
const fmt = (v: number, digits = 0) => v.toLocaleString('en-US', { maximumFractionDigits: digits });
const missing = (note: string) => ({ measured: '', status: 'not measured' as const, note });
const verdict = (ok: boolean) => (ok ? ('met' as const) : ('missed' as const));

/** A target judged on one recorded figure: `ok` says whether it is met, `show` how it reads. */
function onFigure(key: string, ranWhen: string, show: (v: number) => string, ok: (v: number) => boolean, note?: string): Target['judge'] {
  return (_rows, f) => {
    const v = f.get(key);
    return v === undefined ? missing(`${ranWhen} did not run`) : { measured: show(v), status: verdict(ok(v)), ...(note ? { note } : {}) };
  };
}

const TARGETS: readonly Target[] = [
  {
    id: 'B1',
    what: 'e2e markets poll, 10,000 markets, vs its bare parts',
    target: '≤ 1.5×',
    judge: (rows) => {
      const r = ratio(rows.get('e2e.markets'));
      if (r === undefined) return missing('e2e did not run');
      return { measured: `${r.toFixed(2)}×`, status: verdict(r <= 1.5), note: 'its bare parts: fetch + JSON.parse, a prepared insert of the rows, a gauge set per row' };
    },
  },
  {
    id: 'B2',
    what: 'e2e positions poll, 50,000 positions, vs bare page walk + insert',
    target: '≤ 1.5×',
    judge: (rows) => {
      const r = ratio(rows.get('e2e.positions'));
      return r === undefined ? missing('e2e did not run') : { measured: `${r.toFixed(2)}×`, status: verdict(r <= 1.5) };
    },
  },
  {
    id: 'B3',
    what: 'store of one poll vs a bare prepared insert',
    target: '≤ 1.3×',
    judge: (rows) => {
      const r = ratio(rows.get('store.save'));
      return r === undefined ? missing('store.save did not run') : { measured: `${r.toFixed(2)}×`, status: verdict(r <= 1.3) };
    },
  },
  {
    id: 'B4',
    what: 'evaluation of all rule kinds, 10,000 markets + 50,000 positions',
    target: '≤ 25 ms calm, ≤ 50 ms incident',
    judge: (rows) => {
      // One markets poll and one positions poll judged: the two applyPoll medians added.
      const both = (markets: string, positions: string) => {
        const m = rows.get(markets)?.subject.median;
        const p = rows.get(positions)?.subject.median;
        return m === undefined || p === undefined ? undefined : { m, p, sum: m + p };
      };
      const calm = both('rules.seven', 'rules.positions');
      const incident = both('rules.seven.incident', 'rules.positions.incident');
      if (!calm || !incident) return missing('rules.seven(.incident) and rules.positions(.incident) did not all run');
      return {
        measured: `${fmt(calm.sum, 1)} ms calm, ${fmt(incident.sum, 1)} ms incident`,
        status: verdict(calm.sum <= 25 && incident.sum <= 50),
        note: `markets + positions: ${fmt(calm.m, 1)} + ${fmt(calm.p, 1)} ms calm, ${fmt(incident.m, 1)} + ${fmt(incident.p, 1)} ms incident`,
      };
    },
  },
  {
    id: 'B5',
    what: 'GET /metrics over HTTP at SPEC §8 scale',
    target: '≤ 50 ms median, ≤ 100 ms p99 while a poll runs',
    judge: (rows, f) => {
      const m = rows.get('metrics.http')?.subject.median;
      const p99 = f.get('scrape_polling_p99_ms');
      if (m === undefined) return missing('metrics.http did not run');
      const median = `${fmt(m, 1)} ms median`;
      if (p99 === undefined) return { measured: median, status: m <= 50 ? 'not measured' : 'missed', note: 'the p99 while a poll runs: e2e did not run' };
      return { measured: `${median}, ${fmt(p99)} ms p99 while a poll runs`, status: verdict(m <= 50 && p99 <= 100), note: 'median: idle, the first scrape after a poll (metrics.http); p99: e2e.metrics.polling' };
    },
  },
  {
    id: 'B6',
    what: 'daemon RSS at SPEC §8 scale after 500 cycles',
    target: '≤ 200 MB, growth 100→500 ≤ 5%',
    judge: (_rows, f) => {
      const from = f.get('cycles_rss_from_mb');
      const last = f.get('cycles_rss_last_mb');
      if (from === undefined || last === undefined) return missing('cycles did not run');
      const cycles = f.get('cycles_run') ?? 0;
      const markets = f.get('cycles_markets') ?? 0;
      const growth = (100 * (last - from)) / from;
      const measured = `${fmt(last)} MB after ${fmt(cycles)} cycles, ${growth >= 0 ? '+' : ''}${growth.toFixed(1)}% since cycle ${fmt(f.get('cycles_from') ?? 0)}`;
      if (cycles < 500 || markets < 10_000) return { measured, status: 'not measured', note: `${fmt(cycles)} cycles of ${fmt(markets)} markets (quick run): the full run judges B6` };
      return { measured, status: verdict(last <= 200 && growth <= 5) };
    },
  },
  {
    id: 'B6s',
    what: 'daemon RSS watching 200 markets',
    target: '≤ 80 MB',
    judge: onFigure('rss_small_mb', 'e2e.small', (v) => `${fmt(v)} MB`, (v) => v <= 80, 'the daemon alone, median of a sample after each markets poll; 1,000 positions'),
  },
  {
    id: 'B7',
    what: 'storm: 10,000 markets cross a threshold in one poll',
    target: 'one message per group, none lost',
    judge: (_rows, f) => {
      const last = f.get('storm_last_ms');
      const groups = f.get('storm_groups');
      if (last === undefined || groups === undefined) return missing('storm did not run');
      const lost = f.get('storm_lost') ?? 0;
      const duplicated = f.get('storm_duplicated') ?? 0;
      const markets = f.get('storm_markets') ?? 0;
      return {
        measured: `${fmt(groups)} groups: ${fmt(lost)} lost, ${fmt(duplicated)} duplicated; the last message ${fmt(last / 1000, 1)} s after the change`,
        status: verdict(lost === 0 && duplicated === 0),
        note: `${fmt(markets)} markets${markets < 10_000 ? ' (quick run)' : ''}, Slack at 1 message/s`,
      };
    },
  },
  {
    id: 'B8',
    what: 'alert latency vs Prometheus → Alertmanager',
    target: '≤ 0.5×',
    judge: (_rows, f) => {
      const own = f.get('latency_lookout_ms');
      const am = f.get('latency_prometheus_ms');
      if (own === undefined || am === undefined) return missing('alert.latency did not run, or Prometheus/Alertmanager are not installed (see its note)');
      const r = own / am;
      return {
        measured: `${r.toFixed(2)}× (${fmt(own / 1000, 2)} s vs ${fmt(am / 1000, 2)} s, medians)`,
        status: verdict(r <= 0.5),
        note: `RSS: lookout ${fmt(f.get('latency_lookout_rss_mb') ?? NaN)} MB, Prometheus + Alertmanager ${fmt(f.get('latency_prometheus_rss_mb') ?? NaN)} MB`,
      };
    },
  },
  {
    id: 'B9',
    what: 'longest event-loop block during a markets and a positions poll',
    target: '≤ 50 ms',
    judge: (_rows, f) => {
      const m = f.get('loop_block_markets_ms');
      const p = f.get('loop_block_positions_ms');
      if (m === undefined || p === undefined) return missing('e2e did not run');
      const tm = f.get('txn_max_markets_ms');
      const tp = f.get('txn_max_positions_ms');
      const im = f.get('inside_block_markets_ms');
      const ip = f.get('inside_block_positions_ms');
      const om = f.get('outside_block_markets_ms');
      const op = f.get('outside_block_positions_ms');
      const split = [tm, tp, im, ip, om, op].every((v) => v !== undefined)
        ? { note: `the store transaction stayed open up to ${fmt(tm!)} / ${fmt(tp!)} ms, in slices; the longest block while it was open ${fmt(im!)} / ${fmt(ip!)} ms, outside it ${fmt(om!)} / ${fmt(op!)} ms` }
        : {};
      return { measured: `${fmt(m)} ms markets, ${fmt(p)} ms positions`, status: verdict(Math.max(m, p) <= 50), ...split };
    },
  },
  {
    id: 'B10',
    what: 'bytes on disk per stored market reading',
    target: '≤ 120',
    judge: onFigure('bytes_per_history_row', 'store.replay', (v) => `${fmt(v)} bytes`, (v) => v <= 120, 'as history keeps it past its first hour (sealed in hourly chunks), with their indexes, every field changing every poll; the head (the current hour, a row each) is in the store.replay note'),
  },
  {
    id: 'B11',
    what: '30 days of history at SPEC §8 worst case',
    target: '≤ 25 GB',
    judge: onFigure('gb_30d', 'store.replay', (v) => `${fmt(v)} GB`, (v) => v <= 25, '2 days raw + 28 days of 5-minute buckets, projected from the measured bytes per row and per bucket, not measured'),
  },
  {
    id: 'B12',
    what: 'backtest replay throughput',
    target: '≥ 1,000,000 readings/s',
    judge: (rows, f) => {
      const r = rows.get('backtest.replay');
      const n = f.get('replay_rows');
      if (!r || n === undefined) return missing('store.replay did not run');
      const perS = n / (r.subject.median / 1000);
      const decode = rows.get('store.replay');
      const alone = decode ? `; iterateHistory alone ${fmt(n / (decode.subject.median / 1000))} readings/s` : '';
      return { measured: `${fmt(perS)} readings/s`, status: verdict(perS >= 1_000_000), note: `a backtest of one starter rule (utilization_above) over an hour of sealed history${alone}` };
    },
  },
];

/** Every target judged against this run's rows and figures, in id order. */
export function judgeTargets(rows: readonly Row[], figures: Figures): TargetResult[] {
  const byName = new Map(rows.map((r) => [r.name, r]));
  return TARGETS.map((t) => ({ id: t.id, what: t.what, target: t.target, ...t.judge(byName, figures) }));
}

/** The verdicts as a Markdown table, as docs/performance.md keeps it. */
export function formatTargets(results: readonly TargetResult[]): string[] {
  const lines = ['| id | what | target | this run | status |', '|:---|:---|:---|:---|:---|'];
  for (const r of results) lines.push(`| ${r.id} | ${r.what} | ${r.target} | ${[r.measured, r.note ? `(${r.note})` : ''].filter(Boolean).join(' ') || '–'} | ${r.status} |`);
  return lines;
}
