/**
 * The alert engine: judges each poll's readings with the rules, steps each (rule, entity) pair through the
 * lifecycle and persists state and transitions in the caller's transaction. Also owns the built-in `source_down`
 * (a poll failing `source_down.after` times in a row) and `watchdog` (always firing) alerts.
 *
 * Call {@link AlertEngine.applyPoll} inside `store.transaction`, after the poll run was recorded and its readings
 * saved; call {@link AlertEngine.tick} (also in a transaction) every `alerting.tick` so timers move between polls.
 */
import type { Clock } from '../clock.js';
import type { Logger } from '../log.js';
import type { Alert, AlertEvent, PollOutcome, Reading, ReadingKind, Severity } from '../model.js';
import { annotationNames, renderAnnotations } from '../rules/annotations.js';
import { num } from '../rules/coerce.js';
import { ruleReads } from '../rules/define.js';
import { ruleKinds } from '../rules/registry.js';
import { explained, judgedReading, worstPicks, type EvalInput, type HistoryView, type RuleKind, type Verdict, type WorstPicks } from '../rules/rule-kind.js';
import type { RuleBase } from '../rules/schema.js';
import { selectTest, type Select } from '../rules/select.js';
import type { Store } from '../store/index.js';
import { breachInPlace, breachKeepsStanding, cloneAlert, fingerprint, isActive, newAlert, step, type AlertDescription, type AlertIdentity, type LifecycleSettings, type Signal, type StepResult, type TrackedAlert } from './lifecycle.js';
import { createAlertRepo, type AlertRepo } from './repo.js';
import { builtinDescription, SOURCE_DOWN, WATCHDOG, WATCHDOG_ENTITY } from './builtin.js';
import { EntityFilter } from './entity-filter.js';
import { labelsText, sameAsText } from './labels-seen.js';
import { HistoryMemo } from './history-memo.js';
import { TrackedRows } from './tracked-rows.js';
import { HEAVY_ROWS_PER_STEP, ROWS_PER_STEP, runSync, type Steps } from '../yielding.js';

/** The `alerting:` section the engine uses. */
export interface AlertingSettings {
  flap_threshold: number;
  flap_window: number;
  /** Market readings older than this (by their own time) are a data problem, not a breach. */
  max_reading_age: number;
  tick?: number;
}

/** The `source_down:` section. */
export interface SourceDownSettings {
  after: number;
  severity: Severity;
}

/** The `watchdog:` section. */
export interface WatchdogSettings {
  enabled: boolean;
  severity: Severity;
  notify?: string[];
}

/** Where the engine reads what is not alert state; by default the store. Backtests replace it. */
export interface EngineSources {
  /** Stored readings for rules that look back (history includes the poll being applied). */
  history: HistoryView;
  /** The entities whose latest reading came from `poll` (so a missing one may count as absent). */
  lastSeenBy(poll: string): ReadonlyArray<{ kind: ReadingKind; entity: string }>;
  /** Failed runs of `poll` since its last success, the current run included. */
  consecutiveFailures(poll: string): number;
  /**
   * A judged reading with every field the rules read: where readings hold only the fields the rules judge by (a
   * backtest's, src/backtest/replay.ts), the ones only annotations read are decoded for a reading that is described.
   * Default: readings are whole.
   */
  described?(reading: Reading): Reading;
}

/** Options of {@link AlertEngine}. */
export interface EngineOptions {
  /** Holds the alert tables (and, unless `sources` says otherwise, readings and poll runs). */
  store: Pick<Store, 'db'> & Partial<Pick<Store, 'readings' | 'polls'>>;
  rules: readonly RuleBase[];
  alerting: AlertingSettings;
  sourceDown: SourceDownSettings;
  watchdog: WatchdogSettings;
  clock: Clock;
  log: Logger;
  /** Rule kinds by name; default: the registry. */
  kinds?: readonly RuleKind[];
  /**
   * Whether this replica owns an alert's entity (sharding, SPEC §8); default: every entity. An alert whose entity
   * another replica owns now (after a resize) is forgotten without a RESOLVED: it moved, it did not resolve.
   */
  owns?: (alert: Pick<Alert, 'entity' | 'labels'>) => boolean;
  sources?: Partial<EngineSources>;
}

/** A firing alert of this rule set that another replica announced (from Alertmanager), for {@link AlertEngine.adopt}. */
export interface AdoptableAlert {
  rule: string;
  entity: string;
  labels: Record<string, string>;
  /** When it began firing, ms. */
  startsAt: number;
}

