/**
 * Rows of the positions, assets and holdings lists → readings. Known fields are read one by one (numbers,
 * exact amounts, booleans, times; an unreadable one is unknown and a field rejection); the service's other
 * fields are kept as they came. Each row's entity
 * is its `id` when the service sends one, else the identifying fields that are present, joined by `/`.
 */
import type { Reading, Rejection } from '../../model.js';
import { normalizeExtra } from '../values.js';
import { readAmount } from '../read/amounts.js';
import { readBoolean } from '../read/booleans.js';
import { FieldReader, isObject, unreadableOf } from '../read/fields.js';
import { readInteger, readNumber, readString } from '../read/numbers.js';
import type { FieldRead } from '../read/result.js';
import { mergeSeen, type SeenForms } from '../read/seen.js';
import { readTime } from '../read/times.js';
import { ROWS_PER_STEP, runSync, type Steps } from '../../yielding.js';
import { setOwn } from '../../own.js';

/** The list kinds this module reads. */
export type ListKind = 'position' | 'asset' | 'holding';

type Reader = (v: unknown) => FieldRead<unknown>;

type Row = Record<string, unknown> & {
  id: string | null;
  wallet: string | null;
  wallet_address: string | null;
  chain: string | null;
  protocol: string | null;
  asset: string | null;
  symbol: string | null;
  timestamp: number | null;
  updated_at: number | null;
  created_at: number | null;
  position_id?: string | null;
  type?: string | null;
  token_address?: string | null;
  verified?: boolean | null;
};
const common: Record<string, Reader> = {
  id: readString,
  wallet: readString,
  wallet_address: readString,
  chain: readString,
  protocol: readString,
  asset: readString,
  symbol: readString,
  value_usd: readNumber,
  timestamp: readTime,
  updated_at: readTime,
  created_at: readTime,
};

/** The fields each kind reads itself (`balance` is read with the row's decimals); the rest are extras. */
const readers: Record<ListKind, Record<string, Reader>> = {
  position: { ...common, nav_usd: readNumber, pnl_usd: readNumber, verified: readBoolean },
  asset: { ...common, position_id: readString, type: readString, token_address: readString, decimals: readInteger, price_usd: readNumber },
  holding: { ...common, token_address: readString, decimals: readInteger, price_usd: readNumber },
};

/** {@link readers} as lists, made once: a positions poll reads 50,000 rows. */
const readerLists = Object.fromEntries(Object.entries(readers).map(([kind, r]) => [kind, Object.entries(r)])) as Record<ListKind, Array<[string, Reader]>>;

/** Reads one row's known fields on its own; unreadable ones are null and field rejections. */
function readRow(kind: ListKind, raw: Record<string, unknown>, fr: FieldReader): Row {
  const out: Record<string, unknown> = {};
  const known = readers[kind];
  for (const k in raw) if (Object.hasOwn(raw, k) && !Object.hasOwn(known, k) && k !== 'balance') setOwn(out, k, normalizeExtra(raw[k]));
  for (const [k, reader] of readerLists[kind]) out[k] = fr.read(k, reader);
  if (kind !== 'position') out.balance = fr.read('balance', (v) => readAmount(v, out.decimals as number | null));
  return out as Row;
}

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

/** The row's labels: chain, protocol, asset, wallet (and the kind's own), each only when it is a non-empty string. */
function labelsOf(kind: ListKind, r: Row, wallet: string | null, asset: string | null): Record<string, string> {
  const out: Record<string, string> = {};
  const put = (k: string, v: unknown) => {
    if (typeof v === 'string' && v !== '') out[k] = v;
  };
  put('chain', r.chain);
  put('protocol', r.protocol);
  put('asset', asset);
  put('wallet', wallet);
  if (kind === 'position') {
    if (r.id) put('position_id', r.id);
    if (r.verified !== null && r.verified !== undefined) put('verified', String(r.verified));
  }
  if (kind === 'asset') {
    put('position_id', r.position_id);
    put('type', r.type);
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
  const forms: SeenForms = {};
  function* add(rows: readonly unknown[]): Steps<void> {
    let n = 0;
    for (const raw of rows) {
      if (++n % ROWS_PER_STEP === 0) yield;
      if (!isObject(raw)) {
        rejected.push({ reason: 'missing_id', detail: `${kind} row that is not an object` });
        continue;
      }
      const fr = new FieldReader(raw, '');
      const r = readRow(kind, raw, fr);
      const wallet = r.wallet ?? r.wallet_address;
      const asset = r.asset ?? r.symbol;
      const entity = entityOf(kind, r, wallet, asset);
      if (!entity) {
        rejected.push({ reason: 'missing_id', detail: `${kind} row with no id, wallet, chain, protocol or asset` });
        continue;
      }
      if (seen.has(entity)) {
        rejected.push({ reason: 'duplicate', entity, detail: `${kind} ${entity} appears more than once in one poll; the first row is kept` });
        continue;
      }
      seen.add(entity);
      for (const f of fr.rejected) rejected.push({ ...f, entity });
      mergeSeen(forms, fr.seen);
      const { wallet_address: _wa, symbol: _sym, timestamp, updated_at, created_at, ...rest } = r;
      const fields: Record<string, unknown> = rest;
      fields.wallet = wallet;
      fields.asset = asset;
      if (kind !== 'position' && r.symbol !== null) fields.symbol = r.symbol;
      if (timestamp !== null) fields.timestamp = timestamp;
      if (updated_at !== null) fields.updated_at = updated_at;
      if (created_at !== null) fields.created_at = created_at;
      readings.push({ kind, entity, at: timestamp ?? updated_at ?? created_at ?? pollTime, labels: labelsOf(kind, r, wallet, asset), fields, ...unreadableOf(fr.rejected) });
    }
  }
  return { add, result: () => ({ readings, rejected, seen: forms }) };
}
