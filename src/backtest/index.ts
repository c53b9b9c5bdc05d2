/** `lookout backtest -c config.yaml --from T --to T [--rule NAME] [--set rule.param=value] [--json] [--html FILE]`. */
import { existsSync, writeFileSync } from 'node:fs';
import { systemClock, type Clock } from '../clock.js';
import { parseDuration } from '../config/duration.js';
import { loadConfig } from '../config/load.js';
import { ConfigError, formatProblem } from '../errors.js';
import type { RuleBase } from '../rules/schema.js';
import { openStore } from '../store/index.js';
import { formatBacktest } from './format.js';
import { renderBacktestHtml } from './html.js';
import { runBacktest } from './run.js';
import { BacktestError, parseSetArgs } from './set.js';

export { runBacktest, DEFAULT_REPEAT_INTERVAL, type BacktestOptions, type BacktestReport, type BacktestRun } from './run.js';
export { formatBacktest } from './format.js';
export { renderBacktestHtml } from './html.js';
export { buildRows, summarize, type BacktestRow, type RuleSummary } from './report.js';
export { applySet, parseSetArgs, BacktestError } from './set.js';
export { replay, type ReplayOptions, type ReplayResult } from './replay.js';

/** Options of {@link runBacktestCommand}. */
export interface BacktestCommandOptions {
  configFile: string;
  /** ISO time, `now`, or a duration ago (`7d`, `36h`). */
  from: string;
  to: string;
  rule?: string;
  /** `rule.param=value` strings. */
  set?: string[];
  json?: boolean;
  /** Also write a self-contained HTML report (charts) to this file. */
  html?: string;
  out: (line: string) => void;
  err: (line: string) => void;
  /** Draw a progress bar on stderr. */
  isTTY: boolean;
  /** Writes without a newline, for the progress bar; default process.stderr. */
  write?: (text: string) => void;
  clock?: Clock;
}

/** Parses `now`, an ISO time, or a duration ago (`7d`) into ms; undefined when it is none of them. */
export function parseTimeArg(text: string, now: number): number | undefined {
  const s = text.trim();
  if (s === 'now') return now;
  const ago = parseDuration(s);
  if (ago !== undefined) return now - ago;
  const t = Date.parse(s);
  return Number.isFinite(t) ? t : undefined;
}

/** Runs the backtest command: prints the report on `out`, problems on `err`; returns the exit code (0, or 1 on a usage or config problem). */
export async function runBacktestCommand(opts: BacktestCommandOptions): Promise<number> {
  const now = (opts.clock ?? systemClock).now();
  const from = parseTimeArg(opts.from, now);
  const to = parseTimeArg(opts.to, now);
  if (from === undefined || to === undefined) {
    opts.err(`lookout backtest: --from/--to take an ISO time (2025-01-08T00:00Z), 'now', or a duration ago (7d); got '${from === undefined ? opts.from : opts.to}'`);
    return 1;
  }
  let config;
  try {
    config = loadConfig(opts.configFile);
  } catch (e) {
    if (e instanceof ConfigError) {
      for (const p of e.problems) opts.err(formatProblem(p));
      return 1;
    }
    throw e;
  }
  if (config.storage.path !== ':memory:' && !existsSync(config.storage.path)) {
    opts.err(`lookout backtest: no database at ${config.storage.path} (storage.path): run lookout first to collect readings`);
    return 1;
  }
  const store = openStore(config.storage.path, { readonly: true });
  const write = opts.write ?? ((s: string) => void process.stderr.write(s));
  let drawn = false;
  const onProgress = opts.isTTY
    ? (done: number, total: number) => {
        const f = Math.min(1, done / total);
        const width = 30;
        const full = Math.round(f * width);
        write(`\r[${'#'.repeat(full)}${'.'.repeat(width - full)}] ${Math.floor(f * 100)}%`);
        drawn = true;
      }
    : undefined;
  try {
    const rules = config.rules.map((l) => l.rule as RuleBase);
    const report = runBacktest({
      store,
      rules,
      alerting: config.alerting,
      sourceDown: config.source_down,
      from,
      to,
      ...(opts.rule !== undefined ? { rule: opts.rule } : {}),
      ...(opts.set && opts.set.length > 0 ? { set: parseSetArgs(opts.set) } : {}),
      ...(onProgress ? { onProgress } : {}),
    });
    if (drawn) write('\r\x1b[K');
    for (const line of formatBacktest(report, { json: opts.json ?? false }).split('\n')) opts.out(line);
    if (opts.html !== undefined) {
      writeFileSync(opts.html, renderBacktestHtml(report, rules, store));
      opts.err(`lookout backtest: HTML report written to ${opts.html}`);
    }
    return 0;
  } catch (e) {
    if (drawn) write('\r\x1b[K');
    if (e instanceof BacktestError) {
      opts.err(`lookout backtest: ${e.message}`);
      return 1;
    }
    throw e;
  } finally {
    store.close();
  }
}
