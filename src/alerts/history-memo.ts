/**
 * The engine's look-back memo: answers `history.at(kind, entity, t)` from memory across polls, asking the store only
 * when an answer may have changed. `apy_jump` asks every market for its reading `window` ago on every poll; that
 * reading rarely changes from one poll to the next, and 10,000 SQLite point queries (and their fields JSON) a poll
 * were most of the evaluation's time.
 *
 * Each remembered answer holds for a span of times: the answer to at(t) is the newest row with at ≤ t, so it is also
 * the answer for every t' from that row's own `at` up to (not including) the first `at` stored after t. The memo keeps
 * that span and drops it when history changes inside it:
 * - a row added with `at` in the span (a newer reading, or a new revision of the answer's time) ends it; the memo
 *   learns of every added row from the store itself ({@link HistoryChanges.since}), whoever wrote it;
 * - a row it saw being added that is gone now (the transaction that added it rolled back) clears the whole memo;
 * - history losing its oldest rows (a prune, or the fold of rows past `storage.raw_retention` into buckets, which runs
 *   every few seconds) ends every span that starts before the oldest row kept: only those can have lost their row.
 * An entity not asked about for 64 syncs is forgotten, so markets that went away do not stay in memory (it keeps one
 * parsed reading per entity and window, not measured separately in B6). Call {@link HistoryMemo.sync} inside the transaction
 * that reads, before the answers are used; `range` is not memoized (the per-poll cache of the engine keeps it).
 */
import type { Reading, ReadingKind } from '../model.js';
import type { HistoryView } from '../rules/rule-kind.js';
import type { HistoryChanges, HistoryRowKey } from '../store/history-changes.js';
import type { ReadingsRepo } from '../store/readings.js';

interface Span {
  /** The answer's own time (−∞ when there is no row that old): the span starts there. */
  lo: number;
  /** The first time stored after the question's t (+∞ when none): the span ends before it. */
  hi: number;
  reading: Reading | undefined;
}

/**
 * An entity's spans, the newest inline (one a look-back rule reuses poll after poll: found without an array and a
 * span object to fetch), older ones in `rest`, oldest first; and the sync in which one of them was last asked for.
 */
class Spans implements Span {
  rest: Span[] | undefined = undefined;
  constructor(
    public lo: number,
    public hi: number,
    public reading: Reading | undefined,
    public used: number,
  ) {}

  find(t: number): Span | undefined {
    if (this.lo <= t && t < this.hi) return this;
    if (this.rest) for (const s of this.rest) if (s.lo <= t && t < s.hi) return s;
    return undefined;
  }

  add(span: Span): void {
    const rest = (this.rest ??= []);
    if (rest.length + 1 >= SPANS_PER_ENTITY) rest.shift();
    rest.push({ lo: this.lo, hi: this.hi, reading: this.reading });
    this.lo = span.lo;
    this.hi = span.hi;
    this.reading = span.reading;
  }

  /** Keeps the spans `keep` holds to, in their order; false when none is left. */
  retain(keep: (s: Span) => boolean): boolean {
    // Most syncs keep every span of most entities: nothing to copy then.
    if (keep(this) && (this.rest === undefined || this.rest.every(keep))) return true;
    const kept = [...(this.rest ?? []), { lo: this.lo, hi: this.hi, reading: this.reading }].filter(keep);
    const newest = kept.pop();
    if (!newest) return false;
    this.lo = newest.lo;
    this.hi = newest.hi;
    this.reading = newest.reading;
    this.rest = kept.length > 0 ? kept : undefined;
    return true;
  }

  /** The latest end among the spans. */
  maxHi(): number {
    let hi = this.hi;
    if (this.rest) for (const s of this.rest) if (s.hi > hi) hi = s.hi;
    return hi;
  }
}

/** Spans kept per entity: one per distinct window of the rules that look back at it, in practice. */
const SPANS_PER_ENTITY = 4;
/** Syncs after which an entity nobody asked about is forgotten (a market gone, a rule removed). */
const FORGET_AFTER_SYNCS = 64;

/** See the module comment. */
export class HistoryMemo implements HistoryView {
  /** By kind, then entity: no joined key string per question. */
  private spans = new Map<string, Map<string, Spans>>();
  private synced = false;
  private syncs = 0;
  /** The newest row seen at the last sync (the marker a rollback would change). */
  private lastRow: HistoryRowKey | undefined;
  private oldestSeen: number | null = null;

  constructor(
    private readonly readings: Pick<ReadingsRepo, 'historyAt' | 'historyRange'>,
    private readonly changes: HistoryChanges,
  ) {}

  /** Brings the memo up to date with what history holds now. */
  sync(): void {
    this.syncs++;
    if (this.syncs % FORGET_AFTER_SYNCS === 0) this.forgetUnused();
    const oldest = this.changes.oldestSeen();
    const marker = this.lastRow;
    const intact = this.synced && (marker === undefined || this.changes.has(marker));
    if (!intact || oldest === null) {
      this.spans.clear();
      this.lastRow = this.changes.last();
      this.oldestSeen = oldest;
      this.synced = true;
      return;
    }
    // Rows deleted from the front: a span that starts before the oldest storage time kept may have lost its row (a
    // row is stored at or after its own time, so a span starting at or after it still has its row and its end).
    if (this.oldestSeen !== null && oldest > this.oldestSeen) this.endSpansBefore(oldest);
    this.oldestSeen = oldest;
    for (const [kind, ofKind] of this.spans) {
      // A row at or after the end of every span of its kind changes none: only the others are read.
      let end = -Infinity;
      for (const spans of ofKind.values()) end = Math.max(end, spans.maxHi());
      for (const row of this.changes.since(marker, kind as ReadingKind, end)) {
        const spans = ofKind.get(row.entity);
        if (!spans) continue;
        // A row older than an answer does not change it; one at the answer's time (a new revision) or later within the span does.
        if (!spans.retain((s) => row.at < s.lo || row.at >= s.hi)) ofKind.delete(row.entity);
      }
    }
    this.lastRow = this.changes.last();
  }

  private endSpansBefore(t: number): void {
    for (const ofKind of this.spans.values()) {
      for (const [entity, spans] of ofKind) {
        if (!spans.retain((s) => s.lo >= t)) ofKind.delete(entity);
      }
    }
  }

  private forgetUnused(): void {
    for (const ofKind of this.spans.values()) {
      for (const [entity, spans] of ofKind) if (this.syncs - spans.used >= FORGET_AFTER_SYNCS) ofKind.delete(entity);
    }
  }

  at(kind: ReadingKind, entity: string, t: number): Reading | undefined {
    let ofKind = this.spans.get(kind);
    const spans = ofKind?.get(entity);
    if (spans) {
      spans.used = this.syncs;
      const s = spans.find(t);
      if (s) return s.reading;
    }
    const reading = this.readings.historyAt(kind, entity, t);
    const span: Span = { lo: reading ? reading.at : -Infinity, hi: this.changes.nextAt(kind, entity, t) ?? Infinity, reading };
    if (!ofKind) this.spans.set(kind, (ofKind = new Map()));
    if (!spans) ofKind.set(entity, new Spans(span.lo, span.hi, span.reading, this.syncs));
    else spans.add(span);
    return reading;
  }

  range(kind: ReadingKind, entity: string, from: number, to: number): Reading[] {
    return this.readings.historyRange(kind, entity, from, to);
  }
}