/** A reading that could not be judged: counted and reported, never a breach. */
export interface DataError {
  rule: string;
  entity: string;
  /** Short and stable where the engine decides (`stale_reading`, `evaluate_failed`); else the kind's own words. */
  reason: string;
}

/** What one applyPoll or tick did. */
export interface EngineResult {
  /** Transitions, in the order they happened; already recorded in `alert_events`. */
  events: AlertEvent[];
  dataErrors: DataError[];
  /** Verdicts computed. */
  evaluated: number;
  durationMs: number;
}

interface CompiledRule {
  rule: RuleBase;
  kind: RuleKind;
  reads: readonly ReadingKind[];
  /** The rule's `select`, compiled once. */
  selects: (reading: Reading) => boolean;
  /** Fields whose unreadable value leaves the entity without a verdict (the kind's `needs`). */
  needs: readonly string[];
  /** Which extreme of a bucketed reading it judges, per field (the kind's `worst`). */
  worst: WorstPicks | undefined;
  settings: LifecycleSettings;
  maxAge: number | undefined;
  /** Whether the rule's annotations read any name of the kind's context: else describing an alert needs none. */
  explains: boolean;
  /**
   * The input of every evaluate of this rule, filled anew for each call (kinds keep nothing of it, see
   * {@link EvalInput}): one object a verdict, 70,000 a poll, was a quarter of a calm poll's garbage.
   */
  input: EvalInput;
}

/** Which readings each poll kind produces (so an empty successful poll still counts as one for its rules). */
export const POLL_READING_KINDS: Readonly<Record<string, ReadingKind>> = {
  metrics: 'market',
  positions: 'position',
  assets: 'asset',
  holdings: 'holding',
  performance: 'performance',
  benchmarks: 'benchmark',
};

const NEVER_ABSENT = Number.MAX_SAFE_INTEGER;

/** Judges readings with the rules and keeps alert state; see the module comment for how to call it. */
export class AlertEngine {
  /** The alert repository the engine writes to (also for `lookout alerts` and the HTTP API). */
  readonly repo: AlertRepo;
  private opts: EngineOptions;
  private rules: CompiledRule[] = [];
  private byName = new Map<string, CompiledRule>();
  private sources: EngineSources;
  /** Look-back answers kept across polls, when history is the store's (see history-memo.ts). */
  private memo: HistoryMemo | undefined;
  /** The alert rows the engine judges, kept across polls (see tracked-rows.ts). */
  private readonly rows: TrackedRows;
  private reconcilePending = true;

  constructor(opts: EngineOptions) {
    this.opts = opts;
    this.repo = createAlertRepo(opts.store.db);
    this.rows = new TrackedRows(this.repo, opts.store.db);
    this.sources = this.buildSources(opts);
    this.compile();
  }

  /** Takes a new rule set and settings; alerts of rules that are gone (or disabled) resolve on the next tick or poll. */
  reload(opts: Partial<Omit<EngineOptions, 'store' | 'clock' | 'log'>>): void {
    this.opts = { ...this.opts, ...opts };
    this.sources = this.buildSources(this.opts);
    this.compile();
    this.rows.clear();
    this.reconcilePending = true;
  }

  /** Every alert the store holds (any state), ordered by rule and entity. */
  alerts(): Alert[] {
    return this.repo.list();
  }

  /** Judges one poll run; call inside the transaction that saved its readings. */
  applyPoll(outcome: PollOutcome, now: number): EngineResult {
    return runSync(this.applyPollSteps(outcome, now));
  }

  /**
   * {@link applyPoll} as steps that pause between readings, for a transaction held open across turns of the event loop
   * ({@link Store.transactionYielding}). `durationMs` counts the steps' own time, not the pauses.
   */
  *applyPollSteps(outcome: PollOutcome, now: number): Steps<EngineResult> {
    let spent = 0;
    let t = performance.now();
    const out: EngineResult = { events: [], dataErrors: [], evaluated: 0, durationMs: 0 };
    this.rows.begin();
    this.reconcile(now, out);
    this.sourceDown(outcome, now, out);
    if (outcome.ok) {
      for (const _ of this.judge(outcome, now, out)) {
        spent += performance.now() - t;
        yield;
        t = performance.now();
      }
    }
    out.durationMs = spent + performance.now() - t;
    return out;
  }

