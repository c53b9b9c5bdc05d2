/**
 * Runs rule tests: each test drives a real {@link AlertEngine} over a private in-memory SQLite store, poll by poll,
 * with timers run exactly when due, and compares the alerts at each expectation time with what the test expects.
 */
import { resolve } from 'node:path';
import { AlertEngine } from '../alerts/engine.js';
import { runTimersUntil } from '../alerts/timers.js';
import { ManualClock } from '../clock.js';
import { formatDuration } from '../config/duration.js';
import { formatProblem } from '../errors.js';
import { silentLogger } from '../log.js';
import type { Alert, PollOutcome, Reading, ReadingKind } from '../model.js';
import { openScratchStore, type Store } from '../store/index.js';
import { loadRuleTestFile, parseStart, type Expectation, type ExpectedAlert, type RuleTestFile, type SeriesSpec, type TestSpec } from './file.js';
import { ABSENT, expandValues, type Cell } from './values.js';

/** The outcome of one test (or of a file that could not be loaded: name `(file)`). */
export interface RuleTestResult {
  file: string;
  name: string;
  passed: boolean;
  /** What went wrong, one line each (already indented relative to the test's line). */
  failures: string[];
}

/** The outcome of a run over several files. */
export interface RuleTestRun {
  passed: number;
  failed: number;
  results: RuleTestResult[];
}

/** Options of {@link runRuleTests}. */
export interface RuleTestOptions {
  /** For `${VAR}` in rule files; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Only the tests whose name matches this regular expression (`lookout test --run NAME`, as promtool's `--run`). */
  run?: string;
}

const DEFAULT_POLL: Record<ReadingKind, string> = {
  market: 'markets',
  position: 'positions',
  benchmark: 'benchmarks',
  asset: 'assets',
  holding: 'holdings',
  performance: 'performance',
};
const POLL_KIND: Record<ReadingKind, string> = {
  market: 'metrics',
  position: 'positions',
  benchmark: 'benchmarks',
  asset: 'assets',
  holding: 'holdings',
  performance: 'performance',
};

interface BuiltSeries {
  spec: SeriesSpec;
  poll: string;
  cells: Array<[path: string, cells: Cell[]]>;
  length: number;
}

/** Runs every test of every file. */
export function runRuleTests(files: readonly string[], opts: RuleTestOptions = {}): RuleTestRun {
  const results: RuleTestResult[] = [];
  const selected = nameFilter(opts.run);
  for (const f of files) {
    const loaded = loadRuleTestFile(resolve(f), opts.env ?? process.env);
    if ('problems' in loaded) {
      results.push({ file: f, name: '(file)', passed: false, failures: loaded.problems.map(formatProblem) });
      continue;
    }
    for (const t of loaded.spec.tests.filter((t) => selected(t.name))) results.push({ file: f, name: t.name, ...runOne(loaded, t) });
  }
  const passed = results.filter((r) => r.passed).length;
  return { passed, failed: results.length - passed, results };
}

/** Whether a test runs: every test without `run`; else its name equals `run` or matches it as a regular expression. */
function nameFilter(run: string | undefined): (name: string) => boolean {
  if (run === undefined) return () => true;
  let re: RegExp | undefined;
  try {
    re = new RegExp(run);
  } catch {
    re = undefined;
  }
  return (name) => name === run || (re?.test(name) ?? name.includes(run));
}

function setPath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const segs = path.split('.');
  let cur = obj;
  for (const seg of segs.slice(0, -1)) {
    const next = cur[seg];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) cur[seg] = {};
    cur = cur[seg] as Record<string, unknown>;
  }
  cur[segs[segs.length - 1]!] = value;
}

function buildSeries(spec: SeriesSpec): BuiltSeries {
  const cells: Array<[string, Cell[]]> = Object.entries(spec.values).map(([path, v]) => {
    try {
      return [path, expandValues(v)];
    } catch (err) {
      throw new Error(`series ${spec.entity}, values.${path}: ${(err as Error).message}`);
    }
  });
  const length = Math.max(0, ...cells.map(([, c]) => c.length));
  return { spec, poll: spec.poll ?? DEFAULT_POLL[spec.kind], cells, length };
}

