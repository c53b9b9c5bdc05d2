/** Reads a row field by field: each field on its own, an unreadable one becomes unknown and a field rejection. */
import type { Rejection } from '../../model.js';
import { fingerprint, READ_UNREADABLE, READ_VALUE, ReadSlot, unreadableDetail, type LeanReader, type ReadCode } from './result.js';
import type { FormCounts } from './seen.js';

/** The rejection of `field` of `entity`, sent `raw`: `detail` says what was expected and what came. */
function rejectionOf(entity: string, field: string, reason: string, detail: string, raw: unknown): Rejection {
  return { reason, entity, field, detail: `${field}: ${detail}`, sent: fingerprint(raw) };
}

/** No rejections: shared by every row that has none (a row that gets one gets its own array). */
const NONE: readonly Rejection[] = Object.freeze([]);

/**
 * Reads rows field by field, for every poll kind (a markets poll reads 240,000 fields, a positions poll 700,000): one
 * per poll, reading row after row with lean readers into one {@link ReadSlot}, so a field read allocates nothing; an
 * unreadable field becomes unknown and a field rejection, and the forms seen are counted in the poll's
 * {@link FormCounts} once the row is kept (a duplicate row's, or one left out, are not).
 */
export class RowReader {
  /** The slot the lean readers write into (for {@link took}: `fr.took(field, raw, leanAmount(raw, fr.slot, d))`). */
  readonly slot = new ReadSlot();
  /** Field rejections of the current row. */
  rejected: readonly Rejection[] = NONE;
  private entity = '';
  /** The current row's forms seen: field, form, … (`kept` up to `pending`). */
  private readonly forms: string[] = [];
  private pending = 0;

  constructor(private readonly counts: FormCounts) {}

  /** Starts a row of `entity` ('' when the row names it only once read: see {@link rejectedAs}). */
  start(entity: string): void {
    this.entity = entity;
    this.rejected = NONE;
    this.pending = 0;
  }

  /** Reads `raw` as `field` with `reader`; null when absent or unreadable (the latter recorded). */
  read(field: string, raw: unknown, reader: LeanReader): unknown {
    return this.took(field, raw, reader(raw, this.slot));
  }

  /** What a lean reader said of `raw` (read into {@link slot}) as `field`: the value, or null (unreadable ones recorded). */
  took(field: string, raw: unknown, code: ReadCode): unknown {
    const slot = this.slot;
    if (code === READ_VALUE) {
      this.forms[this.pending++] = field;
      this.forms[this.pending++] = slot.form;
      return slot.value;
    }
    if (code === READ_UNREADABLE) {
      (this.rejected === NONE ? (this.rejected = []) : (this.rejected as Rejection[])).push(rejectionOf(this.entity, field, slot.reason, unreadableDetail(slot.expected, raw), raw));
    }
    return null;
  }

  /** The current row's rejections, of `entity` (a row read before it knew its entity). */
  rejectedAs(entity: string): Rejection[] {
    return this.rejected.map((r) => ({ ...r, entity }));
  }

  /** Counts the current row's forms seen in the poll's. */
  keep(): void {
    for (let i = 0; i < this.pending; i += 2) this.counts.add(this.forms[i]!, this.forms[i + 1]!);
    this.pending = 0;
  }
}

/** `{ unreadable }` for a reading whose fields had rejections (field → reason), else nothing. */
export function unreadableOf(rejected: readonly Rejection[]): { unreadable?: Record<string, string> } {
  const fields = rejected.filter((r) => r.field !== undefined);
  return fields.length ? { unreadable: Object.fromEntries(fields.map((r) => [r.field as string, r.reason])) } : {};
}

/** True for a plain object. */
export const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);