  /** Moves timers (for, keep_firing_for, flap settling), resolves alerts of removed rules, keeps the watchdog firing. */
  tick(now: number): EngineResult {
    const started = performance.now();
    const out: EngineResult = { events: [], dataErrors: [], evaluated: 0, durationMs: 0 };
    this.rows.begin();
    this.reconcile(now, out);
    // After the reconcile every live alert is of a configured rule or a built-in one: the kept copy holds them all.
    for (const t of this.rows.live(this.tickedRules())) {
      const settings = this.settingsOf(t.alert.rule);
      if (!settings) continue;
      this.apply(t, { type: 'tick' }, now, settings, identityOf(t.alert), out);
    }
    this.watchdog(now, out);
    out.durationMs = performance.now() - started;
    return out;
  }

  /**
   * Takes over alerts another replica had firing (read from the Alertmanager cluster after a resize, SPEC §8): each
   * one this replica owns and does not hold active becomes pending since it began minus the rule's `for`, so the
   * next breach fires it at once instead of waiting `for` again, with this replica's own values and annotations.
   * It is held as absent once, so no timer fires it before a reading of this replica confirms it; a next reading
   * that no longer breaches cancels it quietly (Alertmanager's copy then runs out at its `endsAt`). Returns the
   * alerts taken. Call inside a transaction.
   */
  adopt(found: readonly AdoptableAlert[], now: number): Alert[] {
    const taken: Alert[] = [];
    this.rows.begin();
    for (const f of found) {
      const compiled = this.byName.get(f.rule);
      if (!compiled) continue;
      const owned = this.opts.owns?.({ entity: f.entity, labels: f.labels }) ?? true;
      if (!owned) continue;
      const prev = this.repo.getTracked(fingerprint(f.rule, f.entity));
      if (prev && (isActive(prev.alert) || prev.alert.flapping)) continue;
      const id: AlertIdentity = { rule: f.rule, kind: compiled.rule.kind, entity: f.entity, severity: compiled.rule.severity };
      const alert: Alert = {
        ...newAlert(id, now),
        state: 'pending',
        labels: { ...f.labels },
        pending_since: Math.min(now, f.startsAt) - compiled.settings.for,
        absent_polls: 1,
      };
      this.rows.save({ alert, cleared_at: null, moving_id: undefined, seen: undefined }, prev, now);
      this.opts.log.info('alert_adopted', { rule: f.rule, entity: f.entity, since: new Date(f.startsAt).toISOString() });
      // A copy: the engine's own changes the alerts it keeps in place (see breachInPlace).
      taken.push(cloneAlert(alert));
    }
    return taken;
  }

  /** The earliest time a timer of a live alert is due, for callers that tick only when needed (backtests, tests). */
  nextDeadline(): number | undefined {
    let next: number | undefined;
    const at = (t: number) => {
      if (next === undefined || t < next) next = t;
    };
    // The kept copy of the rows (as tick reads them), not the table: a replay asks before every tick, and in an
    // incident reading thousands of rows back each time was a third of a backtest.
    this.rows.begin();
    for (const { alert: a, cleared_at } of this.rows.liveUnordered(this.tickedRules())) {
      const s = this.settingsOf(a.rule);
      if (!s) continue;
      if (a.state === 'pending' && a.absent_polls === 0 && a.pending_since !== null) at(a.pending_since + s.for);
      if (a.state === 'firing' && cleared_at !== null) at(cleared_at + s.keep_firing_for);
      if (a.flapping && a.changes.length > 0) at(a.changes[a.changes.length - 1]! + s.flap_window);
    }
    return next;
  }

  private buildSources(opts: EngineOptions): EngineSources {
    const { readings, polls } = opts.store;
    this.memo = opts.sources?.history || !readings ? undefined : (this.memo ?? new HistoryMemo(readings, readings.historyChanges()));
    const missing = (what: string) => () => {
      throw new Error(`AlertEngine: no ${what}: pass a full store or sources.${what}`);
    };
    return {
      // With the store's readings the engine looks back through the memo (judge); this view is for engines without.
      history: opts.sources?.history ?? { at: missing('history'), range: missing('history') },
      lastSeenBy: opts.sources?.lastSeenBy ?? (readings ? (p) => readings.entitiesForPoll(p) : missing('lastSeenBy')),
      consecutiveFailures: opts.sources?.consecutiveFailures ?? (polls ? (p) => polls.consecutiveFailures(p) : missing('consecutiveFailures')),
      ...(opts.sources?.described ? { described: opts.sources.described } : {}),
    };
  }