function defaultLabels(spec: SeriesSpec): Record<string, string> {
  if (spec.kind === 'market') return { market_id: spec.entity };
  if (spec.kind === 'benchmark') {
    const [network = spec.entity, code] = spec.entity.split('/');
    return code ? { network, code } : { network };
  }
  if (spec.kind === 'position') return { position_id: spec.entity };
  return {};
}

/** The series' reading at poll `step` (time `now`), or undefined when the entity is missing from that poll. */
function readingAt(s: BuiltSeries, step: number, now: number, start: number): Reading | undefined {
  const fields = structuredClone(s.spec.fields) as Record<string, unknown>;
  let at = now;
  if (s.cells.length > 0) {
    if (step >= s.length) return undefined;
  }
  if (s.spec.points.length > 0) {
    const point = s.spec.points.filter((p) => start + p.at <= now).at(-1);
    if (s.cells.length === 0 && (!point || point.absent)) return undefined;
    if (point && !point.absent) for (const [k, v] of Object.entries(point.fields)) setPath(fields, k, structuredClone(v));
  }
  for (const [path, cells] of s.cells) {
    const v = (cells[Math.min(step, cells.length - 1)] as Cell)(now, start);
    if (v === ABSENT) return undefined;
    if (path === 'at') {
      if (typeof v !== 'number') throw new Error(`series ${s.spec.entity}: values.at must be a time (now-5m, start+1h or ms)`);
      at = v;
    } else setPath(fields, path, v);
  }
  const labels = { ...defaultLabels(s.spec), ...Object.fromEntries(Object.entries(s.spec.labels).map(([k, v]) => [k, String(v)])) };
  return { kind: s.spec.kind, entity: s.spec.entity, at, labels, fields };
}

function runOne(file: RuleTestFile, test: TestSpec): { passed: boolean; failures: string[] } {
  let store: Store | undefined;
  try {
    const start = test.start !== undefined ? parseStart(test.start)! : file.start;
    const interval = test.interval ?? file.spec.evaluation_interval;
    const series = test.series.map(buildSeries);

    const polls = new Map<string, string>();
    for (const s of series) if (!polls.has(s.poll)) polls.set(s.poll, POLL_KIND[s.spec.kind]);
    const failed = new Set<string>();
    const failures: string[] = [];
    for (const f of test.failed_polls) {
      const entries = typeof f === 'number' ? [...polls.keys()].map((poll) => ({ poll, at: f })) : (Array.isArray(f.at) ? f.at : [f.at]).map((at) => ({ poll: f.poll, at }));
      for (const e of entries) {
        if (e.at % interval !== 0) throw new Error(`failed poll at ${formatDuration(e.at)} is not a poll time (every ${formatDuration(interval)})`);
        if (!polls.has(e.poll)) polls.set(e.poll, 'metrics');
        failed.add(`${e.poll}@${e.at}`);
      }
    }

    const expectations = [...test.alert_expectations].sort((a, b) => a.at - b.at);
    const lastTime = Math.max((Math.max(1, ...series.map((s) => s.length)) - 1) * interval, ...expectations.map((e) => e.at), ...[...failed].map((k) => Number(k.split('@').pop())));
    const steps = Math.floor(lastTime / interval);

    store = openScratchStore();
    const st = store;
    const clock = new ManualClock(start);
    const engine = new AlertEngine({
      store: st,
      rules: file.rules,
      alerting: file.spec.alerting,
      sourceDown: file.spec.source_down,
      watchdog: { enabled: false, severity: 'info' },
      clock,
      log: silentLogger,
    });
    const tx = <T>(fn: () => T): T => st.transaction(fn);
    let next = 0;
    const checkUntil = (t: number, inclusive: boolean) => {
      while (next < expectations.length && (inclusive ? expectations[next]!.at <= t : expectations[next]!.at < t)) {
        const e = expectations[next++]!;
        runTimersUntil(engine, start + e.at, tx);
        failures.push(...check(engine, e));
      }
    };

    for (let i = 0; i <= steps; i++) {
      const rel = i * interval;
      const now = start + rel;
      checkUntil(rel, false);
      runTimersUntil(engine, now - 1, tx);
      clock.set(now);
      for (const [poll, kind] of polls) {
        const ok = !failed.has(`${poll}@${rel}`);
        const readings = ok ? series.filter((s) => s.poll === poll).map((s) => readingAt(s, i, now, start)).filter((r): r is Reading => r !== undefined) : [];
        const outcome: PollOutcome = {
          poll,
          kind,
          ok,
          readings,
          rejected: [],
          started_at: now,
          finished_at: now,
          ...(ok ? {} : { error: 'failed in the rule test', errorReason: 'test' }),
        };
        tx(() => {
          st.polls.record(outcome);
          if (ok) st.readings.savePoll(poll, readings, now);
          engine.applyPoll(outcome, now);
        });
      }
      runTimersUntil(engine, now, tx);
      checkUntil(rel, true);
    }
    checkUntil(Infinity, true);
    return { passed: failures.length === 0, failures };
  } catch (err) {
    return { passed: false, failures: [`error: ${(err as Error).message}`] };
  } finally {
    store?.close();
  }
}

