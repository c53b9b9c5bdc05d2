/**
 * Series ownership for gauges fed by polls: each owner (a poll) declares the full set of series it
 * sets on every successful run; a series no owner declares any more is removed from its gauge, so
 * a market that vanished (or a field that turned null) leaves no stale sample behind.
 */
import type { Gauge } from 'prom-client';

/** Label values of one series, keyed by label name. */
export type Labels = Record<string, string>;

/** One sample an owner wants exported. */
export interface SeriesSample {
  gauge: Gauge<string>;
  labels: Labels;
  value: number;
}

/** A batch of samples keyed by a unique series key (see {@link seriesKey}). */
export type SeriesBatch = Map<string, SeriesSample>;

/** A key unique to (metric, label set): label values joined in the metric's label order. */
export function seriesKey(metric: string, labelKey: string): string {
  return metric + '\u0001' + labelKey;
}

/** Joins label values into a key; label names are implied by the caller's fixed order. */
export function labelKey(values: readonly string[]): string {
  return values.join('\u0000');
}

interface Owned {
  gauge: Gauge<string>;
  labels: Labels;
}

/** Tracks which owner set which series, and removes series nobody sets any more. */
export class SeriesTracker {
  private readonly byOwner = new Map<string, Map<string, Owned>>();
  private readonly refs = new Map<string, number>();

  /**
   * Replaces everything `owner` exports with `batch`: sets every sample, and removes the series
   * the owner set last time and no longer does (unless another owner still sets them).
   */
  replace(owner: string, batch: SeriesBatch): void {
    const old = this.byOwner.get(owner) ?? new Map<string, Owned>();
    const next = new Map<string, Owned>();
    for (const [key, s] of batch) {
      if (!Number.isFinite(s.value)) continue;
      s.gauge.set(s.labels, s.value);
      next.set(key, { gauge: s.gauge, labels: s.labels });
      if (!old.has(key)) this.refs.set(key, (this.refs.get(key) ?? 0) + 1);
    }
    for (const [key, o] of old) {
      if (!next.has(key)) this.release(key, o);
    }
    if (next.size > 0) this.byOwner.set(owner, next);
    else this.byOwner.delete(owner);
  }

  /** Drops every series of `owner` (e.g. a poll that left the config). */
  forget(owner: string): void {
    const old = this.byOwner.get(owner);
    if (!old) return;
    for (const [key, o] of old) this.release(key, o);
    this.byOwner.delete(owner);
  }

  /** Number of series currently owned by `owner`. */
  size(owner: string): number {
    return this.byOwner.get(owner)?.size ?? 0;
  }

  private release(key: string, o: Owned): void {
    const n = (this.refs.get(key) ?? 1) - 1;
    if (n > 0) {
      this.refs.set(key, n);
      return;
    }
    this.refs.delete(key);
    o.gauge.remove(o.labels);
  }
}
