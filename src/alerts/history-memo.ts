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
 * - a row it saw being added that is gone or different now (the transaction that added it rolled back, and its id
 *   went to another row), or history losing its oldest rows (a prune), clears the whole memo.
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

/** An entity's spans, and the sync in which one of them was last asked for. */
interface Spans {
  list: Span[];
  used: number;
}

/** Spans kept per entity: one per distinct window of the rules that look back at it, in practice. */
const SPANS_PER_ENTITY = 4;
/** Syncs after which an entity nobody asked about is forgotten (a market gone, a rule removed). */
const FORGET_AFTER_SYNCS = 64;

const sameRow = (a: HistoryRowKey, b: HistoryRowKey | undefined): boolean =>
  b !== undefined && a.id === b.id && a.kind === b.kind && a.entity === b.entity && a.at === b.at && a.seen_at === b.seen_at;

/** See the module comment. */
export class HistoryMemo implements HistoryView {
  /** By kind, then entity: no joined key string per question. */
  private spans = new Map<string, Map<string, Spans>>();
  private synced = false;
  private syncs = 0;
  /** The newest row seen at the last sync (the marker a rollback would change). */
  private lastRow: HistoryRowKey | undefined;
  private oldestAt: number | null = null;

  constructor(
    private readonly readings: Pick<ReadingsRepo, 'historyAt' | 'historyRange'>,
    private readonly changes: HistoryChanges,
  ) {}

  /** Brings the memo up to date with what history holds now. */
  sync(): void {
    this.syncs++;
    if (this.syncs % FORGET_AFTER_SYNCS === 0) this.forgetUnused();
    const oldest = this.changes.oldestAt();
    const marker = this.lastRow;
    const intact = this.synced && (marker === undefined || sameRow(marker, this.changes.row(marker.id)));
    // Rows deleted: the oldest time rose, or history emptied.
    const pruned = this.oldestAt !== null && (oldest === null || oldest > this.oldestAt);
    if (!intact || pruned) {
      this.spans.clear();
      this.lastRow = this.changes.last();
      this.oldestAt = oldest;
      this.synced = true;
      return;
    }
    this.oldestAt = oldest;
    if (this.spans.size === 0) {
      this.lastRow = this.changes.last();
      return;
    }
    for (const [kind, ofKind] of this.spans) {
      // A row at or after the end of every span of its kind changes none: only the others are read.
      let end = -Infinity;
      for (const { list } of ofKind.values()) for (const s of list) if (s.hi > end) end = s.hi;
      for (const row of this.changes.since(marker?.id ?? 0, kind as ReadingKind, end)) {
        const spans = ofKind.get(row.entity);
        if (!spans) continue;
        // A row older than an answer does not change it; one at the answer's time (a new revision) or later within the span does.
        spans.list = spans.list.filter((s) => row.at < s.lo || row.at >= s.hi);
        if (spans.list.length === 0) ofKind.delete(row.entity);
      }
    }
    this.lastRow = this.changes.last();
  }

  private forgetUnused(): void {
    for (const ofKind of this.spans.values()) {
      for (const [entity, spans] of ofKind) if (this.syncs - spans.used >= FORGET_AFTER_SYNCS) ofKind.delete(entity);
    }
  }

  /** Forgets every answer (the next sync starts afresh). */
  clear(): void {
    this.spans.clear();
    this.synced = false;
  }

  at(kind: ReadingKind, entity: string, t: number): Reading | undefined {
    let ofKind = this.spans.get(kind);
    let spans = ofKind?.get(entity);
    if (spans) {
      spans.used = this.syncs;
      for (const s of spans.list) if (s.lo <= t && t < s.hi) return s.reading;
    }
    const reading = this.readings.historyAt(kind, entity, t);
    const span: Span = { lo: reading ? reading.at : -Infinity, hi: this.changes.nextAt(kind, entity, t) ?? Infinity, reading };
    if (!ofKind) this.spans.set(kind, (ofKind = new Map()));
    if (!spans) ofKind.set(entity, (spans = { list: [], used: this.syncs }));
    if (spans.list.length >= SPANS_PER_ENTITY) spans.list.shift();
    spans.list.push(span);
    return reading;
  }

  range(kind: ReadingKind, entity: string, from: number, to: number): Reading[] {
    return this.readings.historyRange(kind, entity, from, to);
  }
}