function show(rule: string, entity: string, state: string, flapping?: boolean): string {
  return `${rule}/${entity} ${state}${flapping ? ' (flapping)' : ''}`;
}

function close(a: number | null, b: number): boolean {
  return a !== null && Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));
}

/** Differences between an expected alert and the one found, one line each. */
function compare(exp: ExpectedAlert, got: Alert | undefined): string[] {
  const name = `${exp.rule}/${exp.entity}`;
  const state = got?.state ?? 'inactive';
  const out: string[] = [];
  if (state !== exp.state) out.push(`${name}: state: expected ${exp.state}, got ${state}`);
  if (!got) return out;
  if (exp.flapping !== undefined && got.flapping !== exp.flapping) out.push(`${name}: flapping: expected ${exp.flapping}, got ${got.flapping}`);
  for (const [k, v] of Object.entries(exp.labels ?? {})) {
    if (got.labels[k] !== String(v)) out.push(`${name}: label ${k}: expected ${JSON.stringify(String(v))}, got ${got.labels[k] === undefined ? '(none)' : JSON.stringify(got.labels[k])}`);
  }
  for (const [k, v] of Object.entries(exp.annotations ?? {})) {
    if (got.annotations[k] !== v) {
      out.push(`${name}: annotation ${k}:`);
      out.push(`  - expected: ${JSON.stringify(v)}`);
      out.push(`  + got:      ${got.annotations[k] === undefined ? '(none)' : JSON.stringify(got.annotations[k])}`);
    }
  }
  if (exp.value !== undefined && !close(got.value, exp.value)) out.push(`${name}: value: expected ${exp.value}, got ${got.value ?? 'null'}`);
  return out;
}

/** Compares the engine's alerts with one expectation; returns failure lines (empty when it holds). */
function check(engine: AlertEngine, e: Expectation): string[] {
  const all = engine.alerts().filter((a) => a.rule !== 'watchdog' && (e.rule === undefined || a.rule === e.rule));
  const byKey = new Map(all.map((a) => [`${a.rule}\u0000${a.entity}`, a]));
  const problems: string[] = [];
  const expectedKeys = new Set<string>();
  for (const exp of e.alerts) {
    const key = `${exp.rule}\u0000${exp.entity}`;
    expectedKeys.add(key);
    problems.push(...compare(exp, byKey.get(key)));
  }
  for (const a of all) {
    if ((a.state === 'pending' || a.state === 'firing') && !expectedKeys.has(`${a.rule}\u0000${a.entity}`)) {
      problems.push(`unexpected: ${show(a.rule, a.entity, a.state, a.flapping)}`);
    }
  }
  if (problems.length === 0) return [];
  const expected = e.alerts.map((x) => show(x.rule, x.entity, x.state, x.flapping));
  const got = all.filter((a) => a.state === 'pending' || a.state === 'firing' || expectedKeys.has(`${a.rule}\u0000${a.entity}`)).map((a) => show(a.rule, a.entity, a.state, a.flapping));
  return [
    `at ${formatDuration(e.at)}${e.rule ? ` (rule ${e.rule})` : ''}:`,
    `  expected: ${expected.length ? expected.join(', ') : '(no alerts)'}`,
    `  got:      ${got.length ? got.join(', ') : '(no alerts)'}`,
    ...problems.map((p) => `  ${p}`),
  ];
}
