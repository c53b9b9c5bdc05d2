/** The extension seam for rule kinds: one module per kind implements {@link RuleKind}; the registry lists them. */
import { setOwn } from '../own.js';
import type { Reading, ReadingKind } from '../model.js';
import type { RuleBase, RuleKindSchema } from './schema.js';

/** Read access to stored readings, for rules that compare with the past (apy_jump's `window`). */
export interface HistoryView {
  /** The newest stored reading of (kind, entity) with `at` ≤ t, or undefined when there is none that old. */
  at(kind: ReadingKind, entity: string, t: number): Reading | undefined;
  /** Stored readings of (kind, entity) with from ≤ at ≤ t, oldest first. */
  range(kind: ReadingKind, entity: string, from: number, to: number): Reading[];
}

/** A {@link HistoryView} over a list of readings held in memory (any order): for fixtures and rule unit tests. */
export function historyOf(readings: readonly Reading[]): HistoryView {
  const sorted = [...readings].sort((a, b) => a.at - b.at);
  const of = (kind: ReadingKind, entity: string) => sorted.filter((r) => r.kind === kind && r.entity === entity);
  return {
    at: (kind, entity, t) => of(kind, entity).filter((r) => r.at <= t).at(-1),
    range: (kind, entity, from, to) => of(kind, entity).filter((r) => r.at >= from && r.at <= to),
  };
}

/**
 * What a rule kind is given to judge one reading. The engine fills one object anew for each call: read it during the
 * call, keep no reference to it (nor return one).
 */
export interface EvalInput<R extends RuleBase = RuleBase> {
  rule: R;
  reading: Reading;
  /** Evaluation time, ms. */
  now: number;
  history: HistoryView;
  /** The alert of this (rule, entity) is pending or firing now: hysteresis (`clear_below`) keys on it. */
  active: boolean;
  /**
   * The caller reads nothing of an `ok` verdict but its status: the kind may return {@link LEAN_OK} for one instead of
   * a verdict of its own. The engine sets it where no alert is active; a calm poll's 70,000 `ok` verdicts, each a new
   * object, were most of its garbage (issue 14, B4). Callers that show or chart verdicts leave it unset.
   */
  lean?: boolean;
}

/**
 * A rule kind's judgement of one reading.
 * - `breach`: the condition holds; `ok`: it does not (with hysteresis applied);
 * - `wait`: cannot judge yet (e.g. no reading `window` old): no state change;
 * - `data_error`: the value is one the service could not mean (utilization > 1): counted and reported, no state change.
 */
export type Verdict =
  | {
      status: 'breach' | 'ok';
      /** The value judged (in the field's base unit), the threshold it was compared with, and the previous value where one applies. */
      value: number | null;
      threshold: number | null;
      previous?: number | null;
      /**
       * Extra values for annotations (e.g. `change`, `lag`, `deviation`); the keys are the kind's {@link RuleKind.context}.
       * Never set by `evaluate`: {@link explained} adds it where the verdict is shown.
       */
      context?: Record<string, unknown>;
    }
  | { status: 'wait'; reason: string }
  | { status: 'data_error'; reason: string; value?: number | null };

