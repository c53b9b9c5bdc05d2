/**
 * A rule's value over stored readings, for drawing: each reading judged by the rule's kind as the engine judges it
 * (the same `evaluate`, the same history view), its verdict's `value` kept. A reading the rule cannot judge (a field
 * it needs unreadable, no reading a window old yet, a data error) is a gap, not a zero.
 */
import type { Point } from '../html/chart.js';
import type { Reading } from '../model.js';
import { judgedReading, worstPicks, type HistoryView, type RuleKind } from './rule-kind.js';
import type { RuleBase } from './schema.js';

/** The rule's value at each reading, and the threshold its verdicts compared with (the newest, null when none did). */
export interface JudgedSeries {
  points: Point[];
  threshold: number | null;
}

/** The value the rule saw in each of `readings` (oldest first), judged at the reading's own time. */
export function valueSeries(kind: RuleKind, rule: RuleBase, readings: readonly Reading[], history: HistoryView): JudgedSeries {
  const needs = kind.needs?.(rule) ?? [];
  const worst = worstPicks(kind.worst?.(rule));
  let threshold: number | null = null;
  const points = readings.map((reading): Point => {
    if (needs.some((f) => reading.unreadable?.[f] !== undefined)) return { t: reading.at, v: null };
    try {
      // A bucket of older history is drawn at its worst value for the rule, as the engine judges it.
      const verdict = kind.evaluate({ rule, reading: judgedReading(reading, worst), now: reading.at, history, active: false });
      if (verdict.status !== 'breach' && verdict.status !== 'ok') return { t: reading.at, v: null };
      if (typeof verdict.threshold === 'number') threshold = verdict.threshold;
      return { t: reading.at, v: typeof verdict.value === 'number' && Number.isFinite(verdict.value) ? verdict.value : null };
    } catch {
      return { t: reading.at, v: null };
    }
  });
  return { points, threshold };
}

/** The level below which an active alert of the rule clears, when the rule has one (`clear_below`). */
export function clearLevel(rule: RuleBase): number | null {
  const c = (rule as { clear_below?: unknown }).clear_below;
  return typeof c === 'number' && Number.isFinite(c) ? c : null;
}
