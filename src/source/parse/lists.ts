/**
 * Rows of the positions, assets and holdings lists → readings. Known fields are read one by one (numbers,
 * exact amounts, booleans, times; an unreadable one is unknown and a field rejection); the service's other
 * fields are kept as they came. Each row's entity
 * is its `id` when the service sends one, else the identifying fields that are present, joined by `/`.
 */
import type { Reading, Rejection } from '../../model.js';
import { normalizeExtra } from '../values.js';
import { leanAmount } from '../read/amounts.js';
import { leanBoolean } from '../read/booleans.js';
import { RowReader, isObject, unreadableOf } from '../read/fields.js';
import { leanInteger, leanNumber, leanString } from '../read/numbers.js';
import type { LeanReader } from '../read/result.js';
import { FormCounts, type SeenForms } from '../read/seen.js';
import { leanTime } from '../read/times.js';
import { ROWS_PER_STEP, runSync, type Steps } from '../../yielding.js';
import { setOwn } from '../../own.js';

/** The list kinds this module reads. */
export type ListKind = 'position' | 'asset' | 'holding';

/** The fields of a row read so far (its extras, then the known fields; see {@link compileRowReader}). */
type Row = Record<string, unknown> & {
  id: string | null;
  wallet: string | null;
  chain: string | null;
  protocol: string | null;
  asset: string | null;
  position_id?: string | null;
  type?: string | null;
  token_address?: string | null;
  verified?: boolean | null;
};
const common: Record<string, LeanReader> = {
  id: leanString,
  wallet: leanString,
  wallet_address: leanString,
  chain: leanString,
  protocol: leanString,
  asset: leanString,
  symbol: leanString,
  value_usd: leanNumber,
  timestamp: leanTime,
  updated_at: leanTime,
  created_at: leanTime,
};

/** The fields each kind reads itself (`balance` is read with the row's decimals); the rest are extras. */
const readers: Record<ListKind, Record<string, LeanReader>> = {
  position: { ...common, nav_usd: leanNumber, pnl_usd: leanNumber, verified: leanBoolean },
  asset: { ...common, position_id: leanString, type: leanString, token_address: leanString, decimals: leanInteger, price_usd: leanNumber },
  holding: { ...common, token_address: leanString, decimals: leanInteger, price_usd: leanNumber },
};

/**
 * Read fields a reading does not keep where they were read: the alternative names of wallet and asset, and the
 * times, which a reading keeps last and only when known. Their place in {@link Held}.
 */
const HELD = ['wallet_address', 'symbol', 'timestamp', 'updated_at', 'created_at'] as const;
type Held = [wallet_address: string | null, symbol: string | null, timestamp: number | null, updated_at: number | null, created_at: number | null];

/** {@link readers} as lists (field, reader, and its place among the held or -1), which {@link compileRowReader} makes each kind's reader from. */
const readerLists = Object.fromEntries(
  Object.entries(readers).map(([kind, r]) => [kind, Object.entries(r).map(([k, reader]) => [k, reader, (HELD as readonly string[]).indexOf(k)] as const)]),
) as unknown as Record<ListKind, ReadonlyArray<readonly [string, LeanReader, number]>>;

/** Reads one row's fields into the fields of its reading (see {@link compileRowReader}). */
type RowRead = (raw: Record<string, unknown>, fr: RowReader, held: Held) => Row;

/**
 * Reads one row's fields on its own into the fields of its reading: extras as they came (normalized), then the known
 * fields in {@link readers} order, except the {@link HELD} ones, which go to `held`; unreadable ones are null and
 * field rejections. Made once per kind from {@link readers} as a function that names every known field (`raw.wallet`,
 * `out.wallet = …`) and tells extras by a `switch` on the field name: a loop over the names loaded and stored each by
 * a name that changed from one turn to the next, which V8 does as a generic lookup (~10 a row, 50,000 rows a positions
 * poll).
 */
function compileRowReader(kind: ListKind): RowRead {
  const list = readerLists[kind];
  const q = (k: string) => JSON.stringify(k);
  const known = Object.keys(readers[kind]).map((k) => `case ${q(k)}:`);
  let body = `const out = {};\nfor (const k in raw) {\n  switch (k) { ${known.join(' ')} case "balance": continue; }\n  if (hasOwn(raw, k)) setOwn(out, k, normalizeExtra(raw[k]));\n}\n`;
  list.forEach(([k, , at], i) => {
    body += `${at < 0 ? `out[${q(k)}]` : `held[${at}]`} = fr.read(${q(k)}, raw[${q(k)}], read${i});\n`;
  });
  if (kind !== 'position') body += 'out.balance = fr.took("balance", raw.balance, leanAmount(raw.balance, fr.slot, out.decimals));\n';
  const make = new Function('hasOwn', 'setOwn', 'normalizeExtra', 'leanAmount', ...list.map((_, i) => `read${i}`), `"use strict";\nreturn function readRow(raw, fr, held) {\n${body}return out;\n};`) as (
    ...args: unknown[]
  ) => RowRead;
  return make(Object.hasOwn, setOwn, normalizeExtra, leanAmount, ...list.map(([, reader]) => reader));
}