  private compile(): void {
    const kinds = new Map((this.opts.kinds ?? ruleKinds).map((k) => [k.kind, k]));
    const a = this.opts.alerting;
    this.rules = [];
    for (const rule of this.opts.rules) {
      if (rule.enabled === false) continue;
      const kind = kinds.get(rule.kind);
      if (!kind || typeof kind.evaluate !== 'function') {
        this.opts.log.warn('alert_rule_kind_unknown', { rule: rule.name, kind: rule.kind });
        continue;
      }
      this.rules.push({
        rule,
        kind,
        reads: ruleReads(kind, rule),
        selects: selectTest(rule.select as Select),
        needs: kind.needs?.(rule) ?? [],
        worst: worstPicks(kind.worst?.(rule)),
        settings: {
          for: rule.for ?? 0,
          keep_firing_for: rule.keep_firing_for ?? 0,
          absent_for: rule.absent_for ?? 3,
          flap_threshold: rule.flap_threshold ?? a.flap_threshold,
          flap_window: rule.flap_window ?? a.flap_window,
        },
        maxAge: rule.max_reading_age,
        explains: typeof kind.explain === 'function' && annotationNames(rule).some((n) => kind.context.includes(n)),
        input: { rule, reading: NO_READING, now: 0, history: this.sources.history, active: false, lean: false },
      });
    }
    this.byName = new Map(this.rules.map((r) => [r.rule.name, r]));
  }

  private builtinSettings(): LifecycleSettings {
    const a = this.opts.alerting;
    return { for: 0, keep_firing_for: 0, absent_for: NEVER_ABSENT, flap_threshold: a.flap_threshold, flap_window: a.flap_window };
  }

  /** The rules a tick steps: the configured ones and the built-in two. */
  private tickedRules(): string[] {
    return [...this.byName.keys(), SOURCE_DOWN, WATCHDOG];
  }

  private settingsOf(rule: string): LifecycleSettings | undefined {
    if (rule === SOURCE_DOWN || rule === WATCHDOG) return this.builtinSettings();
    return this.byName.get(rule)?.settings;
  }

  /** Steps one pair and persists what changed; events are recorded and collected. */
  private apply(prev: TrackedAlert | undefined, signal: Signal, now: number, settings: LifecycleSettings, id: AlertIdentity, out: EngineResult): StepResult {
    const r = step(prev, { signal, now, settings, identity: id });
    if (r.dataError !== undefined) out.dataErrors.push({ rule: id.rule, entity: id.entity, reason: r.dataError });
    const n = r.next;
    // From no alert, a step that leaves it inactive has nothing to store, and every other step has an event.
    const dirty =
      r.events.length > 0 ||
      (prev !== undefined && (isActive(prev.alert) || isActive(n.alert) || prev.alert.flapping || n.alert.flapping || prev.cleared_at !== n.cleared_at));
    if (dirty) this.rows.save(n, prev, now);
    if (r.events.length > 0) {
      this.repo.recordEvents(r.events);
      out.events.push(...r.events);
    }
    return r;
  }

  private reconcile(now: number, out: EngineResult): void {
    if (!this.reconcilePending) return;
    this.reconcilePending = false;
    const keep = [...this.byName.keys(), SOURCE_DOWN, ...(this.opts.watchdog.enabled ? [WATCHDOG] : [])];
    for (const t of this.repo.trackedOrphans(keep)) {
      this.opts.log.info('alert_rule_gone', { rule: t.alert.rule, entity: t.alert.entity, state: t.alert.state });
      this.apply(t, { type: 'retire' }, now, this.builtinSettings(), identityOf(t.alert), out);
    }
    const owns = this.opts.owns;
    if (owns) {
      for (const t of this.repo.trackedForRules([...this.byName.keys()])) {
        if (owns(t.alert)) continue;
        this.opts.log.info('alert_moved', { rule: t.alert.rule, entity: t.alert.entity, state: t.alert.state, hint: 'another replica owns this entity now' });
        this.rows.remove(t, now);
      }
    }
  }

