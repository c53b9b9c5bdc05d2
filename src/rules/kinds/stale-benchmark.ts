/**
 * `stale_benchmark`: the newest benchmark day of a network/code is not being kept up to date. A breach, with
 * `reason`, when (checked in this order):
 * - `stale`: the service marks the day isStale (it is more than 2 days old: the network's vaults stopped being indexed);
 * - `too_old`: now − day > `max_age` (36h: a day is normally replaced a few hours after it ends);
 * - `incomplete`: the day is still isComplete:false and has been for longer than `incomplete_for` (6h).
 *
 * "Incomplete since": walking this entity's readings back from the current one, the run of readings with the same
 * `day` and isComplete false; its oldest reading's time is when we first saw it incomplete — but never earlier than
 * the day's end (day + 24h), because a day cannot be complete before it has ended, so being incomplete while it
 * runs is not late. When the run reaches back to the start of the history we hold (lookout just started, or the
 * reading times are the day's own timestamp), we cannot tell when it began and take the day's end. A newer day
 * arriving ends the run, and each new day starts afresh.
 */
import type { Reading } from '../../model.js';
import { bool, num } from '../coerce.js';
import { defineKind, notANumber, notMine, type RuleOf } from '../define.js';
import type { ParamShape } from '../param-kit.js';
import type { EvalInput, Verdict } from '../rule-kind.js';

const DAY = 86_400_000;
// How far back to look for the reading that precedes the incomplete run (the previous day's last reading).
const LOOKBACK = 2 * DAY;

const params = {
  max_age: ({ positiveDuration }) => positiveDuration.default(36 * 3_600_000),
  incomplete_for: ({ duration }) => duration.default(6 * 3_600_000),
} satisfies ParamShape;

/** When the current incomplete day started to count as late, from this entity's history (see the module comment). */
export function incompleteSince(current: Reading, day: number, older: readonly Reading[]): number {
  const dayEnd = day + DAY;
  let runStart = current.at;
  for (let i = older.length - 1; i >= 0; i--) {
    const r = older[i]!;
    if (r.at >= current.at) continue;
    if (num(r.fields.day) !== day || bool(r.fields.isComplete) !== false) return Math.max(runStart, dayEnd);
    runStart = r.at;
  }
  return dayEnd;
}

type StaleRule = RuleOf<typeof params>;

/** A judged benchmark day: the verdict's value and threshold, the values annotations show, and the reason of a breach (null: ok). */
interface JudgedDay {
  value: number;
  threshold: number;
  age: number;
  incomplete_for: number | null;
  day: number;
  max_age: number;
  reason: 'stale' | 'too_old' | 'incomplete' | null;
}

/** The checks of the module comment, in their order; or the verdict when the day cannot be judged. */
function judgeDay({ rule, reading, now, history }: EvalInput<StaleRule>): JudgedDay | Verdict {
  if (reading.kind !== 'benchmark') return notMine('benchmark', reading);
  const day = num(reading.fields.day);
  if (day === null) return notANumber('day', reading.fields.day);
  if (day > now + DAY) return { status: 'data_error', reason: `day ${new Date(day).toISOString()} is in the future` };
  const isStale = bool(reading.fields.isStale);
  const isComplete = bool(reading.fields.isComplete);
  const age = (now - day) / 1000;
  let incomplete: number | null = null;
  if (isComplete === false) {
    const since = incompleteSince(reading, day, history.range('benchmark', reading.entity, day - LOOKBACK, now));
    incomplete = Math.max(0, now - since) / 1000;
  }
  const maxAge = rule.max_age / 1000;
  // One object a reading: the verdict's value and threshold are the age's unless the incomplete run is the breach.
  let reason: JudgedDay['reason'] = null;
  let value = age;
  let threshold = maxAge;
  if (isStale === true) reason = 'stale';
  else if (age > maxAge) reason = 'too_old';
  else if (incomplete !== null && incomplete > rule.incomplete_for / 1000) {
    reason = 'incomplete';
    value = incomplete;
    threshold = rule.incomplete_for / 1000;
  }
  return { value, threshold, age, incomplete_for: incomplete, day, max_age: maxAge, reason };
}

/**
 * The day each verdict judged. Explain is asked right after evaluate for the same verdict (the engine describing an
 * alert, `evaluateExplained`); it takes the day from here instead of judging it again, which queried the entity's
 * history a second time. Keyed by the verdict object itself (a new one each evaluate, a benchmark day a network and
 * code: a few dozen a poll): any other verdict is judged afresh, and nothing outlives its verdict.
 */
const judgedDays = new WeakMap<Verdict, JudgedDay>();

/** The `stale_benchmark` rule kind. */
export const staleBenchmark = defineKind({
  kind: 'stale_benchmark',
  description: 'the newest benchmark day is isStale, older than `max_age`, or incomplete for longer than `incomplete_for`',
  reads: ['benchmark'],
  context: ['reason', 'age', 'incomplete_for', 'day', 'max_age'],
  needs: () => ['isStale', 'isComplete'],
  fields: () => ['day', 'isStale', 'isComplete'],
  params,
  evaluate(input) {
    const j = judgeDay(input);
    if ('status' in j) return j;
    const v: Verdict = { status: j.reason === null ? 'ok' : 'breach', value: j.value, threshold: j.threshold };
    judgedDays.set(v, j);
    return v;
  },
  explain(input, v) {
    const j = judgedDays.get(v) ?? judgeDay(input);
    return 'status' in j ? {} : { age: j.age, incomplete_for: j.incomplete_for, day: j.day, max_age: j.max_age, reason: j.reason };
  },
});