/** {@link compileRowReader} of each kind. */
const rowReaders = Object.fromEntries((Object.keys(readers) as ListKind[]).map((kind) => [kind, compileRowReader(kind)])) as Record<ListKind, RowRead>;

const joinPresent = (parts: readonly (string | null | undefined)[]) => parts.filter((p): p is string => !!p).join('/');

/** The entity key of a row: its id, else the identifying fields present (empty when none is). */
function entityOf(kind: ListKind, r: Row, wallet: string | null, asset: string | null): string {
  if (r.id) return r.id;
  if (kind === 'position') return joinPresent([wallet, r.chain, r.protocol, asset]);
  const token = r.token_address ?? asset;
  if (kind === 'asset') {
    return r.position_id ? joinPresent([r.position_id, token, r.type]) : joinPresent([wallet, r.chain, r.protocol, token, r.type]);
  }
  return joinPresent([wallet, r.chain, token]);
}

/** Puts a label when its value is a non-empty string. */
function put(out: Record<string, string>, k: string, v: unknown): void {
  if (typeof v === 'string' && v !== '') out[k] = v;
}

/** The row's labels: chain, protocol, asset, wallet (and the kind's own), each only when it is a non-empty string. */
function labelsOf(kind: ListKind, r: Row, wallet: string | null, asset: string | null): Record<string, string> {
  const out: Record<string, string> = {};
  put(out, 'chain', r.chain);
  put(out, 'protocol', r.protocol);
  put(out, 'asset', asset);
  put(out, 'wallet', wallet);
  if (kind === 'position') {
    if (r.id) put(out, 'position_id', r.id);
    if (r.verified !== null && r.verified !== undefined) put(out, 'verified', String(r.verified));
  }
  if (kind === 'asset') {
    put(out, 'position_id', r.position_id);
    put(out, 'type', r.type);
  }
  return out;
}

/** Reads list rows into readings: a row with nothing to identify it, or a second row of the same entity, is rejected; a bad field is unknown. */
export function listReadings(kind: ListKind, rows: readonly unknown[], pollTime: number): ListResult {
  return runSync(listReadingsSteps(kind, rows, pollTime));
}

type ListResult = { readings: Reading[]; rejected: Rejection[]; seen: SeenForms };

/** {@link listReadings} in steps that may pause between rows (a positions poll reads 50,000 of them). */
export function* listReadingsSteps(kind: ListKind, rows: readonly unknown[], pollTime: number): Steps<ListResult> {
  const reader = listReader(kind, pollTime);
  yield* reader.add(rows);
  return reader.result();
}

/**
 * {@link listReadings} a page at a time: `add` reads rows into the result (one entity across pages is still one
 * reading, its first row kept), `result` gives it. A poll that walks pages need not hold every raw row at once.
 */
export function listReader(kind: ListKind, pollTime: number): { add(rows: readonly unknown[]): Steps<void>; result(): ListResult } {
  const readings: Reading[] = [];
  const rejected: Rejection[] = [];
  const seen = new Set<string>();
  const forms = new FormCounts();
  const fr = new RowReader(forms);
  const held: Held = [null, null, null, null, null];
  const readRow = rowReaders[kind];
  function* add(rows: readonly unknown[]): Steps<void> {
    let n = 0;
    // By index: a generator's for...of makes an iterator result per row.
    for (let k = 0; k < rows.length; k++) {
      const raw = rows[k];
      if (++n % ROWS_PER_STEP === 0) yield;
      if (!isObject(raw)) {
        rejected.push({ reason: 'missing_id', detail: `${kind} row that is not an object` });
        continue;
      }
      fr.start('');
      const fields = readRow(raw, fr, held);
      const [walletAddress, symbol, timestamp, updatedAt, createdAt] = held;
      const wallet = fields.wallet ?? walletAddress;
      const asset = fields.asset ?? symbol;
      const entity = entityOf(kind, fields, wallet, asset);
      if (!entity) {
        rejected.push({ reason: 'missing_id', detail: `${kind} row with no id, wallet, chain, protocol or asset` });
        continue;
      }
      if (seen.has(entity)) {
        rejected.push({ reason: 'duplicate', entity, detail: `${kind} ${entity} appears more than once in one poll; the first row is kept` });
        continue;
      }
      seen.add(entity);
      if (fr.rejected.length > 0) for (const f of fr.rejectedAs(entity)) rejected.push(f);
      fr.keep();
      const labels = labelsOf(kind, fields, wallet, asset);
      fields.wallet = wallet;
      fields.asset = asset;
      if (kind !== 'position' && symbol !== null) fields.symbol = symbol;
      if (timestamp !== null) fields.timestamp = timestamp;
      if (updatedAt !== null) fields.updated_at = updatedAt;
      if (createdAt !== null) fields.created_at = createdAt;
      const reading: Reading = { kind, entity, at: timestamp ?? updatedAt ?? createdAt ?? pollTime, labels, fields };
      if (fr.rejected.length > 0) Object.assign(reading, unreadableOf(fr.rejected));
      readings.push(reading);
    }
  }
  return { add, result: () => ({ readings, rejected, seen: forms.toSeenForms() }) };
}
