/**
 * Rows of the positions, assets and holdings lists → readings. Known fields are normalized (numbers,
 * exact amounts, booleans, times); the service's other fields are kept as they came. Each row's entity
 * is its `id` when the service sends one, else the identifying fields that are present, joined by `/`.
 */
import { z } from 'zod';
import type { Reading, Rejection } from '../../model.js';
import { bigIntString, bool, describeIssue, int, normalizeExtra, num, str, time } from '../values.js';

/** The list kinds this module reads. */
export type ListKind = 'position' | 'asset' | 'holding';

const common = {
  id: str,
  wallet: str,
  wallet_address: str,
  chain: str,
  protocol: str,
  asset: str,
  symbol: str,
  value_usd: num,
  timestamp: time,
  updated_at: time,
  created_at: time,
};

const schemas = {
  position: z.looseObject({ ...common, nav_usd: num, pnl_usd: num, verified: bool }),
  asset: z.looseObject({ ...common, position_id: str, type: str, token_address: str, balance: bigIntString, decimals: int, price_usd: num }),
  holding: z.looseObject({ ...common, token_address: str, balance: bigIntString, decimals: int, price_usd: num }),
};

/** The fields each kind normalizes itself; the rest are extras. */
const known = Object.fromEntries(Object.entries(schemas).map(([k, s]) => [k, new Set(Object.keys(s.shape))])) as Record<ListKind, Set<string>>;

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

function labelsOf(kind: ListKind, r: Row, wallet: string | null, asset: string | null): Record<string, string> {
  const all: Record<string, string | null | undefined> = { chain: r.chain, protocol: r.protocol, asset, wallet };
  if (kind === 'position') {
    if (r.id) all.position_id = r.id;
    all.verified = r.verified === null || r.verified === undefined ? null : String(r.verified);
  }
  if (kind === 'asset') {
    all.position_id = r.position_id;
    all.type = r.type;
  }
  return Object.fromEntries(Object.entries(all).filter((e): e is [string, string] => typeof e[1] === 'string' && e[1] !== ''));
}

/** Validates list rows into readings; a bad row, a row with nothing to identify it, or a second row of the same entity is rejected. */
export function listReadings(kind: ListKind, rows: readonly unknown[], pollTime: number): { readings: Reading[]; rejected: Rejection[] } {
  const readings: Reading[] = [];
  const rejected: Rejection[] = [];
  const seen = new Set<string>();
  const schema = schemas[kind];
  for (const raw of rows) {
    const parsed = schema.safeParse(raw);
    if (!parsed.success) {
      rejected.push({ reason: 'invalid_field', entity: rawEntity(kind, raw), detail: `${kind}: ${describeIssue(parsed.error)}` });
      continue;
    }
    const r = parsed.data as Row;
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
    const { wallet_address: _wa, symbol: _sym, timestamp, updated_at, created_at, ...rest } = r;
    const fields: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(rest)) fields[k] = known[kind].has(k) ? v : normalizeExtra(v);
    fields.wallet = wallet;
    fields.asset = asset;
    if (kind !== 'position' && r.symbol !== null) fields.symbol = r.symbol;
    for (const [k, v] of Object.entries({ timestamp, updated_at, created_at })) if (v !== null) fields[k] = v;
    readings.push({ kind, entity, at: timestamp ?? updated_at ?? created_at ?? pollTime, labels: labelsOf(kind, r, wallet, asset), fields });
  }
  return { readings, rejected };
}

/** Best-effort entity of a row that failed validation, so the rejection names it (and its alerts are left alone). */
function rawEntity(kind: ListKind, raw: unknown): string | undefined {
  if (!raw || typeof raw !== 'object') return undefined;
  const r = raw as Record<string, unknown>;
  const s = (v: unknown) => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : null);
  const row = {
    id: s(r.id),
    chain: s(r.chain),
    protocol: s(r.protocol),
    position_id: s(r.position_id),
    type: s(r.type),
    token_address: s(r.token_address),
  } as Row;
  const key = entityOf(kind, row, s(r.wallet) ?? s(r.wallet_address), s(r.asset) ?? s(r.symbol));
  return key || undefined;
}