  private sourceDown(outcome: PollOutcome, now: number, out: EngineResult): void {
    const cfg = this.opts.sourceDown;
    const id: AlertIdentity = { rule: SOURCE_DOWN, kind: SOURCE_DOWN, entity: outcome.poll, severity: cfg.severity };
    const prev = this.repo.getTracked(fingerprint(SOURCE_DOWN, outcome.poll));
    let verdict: Verdict;
    if (outcome.ok) {
      if (!prev || (!isActive(prev.alert) && !prev.alert.flapping)) return;
      verdict = { status: 'ok', value: 0, threshold: cfg.after };
    } else {
      const failures = this.sources.consecutiveFailures(outcome.poll);
      if (failures < cfg.after) return;
      verdict = { status: 'breach', value: failures, threshold: cfg.after };
    }
    const describe = () => builtinDescription.sourceDown(outcome, cfg.severity, verdict);
    this.apply(prev, { type: 'verdict', verdict, data_at: outcome.finished_at, describe }, now, this.builtinSettings(), id, out);
  }

  private watchdog(now: number, out: EngineResult): void {
    const cfg = this.opts.watchdog;
    if (!cfg.enabled) return;
    const prev = this.repo.getTracked(fingerprint(WATCHDOG, WATCHDOG_ENTITY));
    if (prev && prev.alert.state === 'firing' && prev.alert.severity === cfg.severity) return;
    const id: AlertIdentity = { rule: WATCHDOG, kind: WATCHDOG, entity: WATCHDOG_ENTITY, severity: cfg.severity };
    const verdict: Verdict = { status: 'breach', value: 1, threshold: null };
    this.apply(prev, { type: 'verdict', verdict, data_at: now, describe: () => builtinDescription.watchdog(cfg.severity) }, now, this.builtinSettings(), id, out);
  }

  /** One pass over the poll's readings for every rule that reads them, then absence. */
  private *judge(outcome: PollOutcome, now: number, out: EngineResult): Steps<void> {
    const kindsHere = new Set<ReadingKind>();
    for (const r of outcome.readings) kindsHere.add(r.kind);
    const pollKind = POLL_READING_KINDS[outcome.kind];
    if (pollKind) kindsHere.add(pollKind);
    const rules = this.rules.filter((c) => c.reads.some((k) => kindsHere.has(k)));
    if (rules.length === 0) return;

    // Per rule, per entity: no joined key string per verdict (70,000 of them a poll at SPEC §8 scale).
    // The maps are the kept copy's, brought up to date by every save (apply): read them, never set them here.
    const tracked = this.rows.forRules(rules.map((c) => c.rule.name));
    const history = this.memo ? syncedOnFirstUse(this.memo) : cachedHistory(this.sources.history);
    try {
      yield* this.judgeRules(rules, outcome, now, out, tracked, history);
    } finally {
      // The inputs are kept for the next poll: they must not keep this one's readings and look-backs alive meanwhile.
      for (const c of rules) forget(c.input, this.sources.history);
    }
  }

  /**
   * {@link judge}'s pass over the rules that read the poll: the readings in tiles of {@link TILE}, each tile judged by
   * every rule in turn (a reading's objects are fetched from memory once a poll, not once per rule, and each rule still
   * runs over a row of readings: its kind's code and branches stay warm), then each rule's absent alerts.
   */
  private *judgeRules(
    rules: readonly CompiledRule[],
    outcome: PollOutcome,
    now: number,
    out: EngineResult,
    tracked: Map<string, ReadonlyMap<string, TrackedAlert>>,
    history: HistoryView,
  ): Steps<void> {
    const readings = outcome.readings;
    const scopes = rules.map((c): JudgeScope => {
      const mine = tracked.get(c.rule.name)!;
      const { rule } = c;
      // A calm rule (no tracked alert) makes no filter: it would be 8 KB of garbage a rule and poll, never asked.
      const maybe = mine.size === 0 ? undefined : EntityFilter.of(mine.keys());
      return { c, now, history, mine, maybe, judged: new Set(), id: { rule: rule.name, kind: rule.kind, entity: '', severity: rule.severity }, out };
    });
    // The work is in plain methods, the generator only counts and pauses: V8 optimizes a hot loop in a generator less.
    const step = { work: 0 };
    for (let from = 0; from < readings.length; from += TILE) {
      const end = Math.min(readings.length, from + TILE);
      for (const s of scopes) {
        for (let i = from; i < end; ) {
          if (step.work >= ROWS_PER_STEP) {
            yield;
            step.work = 0;
          }
          i = this.judgeSlice(s, readings, i, end, step);
        }
      }
    }

    const rejected = new Set(outcome.rejected.map((r) => r.entity).filter((e): e is string => e !== undefined));
    let lastSeen: Set<string> | undefined;
    for (const { c, mine, judged } of scopes) {
      for (const t of mine.values()) {
        // An alert looked at is a unit of work too, counted on from the judging's.
        if (++step.work >= ROWS_PER_STEP) {
          yield;
          step.work = 0;
        }
        if (!isActive(t.alert) || rejected.has(t.alert.entity) || judged.has(t.alert.entity)) continue;
        // Fed by this poll: its last judged reading carried the poll's label (the poll runner sets it), or the store
        // still says this poll last saw the entity. The label matters live: the runner forgets the `latest` rows of
        // vanished entities before the engine runs, so the store alone would never let them count as absent.
        if (t.alert.labels.poll !== outcome.poll) {
          lastSeen ??= new Set(this.sources.lastSeenBy(outcome.poll).map((e) => pairKey(e.kind, e.entity)));
          if (!c.reads.some((k) => lastSeen!.has(pairKey(k, t.alert.entity)))) continue;
        }
        this.apply(t, { type: 'absent' }, now, c.settings, identityOf(t.alert), out);
      }
    }
  }

