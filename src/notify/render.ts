/**
 * `lookout render`: what each notifier would send for a fixture reading, without sending it. The reading is judged by
 * the rule's real kind (over the fixture's `history`), and labels and annotations are rendered exactly as the alert
 * engine renders them, so the preview is the message the daemon would send.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { describeAlert } from '../alerts/engine.js';
import { newAlert } from '../alerts/lifecycle.js';
import { systemClock } from '../clock.js';
import { parseDuration } from '../config/duration.js';
import { loadConfig } from '../config/load.js';
import { ConfigError, LookoutError } from '../errors.js';
import type { Alert, Reading, ReadingKind } from '../model.js';
import { num } from '../rules/coerce.js';
import { getRuleKind } from '../rules/registry.js';
import { evaluateExplained, historyOf, type Verdict } from '../rules/rule-kind.js';
import type { RuleBase } from '../rules/schema.js';
import { unitsOfRules } from './format.js';
import { renderNotification } from './preview.js';
import { Routing } from './routing.js';
import type { NotifierConfig } from './schema.js';

export { renderNotification };

/** Options of {@link runRenderCommand}. */
export interface RenderCommandOptions {
  configFile: string;
  /** Rule name. */
  rule: string;
  /**
   * A YAML or JSON file: `{ now?, kind?, entity?, at?, labels: {...}, fields: {...}, history?: [{ at, fields, ... }] }`
   * (or the fields at the top level). Times are ms, ISO dates, or `-15m` (that long before `now`).
   */
  fixture: string;
  out?: { write(text: string): unknown };
  err?: { write(text: string): unknown };
  /** The evaluation time when the fixture gives no `now`; default the clock. */
  now?: number;
}

/** A fixture read: the reading to judge, the stored readings before it, and the evaluation time. */
export interface Fixture {
  reading: Reading;
  /** Older readings (any kind/entity), oldest first; the history view also holds `reading`, as the engine's does. */
  history: Reading[];
  now: number;
}

const RESERVED = ['kind', 'entity', 'at', 'labels', 'fields', 'history', 'now'];

function bad(file: string, message: string): LookoutError {
  return new LookoutError('E_BAD_REQUEST', `${file}: ${message}`);
}

/** A fixture time: ms, an ISO date, or `-<duration>` before `now`; undefined when absent. */
function fixtureTime(v: unknown, now: number, file: string, what: string): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (v instanceof Date && Number.isFinite(v.getTime())) return v.getTime();
  if (typeof v === 'string') {
    const rel = v.trim().startsWith('-') ? parseDuration(v.trim().slice(1)) : undefined;
    if (rel !== undefined) return now - rel;
    const t = Date.parse(v);
    if (Number.isFinite(t)) return t;
  }
  throw bad(file, `${what}: '${String(v)}' is not a time (ms, an ISO date, or -15m for 15 minutes before now)`);
}

function readingOf(raw: Record<string, unknown>, defaults: { kind: ReadingKind; entity?: string; at?: number }, now: number, file: string, what: string): Reading {
  const fields = (raw.fields as Record<string, unknown> | undefined) ?? Object.fromEntries(Object.entries(raw).filter(([k]) => !RESERVED.includes(k)));
  if (typeof fields !== 'object' || fields === null) throw bad(file, `${what}: fields must be a map`);
  const labels = Object.fromEntries(Object.entries((raw.labels as Record<string, unknown>) ?? {}).map(([k, v]) => [k, String(v)]));
  const entity = String(raw.entity ?? defaults.entity ?? fields.market_id ?? fields.id ?? labels.market_id ?? 'fixture');
  const at = fixtureTime(raw.at, now, file, `${what}.at`) ?? defaults.at;
  if (at === undefined) throw bad(file, `${what}: give its time as 'at'`);
  return { kind: (raw.kind as ReadingKind | undefined) ?? defaults.kind, entity, at, labels, fields };
}

/** Reads a fixture file; a reading without `kind` is of `kind` (the rule's reading kind), one without `at` is at `now`. */
export function readFixture(file: string, kind: ReadingKind, now: number): Fixture {
  const raw = parseYaml(readFileSync(file, 'utf8')) as Record<string, unknown> | null;
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw bad(file, 'a fixture is a YAML/JSON object with labels and fields');
  const at = fixtureTime(raw.now, now, file, 'now') ?? now;
  const reading = readingOf(raw, { kind, at }, at, file, 'reading');
  if (raw.history !== undefined && !Array.isArray(raw.history)) throw bad(file, 'history: a list of readings, each with `at` and `fields`');
  const history = ((raw.history as unknown[] | undefined) ?? []).map((h, i) => {
    if (!h || typeof h !== 'object' || Array.isArray(h)) throw bad(file, `history[${i}]: a reading with 'at' and 'fields'`);
    return readingOf(h as Record<string, unknown>, { kind: reading.kind, entity: reading.entity }, at, file, `history[${i}]`);
  });
  history.sort((a, b) => a.at - b.at);
  return { reading, history, now: at };
}

