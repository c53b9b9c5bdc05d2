/** Reads a row field by field: each field on its own, an unreadable one becomes unknown and a field rejection. */
import type { Rejection } from '../../model.js';
import { fingerprint, type FieldRead } from './result.js';

/** Collects field rejections and the representation each field was seen in, for one row. */
export class FieldReader {
  /** Field rejections of this row. */
  readonly rejected: Rejection[] = [];
  /**
   * How each read field was sent, as pairs: field, representation, field, … (`oracle_price`, `scaled integer`). Pairs in
   * an array, not an object keyed by field: a markets poll reads 240,000 fields, and an object per row with dotted
   * keys, walked again by {@link mergeSeen}, was a fifth of the parse.
   */
  readonly seen: string[] = [];

  constructor(
    private readonly row: Record<string, unknown>,
    private readonly entity: string,
    private readonly prefix = '',
  ) {}

  /** Reads `key` with `reader`; null when absent or unreadable (the latter recorded). */
  read<T>(key: string, reader: (v: unknown) => FieldRead<T>, raw: unknown = this.row[key]): T | null {
    const r = reader(raw);
    const field = this.prefix + key;
    if (!r.ok) {
      this.rejected.push({ reason: r.reason, entity: this.entity, field, detail: `${field}: ${r.detail}`, sent: fingerprint(raw) });
      return null;
    }
    if (r.value !== null) this.seen.push(field, r.seen);
    return r.value;
  }
}

/** `{ unreadable }` for a reading whose fields had rejections (field → reason), else nothing. */
export function unreadableOf(rejected: readonly Rejection[]): { unreadable?: Record<string, string> } {
  const fields = rejected.filter((r) => r.field !== undefined);
  return fields.length ? { unreadable: Object.fromEntries(fields.map((r) => [r.field as string, r.reason])) } : {};
}

/** True for a plain object. */
export const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);