  /**
   * Judges readings from `from` up to `end` with one rule (a slice of {@link judge}'s pass) until a step's worth of
   * work is done, counted in `step` across slices, tiles and rules: {@link ROWS_PER_STEP} units, a reading one and an
   * alert stepped and written {@link ROWS_PER_STEP}/{@link HEAVY_ROWS_PER_STEP} more (a plain verdict is ~0.3 µs, an
   * alert ~15 µs: a pause point every 10 readings cost more than the verdicts of a calm poll). Returns where the next
   * slice starts.
   */
  private judgeSlice(s: JudgeScope, readings: readonly Reading[], from: number, end: number, step: { work: number }): number {
    const c = s.c;
    let work = step.work;
    let i = from;
    // Nothing in this loop is captured by a closure (the describer is made in judged()): V8 then allocates no
    // context per reading, which was a third of a calm poll's garbage.
    while (i < end && work < ROWS_PER_STEP) {
      const reading = readings[i++]!;
      work++;
      if (!c.reads.includes(reading.kind) || !c.selects(reading)) continue;
      // A calm poll's map is empty: nothing to hash then. Else the filter first (see EntityFilter).
      const prev = s.mine.size !== 0 && (s.maybe === undefined || s.maybe.mayHave(reading.entity)) ? s.mine.get(reading.entity) : undefined;
      const verdict = this.evaluate(c, reading, s.now, s.history, isActive(prev?.alert));
      s.out.evaluated++;
      if (!prev && verdict.status !== 'breach') {
        if (verdict.status === 'data_error') s.out.dataErrors.push({ rule: c.rule.name, entity: reading.entity, reason: verdict.reason });
        continue; // the common case: nothing wrong, nothing stored
      }
      this.judged(c, reading, verdict, prev, s);
      work += ROWS_PER_STEP / HEAVY_ROWS_PER_STEP;
    }
    step.work = work;
    return i;
  }

  /** Steps the alert of a judged reading that has one or may get one. */
  private judged(c: CompiledRule, reading: Reading, verdict: Verdict, prev: TrackedAlert | undefined, s: JudgeScope): void {
    const { rule } = c;
    s.judged.add(reading.entity);
    (s.maybe ??= new EntityFilter()).add(reading.entity); // it may get an alert now: a second reading of it in this poll must find it
    if (prev !== undefined && verdict.status === 'breach' && breachKeepsStanding(prev, s.now, c.settings, rule)) {
      // Most active alerts of an incident, every poll: no transition, so no step, signal, describer or copy. Described
      // as describeAlert does, without its object: the labels must be the alert's own, the annotations may move.
      const a = prev.alert;
      if (sameLabelsKept(prev, rule, reading)) {
        const annotations = renderAnnotations(rule, this.described(reading), this.explain(c, reading, verdict), a.annotations);
        const moved = annotations !== a.annotations;
        if (breachInPlace(prev, verdict, reading.at, num(reading.fields.block), s.now, annotations)) this.rows.saveMoving(prev, moved, s.now);
        return;
      }
    }
    const describe = (current: Readonly<AlertDescription>) => this.describe(c, this.described(reading), verdict, current);
    const signal: Signal = { type: 'verdict', verdict, data_at: reading.at, block: num(reading.fields.block), describe };
    this.apply(prev, signal, s.now, c.settings, { ...s.id, entity: reading.entity }, s.out);
  }