/** Judges the fixture's reading with the rule's kind as the engine does (a reading older than `max_reading_age` is a data error). */
export function judgeFixture(rule: RuleBase, fixture: Fixture, maxReadingAge: number | undefined): Verdict {
  const kind = getRuleKind(rule.kind);
  if (!kind || typeof kind.evaluate !== 'function') return { status: 'wait', reason: `rule kind '${rule.kind}' cannot be evaluated here` };
  const { reading, now } = fixture;
  const maxAge = typeof rule.max_reading_age === 'number' ? rule.max_reading_age : reading.kind === 'market' ? maxReadingAge : undefined;
  if (maxAge !== undefined && now - reading.at > maxAge) return { status: 'data_error', reason: 'stale_reading' };
  try {
    return evaluateExplained(kind, { rule, reading, now, history: historyOf([...fixture.history, reading]), active: false });
  } catch (e) {
    return { status: 'data_error', reason: `evaluate_failed: ${(e as Error).message}` };
  }
}

const finite = (v: number | null | undefined): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** The alert the daemon would hold after judging the fixture: labels and annotations from the engine's own {@link describeAlert}. */
export function fixtureAlert(rule: RuleBase, fixture: Fixture, verdict: Verdict): Alert {
  const { reading, now } = fixture;
  const { labels, annotations } = describeAlert(rule, reading, verdict);
  const judged = verdict.status === 'breach' || verdict.status === 'ok' ? verdict : undefined;
  const value = judged ? finite(judged.value) : verdict.status === 'data_error' ? finite(verdict.value) : null;
  return {
    ...newAlert({ rule: rule.name, kind: rule.kind, entity: reading.entity, severity: rule.severity }, now),
    fingerprint: 'render',
    state: 'firing',
    labels,
    annotations,
    value,
    threshold: judged ? finite(judged.threshold) : null,
    previous_value: judged ? finite(judged.previous) : null,
    peak: value,
    data_at: reading.at,
    block: num(reading.fields.block),
    pending_since: now - rule.for,
    firing_since: now,
  };
}

/** Prints, for every configured notifier, the firing and the resolved message it would send for the fixture; 0 on success. */
export async function runRenderCommand(opts: RenderCommandOptions): Promise<number> {
  const out = opts.out ?? process.stdout;
  const err = opts.err ?? process.stderr;
  try {
    const config = loadConfig(opts.configFile);
    const loaded = config.rules.find((r) => r.rule.name === opts.rule);
    if (!loaded) throw new LookoutError('E_BAD_REQUEST', `no rule named '${opts.rule}' in ${opts.configFile}`);
    const rule = loaded.rule;
    const kind = getRuleKind(rule.kind);
    const readingKind = (kind?.readingKinds?.(rule) ?? kind?.reads)?.[0] ?? 'market';
    const fixture = readFixture(opts.fixture, readingKind, opts.now ?? systemClock.now());
    const { now } = fixture;
    const verdict = judgeFixture(rule, fixture, config.alerting.max_reading_age);
    if (verdict.status !== 'breach') {
      const why = verdict.status === 'wait' || verdict.status === 'data_error' ? ` (${verdict.reason})` : '';
      out.write(`note: rule '${rule.name}' judges this reading '${verdict.status}'${why}: it would not fire on it\n`);
    }
    const alert = fixtureAlert(rule, fixture, verdict);
    const resolved: Alert = { ...alert, state: 'resolved', resolved_at: now + 3_600_000 };
    const unit = unitsOfRules([rule])(alert);
    const routing = new Routing({ routes: config.routes, notifiers: config.notifiers, ruleNotify: (r) => (r === rule.name ? rule.notify : undefined) });
    const routed = new Set(routing.destinations(alert).destinations.map((d) => d.notifier));
    const names = Object.keys(config.notifiers);
    if (names.length === 0) out.write('no notifiers configured; showing the console notifier\n');
    const list: Array<[string, NotifierConfig]> = names.length ? Object.entries(config.notifiers) : [['console', { type: 'console', color: 'never' }]];
    for (const [name, cfg] of list) {
      out.write(`=== ${name} (${cfg.type})${names.length && !routed.has(name) ? ' — not on this alert’s route' : ''} ===\n`);
      out.write(`--- firing ---\n${renderNotification(cfg, [alert], { name, now, unit })}\n`);
      out.write(`--- resolved ---\n${renderNotification(cfg, [resolved], { name, now: now + 3_600_000, unit })}\n\n`);
    }
    return 0;
  } catch (e) {
    err.write(`lookout render: ${(e as Error).message}\n`);
    return e instanceof ConfigError || e instanceof LookoutError ? 1 : 2;
  }
}