/** A rule kind: its schema (from {@link RuleKindSchema}), what it reads, and a pure evaluate(). */
export interface RuleKind<R extends RuleBase = RuleBase> extends RuleKindSchema {
  /** One line for `lookout check` and the README. */
  description: string;
  /** Which readings it can judge (for `threshold`, every kind: {@link RuleKind.readingKinds} narrows it per rule). */
  reads: readonly ReadingKind[];
  /** The keys of the `context` its verdicts carry once explained ({@link explain}), usable in annotation templates. */
  context: readonly string[];
  /** Which readings this particular rule judges; defaults to {@link RuleKind.reads}. */
  readingKinds?(rule: R): readonly ReadingKind[];
  /**
   * The fields this rule cannot judge without, named as the client names them in {@link Reading.unreadable}. When the
   * service sent one of them unreadably, the engine gives the entity no verdict this time (a data error naming the
   * field): its alert keeps its state, whatever the kind would have made of the unknown value (SPEC §6).
   */
  needs?(rule: R): readonly string[];
  /**
   * Over bucketed history (a reading with `bucket`: 5-minute buckets past `storage.raw_retention`), which extreme of each
   * field is the worst for this rule — `max` for a rule that fires above, `min` below. The engine judges the bucket's
   * reading with those fields in place of its last values; fields not named keep the last value.
   */
  worst?(rule: R): Readonly<Record<string, 'min' | 'max'>>;
  /**
   * The fields of the judged reading evaluate (and explain) read, by their top-level names (`market` for
   * `market.chain`); history read through the view is not limited by it. A backtest decodes only these from stored
   * history (with those its select, annotations and the engine read, src/rules/reading-fields.ts). Default: the
   * fields it {@link needs} (say so only where evaluate reads others); a kind that says neither gets every field.
   */
  fields?(rule: R): readonly string[];
  /** Judges one reading; pure (no I/O but the history view). The verdict has no `context` (see {@link explain}). */
  evaluate(input: EvalInput<R>): Verdict;
  /**
   * The values of {@link context} for a `breach` or `ok` verdict of `input`, worked out only where the verdict is
   * shown (an alert described, `lookout notify render`): a poll judges 70,000 readings, nearly all `ok` with no alert,
   * and building a context for each was a quarter of a calm poll's time (issue 14, B4). Call it through {@link explained}.
   */
  explain?(input: EvalInput<R>, verdict: JudgedVerdict): Record<string, unknown>;
}

/** A verdict on the condition itself (`breach` or `ok`): one that has a value, a threshold and a context. */
export type JudgedVerdict = Extract<Verdict, { status: 'breach' | 'ok' }>;

/**
 * The one `ok` verdict a kind returns where its input is {@link EvalInput.lean}: no value, no threshold, frozen (never
 * explained: nothing reads more of it than its status).
 */
export const LEAN_OK: Verdict = Object.freeze({ status: 'ok', value: null, threshold: null }) as Verdict;

/**
 * `verdict` (of `kind` for `input`) with its context, for showing it: a `breach` or `ok` verdict gets the kind's
 * {@link RuleKind.explain}; the verdict object itself is completed and returned (it is the caller's, fresh from
 * evaluate). The one place contexts are made.
 */
export function explained<R extends RuleBase>(kind: RuleKind<R>, input: EvalInput<R>, verdict: Verdict): Verdict {
  if ((verdict.status === 'breach' || verdict.status === 'ok') && verdict.context === undefined && kind.explain) verdict.context = kind.explain(input, verdict);
  return verdict;
}

/** {@link RuleKind.evaluate} with the verdict's context: what a caller that shows the verdict wants. */
export function evaluateExplained<R extends RuleBase>(kind: RuleKind<R>, input: EvalInput<R>): Verdict {
  return explained(kind, input, kind.evaluate(input));
}

/** A rule's {@link RuleKind.worst} as pairs of field and extreme, made once per rule ({@link worstPicks}). */
export type WorstPicks = ReadonlyArray<readonly [field: string, pick: 'min' | 'max']>;

/**
 * The pairs {@link judgedReading} takes, from a kind's `worst`; undefined where there are none (the kind judges a
 * bucket's last values: no copy of the reading is made).
 */
export function worstPicks(worst: Readonly<Record<string, 'min' | 'max'>> | undefined): WorstPicks | undefined {
  const pairs = worst && Object.entries(worst);
  return pairs && pairs.length > 0 ? pairs : undefined;
}

/**
 * The reading a rule judges: a bucket's worst values for the rule's direction in place of its last ones (see
 * {@link RuleKind.worst}). Judged per bucket and rule: the rule's pairs are made once ({@link worstPicks}), where
 * listing them per call took two thirds of its time.
 */
export function judgedReading(reading: Reading, worst: WorstPicks | undefined): Reading {
  const b = reading.bucket;
  if (!b || !worst) return reading;
  const fields = { ...reading.fields };
  for (let i = 0; i < worst.length; i++) {
    const [field, pick] = worst[i]!;
    const extremes = pick === 'max' ? b.max : b.min;
    // Own members only: a field named like a member of every object (`toString`) has no extreme unless stored.
    if (Object.hasOwn(extremes, field) && extremes[field] !== undefined) setOwn(fields, field, extremes[field]);
  }
  return { ...reading, fields };
}