  /**
   * The reading with the fields its annotations read too, for an alert that is described (a backtest's readings hold
   * only what the rules judge by: EngineSources.described); decoded only where a description is made — a reading of
   * an entity whose alert is resolved or inactive, judged ok, is not.
   */
  private described(reading: Reading): Reading {
    return this.sources.described ? this.sources.described(reading) : reading;
  }

  /**
   * Describes the alert of a reading just judged (`c.input` still holds it): its verdict explained by the kind first,
   * the only place the engine asks for a context (see {@link RuleKind.explain}).
   */
  private describe(c: CompiledRule, reading: Reading, verdict: Verdict, current: Readonly<AlertDescription>): AlertDescription {
    return describeAlert(c.rule, reading, this.explain(c, reading, verdict), current);
  }

  /** The verdict explained by its kind where the rule's annotations show its context (`c.input` still holds the reading). */
  private explain(c: CompiledRule, reading: Reading, verdict: Verdict): Verdict {
    if (!c.explains) return verdict;
    try {
      return explained(c.kind, c.input, verdict);
    } catch (err) {
      // The annotations then show what they can without it: a kind's fault is not the poll's.
      this.opts.log.error('alert_explain_failed', { rule: c.rule.name, entity: reading.entity, err });
      return verdict;
    }
  }

  private evaluate(c: CompiledRule, reading: Reading, now: number, history: HistoryView, active: boolean): Verdict {
    const maxAge = c.maxAge ?? (reading.kind === 'market' ? this.opts.alerting.max_reading_age : undefined);
    if (maxAge !== undefined && now - reading.at > maxAge) {
      return { status: 'data_error', reason: 'stale_reading' };
    }
    // A field the rule needs that the service sent unreadably: no data for this entity this time (SPEC §6).
    for (const field of c.needs) {
      const why = reading.unreadable?.[field];
      if (why !== undefined) return { status: 'data_error', reason: `${field} unreadable (${why})` };
    }
    try {
      const input = c.input;
      input.reading = judgedReading(reading, c.worst);
      input.now = now;
      input.history = history;
      input.active = active;
      // With no alert active, an `ok` verdict is looked at for its status only (judgeSlice, step): the kind may share one.
      input.lean = !active;
      return c.kind.evaluate(input);
    } catch (err) {
      this.opts.log.error('alert_evaluate_failed', { rule: c.rule.name, entity: reading.entity, err });
      return { status: 'data_error', reason: 'evaluate_failed' };
    }
  }
}

/** What an evaluate input holds between calls: no reading (it is filled anew for each call). */
const NO_READING = undefined as unknown as Reading;

/** Empties an evaluate input between polls: the engine's own history view in place of the poll's, no reading. */
function forget(input: EvalInput, history: HistoryView): EvalInput {
  input.reading = NO_READING;
  input.history = history;
  return input;
}

/**
 * Readings a tile of the judging pass holds (see judgeRules): every rule judges them before the next tile. Small enough
 * that they are still in the CPU's cache when the last rule reads them, long enough that each rule runs a row of them.
 */
const TILE = 64;

const pairKey = (a: string, b: string): string => `${a}\u0000${b}`;

/** What one rule's part of a poll's pass shares between the slices. */
interface JudgeScope {
  c: CompiledRule;
  now: number;
  history: HistoryView;
  /** The rule's tracked alerts by entity (the kept copy's map: updated as readings are judged and saved). */
  mine: ReadonlyMap<string, TrackedAlert>;
  /** Entities that may be keys of `mine`: every key is in it (see {@link EntityFilter}); undefined while none was (then `mine` is asked). */
  maybe: EntityFilter | undefined;
  /** Entities with an alert of this rule judged in this poll. */
  judged: Set<string>;
  id: AlertIdentity;
  out: EngineResult;
}

function identityOf(a: Alert): AlertIdentity {
  return { rule: a.rule, kind: a.kind, entity: a.entity, severity: a.severity };
}

/**
 * Labels (rule, alertname, severity over the reading's and the rule's labels) and rendered annotations of one alert;
 * `current`'s own objects where they are equal to what would be built (see {@link AlertDescription}).
 */
export function describeAlert(rule: RuleBase, reading: Reading, verdict: Verdict, current?: Readonly<AlertDescription>): AlertDescription {
  return {
    labels:
      current && sameLabels(current.labels, rule, reading)
        ? current.labels
        : { ...reading.labels, ...rule.labels, rule: rule.name, alertname: rule.name, severity: rule.severity },
    annotations: renderAnnotations(rule, reading, verdict, current?.annotations),
  };
}

