/** Cursor paging over virtual row lists, without copying the list per request. */

/** A read-only list of rows ordered by a strictly increasing numeric key (the cursor). */
export interface RowSource<T> {
  length: number;
  key(j: number): number;
  row(j: number): T;
}

/** One page of a {@link RowSource}. */
export interface Page<T> {
  rows: T[];
  /** The cursor key of each row. */
  keys: number[];
  hasMore: boolean;
  /** The key of the last row, as the cursor string for the next page; absent on the last page. */
  nextCursor?: string;
}

/** The first position whose key is greater than `after` (binary search). */
export function firstAfter(src: { length: number; key(j: number): number }, after: number): number {
  let lo = 0;
  let hi = src.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (src.key(mid) > after) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** The page of up to `limit` rows after cursor `after` (null: from the start). */
export function pageOf<T>(src: RowSource<T>, after: number | null, limit: number): Page<T> {
  const start = after === null ? 0 : firstAfter(src, after);
  const end = Math.min(src.length, start + limit);
  const rows: T[] = [];
  const keys: number[] = [];
  for (let j = start; j < end; j++) {
    rows.push(src.row(j));
    keys.push(src.key(j));
  }
  const hasMore = end < src.length;
  return hasMore ? { rows, keys, hasMore, nextCursor: String(src.key(end - 1)) } : { rows, keys, hasMore };
}

/** A view of `base` through a list of indices into it (a filter), followed by `extra` rows. */
export function indexedSource<T>(
  indices: Int32Array | null,
  baseLength: number,
  baseKey: (i: number) => number,
  baseRow: (i: number) => T,
  extra: readonly { key: number; row: () => T }[] = [],
): RowSource<T> {
  const n = indices ? indices.length : baseLength;
  const at = (j: number) => (indices ? (indices[j] as number) : j);
  return {
    length: n + extra.length,
    key: (j) => (j < n ? baseKey(at(j)) : (extra[j - n] as { key: number }).key),
    row: (j) => (j < n ? baseRow(at(j)) : (extra[j - n] as { row: () => T }).row()),
  };
}
