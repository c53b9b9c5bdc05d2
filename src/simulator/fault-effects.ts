/** What a fault does to a successful response body: schema drift, a broken row, a repeating cursor. */
import type { FaultSpec } from './faults.js';

type Row = Record<string, unknown>;

/** The row array of a body: a top-level array, `data` as an array, or the first array under `data`. */
export function rowsOf(body: unknown): Row[] | null {
  if (Array.isArray(body)) return body as Row[];
  if (body === null || typeof body !== 'object') return null;
  const data = (body as { data?: unknown }).data;
  if (Array.isArray(data)) return data as Row[];
  if (data !== null && typeof data === 'object') {
    for (const v of Object.values(data)) if (Array.isArray(v)) return v as Row[];
  }
  return null;
}

const camel = (k: string) => k.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
const snake = (k: string) => k.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase());
const numeric = (v: unknown) => typeof v === 'number' || (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) && !/^0x/i.test(v));

function drift(rows: Row[], kind: NonNullable<FaultSpec['drift']>): void {
  for (const row of rows) {
    if (row === null || typeof row !== 'object') continue;
    for (const k of Object.keys(row)) {
      const v = row[k];
      if (kind === 'rename_field') {
        const nk = k.includes('_') ? camel(k) : /[A-Z]/.test(k) ? snake(k) : k + '_v2';
        delete row[k];
        row[nk] = v;
      } else if (kind === 'wrong_type') {
        if (numeric(v)) row[k] = { value: v };
        else if (typeof v === 'boolean') row[k] = v ? 'yes' : 'no';
      }
    }
    if (kind === 'extra_fields') {
      row.schema_version = 2;
      row.extra_field = { note: 'unannounced field' };
    }
  }
}

const BAD_VALUE_FIELDS = ['value_usd', 'utilization', 'borrow_apy', 'balance', 'chainId', 'apy'];
const ID_FIELDS = ['id', 'market_id', 'position_id', 'wallet', 'timestamp', 'name'];

function breakRow(rows: Row[], how: 'bad_value' | 'missing_id'): void {
  const row = rows[Math.min(1, rows.length - 1)];
  if (!row || typeof row !== 'object') return;
  if (how === 'missing_id') {
    const k = ID_FIELDS.find((f) => f in row);
    if (k) delete row[k];
  } else {
    const k = BAD_VALUE_FIELDS.find((f) => f in row) ?? Object.keys(row)[0];
    if (k) row[k] = 'abc';
  }
}

/** Applies a fault's body effects in place; `requestCursor` is the cursor or page the request carried. */
export function applyBodyFaults(body: unknown, spec: FaultSpec, requestCursor: string | null): void {
  const rows = rowsOf(body);
  if (rows && spec.badRow) breakRow(rows, spec.badRow === true ? 'bad_value' : spec.badRow);
  if (rows && spec.drift) drift(rows, spec.drift);
  if (spec.drift === 'extra_fields' && body !== null && typeof body === 'object' && !Array.isArray(body)) {
    (body as Row)._meta = { api_version: '1.1', notice: 'fields added' };
  }
  if (spec.repeatCursor && body !== null && typeof body === 'object' && !Array.isArray(body)) {
    const b = body as Row;
    const pageInfo = b.page_info as Row | undefined;
    if (pageInfo && typeof pageInfo === 'object') {
      pageInfo.has_more = true;
      pageInfo.next_cursor = requestCursor ?? pageInfo.next_cursor ?? '0';
    } else if ('itemsOnPage' in b) {
      b.nextPage = requestCursor === null ? 0 : Number(requestCursor);
    }
  }
}