const OWN_LABELS = new Set(['rule', 'alertname', 'severity']);

/** A rule's own labels as {@link sameLabels} compares them: worked out once per rule, not on every call. */
interface RuleLabels {
  /** The rule's labels but rule, alertname and severity (which the rule's name and severity win over), in order. */
  keys: readonly string[];
  values: readonly string[];
  /** Label keys a reading's value of is not kept: the three above and the rule's own. */
  over: ReadonlySet<string>;
}

const ruleLabelsOf = new WeakMap<RuleBase, RuleLabels>();

function ruleLabels(rule: RuleBase): RuleLabels {
  let m = ruleLabelsOf.get(rule);
  if (!m) {
    const entries = Object.entries(rule.labels ?? {}).filter(([k]) => !OWN_LABELS.has(k));
    m = { keys: entries.map(([k]) => k), values: entries.map(([, v]) => v), over: new Set([...OWN_LABELS, ...entries.map(([k]) => k)]) };
    ruleLabelsOf.set(rule, m);
  }
  return m;
}

/**
 * Whether `labels` holds exactly what {@link describeAlert} would build for the reading, without building it. Label
 * values are strings, and no plain object inherits a string member: a value equal to the one wanted is the object's own.
 */
function sameLabels(labels: Readonly<Record<string, string>>, rule: RuleBase, reading: Reading): boolean {
  if (labels.rule !== rule.name || labels.alertname !== rule.name || labels.severity !== rule.severity) return false;
  const { keys, values, over } = ruleLabels(rule);
  let n = OWN_LABELS.size + keys.length;
  const from = reading.labels;
  for (const k in from) {
    if (over.has(k)) continue;
    const v = labels[k];
    if (v === undefined || v !== from[k]) return false;
    n++;
  }
  for (let i = 0; i < keys.length; i++) if (labels[keys[i]!] !== values[i]) return false;
  for (const _ in labels) n--;
  return n === 0;
}

/**
 * {@link sameLabels} for an alert of the engine's copy, by the text kept with its row (`seen`) where the row has one
 * that holds for its labels object and this rule (a step gives the alert new labels, a reload new rules).
 */
function sameLabelsKept(t: TrackedAlert, rule: RuleBase, reading: Reading): boolean {
  const labels = t.alert.labels;
  const seen = t.seen;
  if (seen !== undefined && seen.labels === labels && seen.rule === rule) {
    // The rule's `over` kept with the text: no lookup of the rule's labels per alert and poll where the text answers.
    if (seen.text !== undefined) {
      if (sameAsText(seen.text, reading.labels, seen.over)) return true;
    } else {
      // Labels holding the separator, found equal to this object with this rule: when they are equal again, the
      // reading's labels (but the rule's) are this object's, which hold it still — no text to try to make again.
      return sameLabels(labels, rule, reading);
    }
  }
  if (!sameLabels(labels, rule, reading)) return false;
  const { over } = ruleLabels(rule);
  t.seen = { text: labelsText(reading.labels, over), labels, rule, over };
  return true;
}

/** The memo as this poll's history view: brought up to date with the store when a rule first looks back; `range` cached per poll. */
function syncedOnFirstUse(memo: HistoryMemo): HistoryView {
  let synced = false;
  const ranges = cachedHistory(memo);
  return {
    at(kind, entity, t) {
      if (!synced) {
        memo.sync();
        synced = true;
      }
      return memo.at(kind, entity, t);
    },
    range: ranges.range,
  };
}

/** A history view that answers each (kind, entity, t) question once per poll: several rules often ask the same one. */
function cachedHistory(h: HistoryView): HistoryView {
  const at = new Map<string, Reading | undefined>();
  const range = new Map<string, Reading[]>();
  return {
    at(kind, entity, t) {
      const k = `${kind}\u0000${entity}\u0000${t}`;
      if (!at.has(k)) at.set(k, h.at(kind, entity, t));
      return at.get(k);
    },
    range(kind, entity, from, to) {
      const k = `${kind}\u0000${entity}\u0000${from}\u0000${to}`;
      let r = range.get(k);
      if (!r) {
        r = h.range(kind, entity, from, to);
        range.set(k, r);
      }
      return r;
    },
  };
}
