/** Shared helpers of the simulator tests: requests with or without the key, page walks, value normalizing. */
import type { Simulator } from '../src/simulator/index.js';

/** A test's answer: status, headers, parsed JSON (undefined when the body is not JSON) and raw text. */
export interface Answer {
  status: number;
  headers: Headers;
  json: any;
  text: string;
}

/** GET or POST against the simulator; `key` false sends no x-api-key, a string sends that key. */
export async function call(url: string, init: { method?: string; key?: string | false; body?: unknown; headerName?: string } = {}): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (init.key !== false) headers[init.headerName ?? 'x-api-key'] = init.key ?? 'sim-key';
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, {
    method: init.method ?? (init.body !== undefined ? 'POST' : 'GET'),
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, json, text };
}

/** POSTs a GraphQL query to `path` (default /yields/graphql). */
export function gql(sim: Simulator, query: string, variables?: Record<string, unknown>, path = '/yields/graphql'): Promise<Answer> {
  return call(sim.url + path, { body: variables ? { query, variables } : { query } });
}

/** Walks a cursor-paged list to its end; returns the rows and the number of pages. */
export async function walk(sim: Simulator, path: string, params: Record<string, string> = {}, maxPages = 1000): Promise<{ rows: any[]; pages: number }> {
  const rows: any[] = [];
  let cursor: string | undefined;
  for (let pages = 1; pages <= maxPages; pages++) {
    const q = new URLSearchParams({ ...params, ...(cursor ? { next_cursor: cursor } : {}) });
    const a = await call(`${sim.url}${path}?${q}`);
    if (a.status !== 200) throw new Error(`${path} page ${pages}: ${a.status} ${a.text}`);
    rows.push(...a.json.data);
    if (!a.json.page_info.has_more) return { rows, pages };
    cursor = a.json.page_info.next_cursor;
  }
  throw new Error('too many pages');
}

const TIME_FIELDS = new Set(['created_at', 'oracle_last_update', 'timestamp']);

/** A value as a liberal client would read it: numeric strings → numbers, times → Unix seconds. */
export function normalize(v: unknown, field = ''): unknown {
  if (TIME_FIELDS.has(field)) {
    if (typeof v === 'string' && !/^\d+$/.test(v)) return Date.parse(v) / 1000;
    const n = Number(v);
    return n > 1e11 ? n / 1000 : n;
  }
  if (typeof v === 'string' && /^-?\d+(\.\d+)?(e[-+]?\d+)?$/i.test(v) && !/^\d{16,}$/.test(v)) return Number(v);
  if (Array.isArray(v)) return v.map((x) => normalize(x, field));
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, normalize(x, k)]));
  return v;
}
