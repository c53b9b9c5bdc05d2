/**
 * The replay's bookkeeping of which entities a poll returned, without a map entry per reading (issue 14, B12).
 *
 * Each entity (kind and name) gets one {@link Slot}, made the first time the replay meets it; a poll run's readings
 * become a {@link Batch}: one reading per entity, in order. Building a batch, carrying a poll's last batch forward and
 * recording who returned an entity last then mark slots (an integer stamp a pass) instead of setting and reading map
 * entries keyed by a string per reading: the one lookup left per reading is its slot's.
 *
 * The answers are those of the maps they replace (test/backtest-batch.test.ts holds them to a replay by maps):
 * a batch is `new Map(readings.map((r) => [key(r), r]))`'s values (an entity read twice: its last reading at its first
 * one's place), a merge is `new Map([...carried less vanished, ...fresh])`'s.
 */
import type { Reading, ReadingKind } from '../model.js';

/** One entity met in the replay, and the scratch marks of the passes over batches. */
export interface Slot {
  readonly kind: ReadingKind;
  readonly entity: string;
  /** The poll that returned it last (undefined: none yet). */
  seenBy: string | undefined;
  /** Scratch: the stamp of the pass that last met it, its place in that pass's batch, the stamp of a pass that dropped it. */
  mark: number;
  at: number;
  gone: number;
}

/** A poll's readings, one per entity, and their slots at the same places. Neither array is changed once made (read-only to the engine too: PollOutcome.readings). */
export interface Batch {
  readonly readings: readonly Reading[];
  readonly slots: readonly Slot[];
}

/** The slots of one replay, and the passes over its batches. */
export class Slots {
  private readonly byKind = new Map<string, Map<string, Slot>>();
  private lastKind: string | undefined;
  private lastOfKind: Map<string, Slot> | undefined;
  private stamp = 0;
  /** Slots in the order a poll first returned them (as a map of who saw them last would hold them). */
  private readonly seen: Slot[] = [];

  /** The entity's slot, made on first use. */
  of(kind: ReadingKind, entity: string): Slot {
    // A replay reads one kind after another: the kind's map is looked up when the kind changes.
    let byEntity = this.lastOfKind;
    if (kind !== this.lastKind || !byEntity) {
      byEntity = this.byKind.get(kind);
      if (!byEntity) this.byKind.set(kind, (byEntity = new Map()));
      this.lastKind = kind;
      this.lastOfKind = byEntity;
    }
    let s = byEntity.get(entity);
    if (s === undefined) byEntity.set(entity, (s = { kind, entity, seenBy: undefined, mark: 0, at: 0, gone: 0 }));
    return s;
  }

  /** `readings` as a batch: an entity read twice keeps its last reading at its first one's place. `readings` is not changed (and is the batch's own when no entity repeats). */
  batchOf(readings: readonly Reading[]): Batch {
    const stamp = ++this.stamp;
    const slots: Slot[] = [];
    let repeated = false;
    for (const r of readings) {
      const s = this.of(r.kind, r.entity);
      if (s.mark === stamp) {
        repeated = true;
        continue;
      }
      s.mark = stamp;
      s.at = slots.length;
      slots.push(s);
    }
    if (!repeated) return { readings, slots };
    const out = new Array<Reading>(slots.length);
    for (const r of readings) out[this.of(r.kind, r.entity).at] = r;
    return { readings: out, slots };
  }

  /**
   * `carried` less the entities of `vanished`, each entity of `fresh` taking its reading's place there or, when not
   * there, joining at the end in `fresh`'s order.
   */
  merge(carried: Batch | undefined, vanished: readonly Slot[], fresh: Batch): Batch {
    const gone = ++this.stamp;
    for (const s of vanished) s.gone = gone;
    const mark = ++this.stamp;
    for (let i = 0; i < fresh.slots.length; i++) {
      const s = fresh.slots[i]!;
      s.mark = mark;
      s.at = i;
    }
    const readings: Reading[] = [];
    const slots: Slot[] = [];
    if (carried) {
      for (let j = 0; j < carried.slots.length; j++) {
        const s = carried.slots[j]!;
        if (s.gone === gone) continue;
        if (s.mark === mark) {
          readings.push(fresh.readings[s.at]!);
          s.mark = 0; // placed: not again at the end
        } else readings.push(carried.readings[j]!);
        slots.push(s);
      }
    }
    for (let i = 0; i < fresh.slots.length; i++) {
      const s = fresh.slots[i]!;
      if (s.mark !== mark) continue;
      readings.push(fresh.readings[i]!);
      slots.push(s);
    }
    return { readings, slots };
  }

  /** Records that `poll` returned the batch's entities last. */
  see(poll: string, batch: Batch): void {
    for (const s of batch.slots) {
      if (s.seenBy === poll) continue;
      if (s.seenBy === undefined) this.seen.push(s);
      s.seenBy = poll;
    }
  }

  /** The entities `poll` returned last, in the order a poll first returned them. */
  lastSeenBy(poll: string): Array<{ poll: string; kind: ReadingKind; entity: string }> {
    const out: Array<{ poll: string; kind: ReadingKind; entity: string }> = [];
    for (const s of this.seen) if (s.seenBy === poll) out.push({ poll, kind: s.kind, entity: s.entity });
    return out;
  }
}
