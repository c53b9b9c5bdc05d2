/** `runBacktest`: what the rules would have fired on stored history, optionally side by side with changed parameters. */
import type { AlertingSettings, SourceDownSettings } from '../alerts/engine.js';
import type { Logger } from '../log.js';
import type { RuleBase } from '../rules/schema.js';
import type { Store } from '../store/index.js';
import { replay, type ResolutionPart } from './replay.js';
import { buildRows, summarize, type BacktestRow, type RuleSummary } from './report.js';
import { applySet, BacktestError } from './set.js';

/** Alertmanager's default repeat_interval, used to count repeats while firing. */
export const DEFAULT_REPEAT_INTERVAL = 4 * 3_600_000;

/** Options of {@link runBacktest}. */
export interface BacktestOptions {
  /** The store holding the history (opened read-only is enough). Its alert tables are never touched. */
  store: Pick<Store, 'db' | 'readings'>;
  rules: readonly RuleBase[];
  alerting: AlertingSettings;
  sourceDown?: SourceDownSettings;
  from: number;
  to: number;
  /** Only this rule (source_down is then left out). */
  rule?: string;
  /** 'rule.param' → value (text is converted to the parameter's type; durations like 15m): runs a second, changed replay. */
  set?: Record<string, unknown>;
  repeatInterval?: number;
  /** Replayed time and total time in ms; called as the replay moves (twice over with `set`). */
  onProgress?: (done: number, total: number) => void;
  log?: Logger;
}

/** One replay's result. */
export interface BacktestRun {
  rows: BacktestRow[];
  summary: RuleSummary[];
  /** Readings the rules could not judge (stale, out of range values, ...). */
  dataErrors: number;
}

/** What a backtest found. */
export interface BacktestReport {
  from: number;
  to: number;
  rules: string[];
  runs: number;
  readings: number;
  grouping: Array<'poll_runs' | 'timestamps'>;
  /** History rows stored too long after their poll run finished to be replayed with it. */
  unassigned: number;
  /** Which parts of the range were replayed from full-resolution history and which from 5-minute buckets. */
  resolution: ResolutionPart[];
  repeat_interval_ms: number;
  current: BacktestRun;
  /** With `set` applied. */
  changed?: BacktestRun & { set: Record<string, unknown> };
}

/** Replays [from, to] through the rules (and once more with `set`); never writes to `store`. */
export function runBacktest(opts: BacktestOptions): BacktestReport {
  if (!(opts.to > opts.from)) throw new BacktestError(`--to must be after --from`);
  let rules = opts.rules.filter((r) => r.enabled !== false);
  if (opts.rule !== undefined) {
    rules = rules.filter((r) => r.name === opts.rule);
    if (rules.length === 0) throw new BacktestError(`no enabled rule named '${opts.rule}' (rules: ${opts.rules.map((r) => r.name).join(', ') || 'none'})`);
  }
  const repeat = opts.repeatInterval ?? DEFAULT_REPEAT_INTERVAL;
  const changedRules = opts.set && Object.keys(opts.set).length > 0 ? applySet(rules, opts.set) : undefined;
  const names = [...rules.map((r) => r.name), ...(opts.rule === undefined ? ['source_down'] : [])];

  const once = (rs: readonly RuleBase[]) => {
    const r = replay({
      source: opts.store,
      rules: rs,
      alerting: opts.alerting,
      sourceDown: opts.sourceDown ?? { after: 3, severity: 'warning' },
      from: opts.from,
      to: opts.to,
      includeSourceDown: opts.rule === undefined,
      ...(opts.onProgress ? { onProgress: opts.onProgress } : {}),
      ...(opts.log ? { log: opts.log } : {}),
    });
    const rows = buildRows(r.events, opts.to, repeat);
    return { replay: r, run: { rows, summary: summarize(rows, r.events, names), dataErrors: r.dataErrors } };
  };

  const current = once(rules);
  const report: BacktestReport = {
    from: opts.from,
    to: opts.to,
    rules: names,
    runs: current.replay.runs,
    readings: current.replay.readings,
    grouping: current.replay.grouping,
    unassigned: current.replay.unassigned,
    resolution: current.replay.resolution,
    repeat_interval_ms: repeat,
    current: current.run,
  };
  if (changedRules) report.changed = { ...once(changedRules).run, set: opts.set! };
  return report;
}
