/** The catalog routes on {catalog_url}: networks and historical benchmarks. */
import { BENCHMARK_CODES, DAY_SEC, type BenchmarkCode } from './benchmarks.js';
import { represent, type Encoding } from './encoding.js';
import { errorResponse, type SimResponse } from './responses.js';
import type { World } from './world.js';

/** What the catalog routes need. */
export interface CatalogContext {
  world: World;
  nowMs: number;
  encoding: Encoding;
  defaultPerPage: number;
}

const PREFIX = '/api/catalog/historical-benchmarks/';
const DAY_HINTS = { times: new Set(['timestamp']) };

function intParam(q: URLSearchParams, name: string, min: number, max: number, details: { field: string; message: string }[]): number | undefined {
  const v = q.get(name);
  if (v === null) return undefined;
  if (!/^-?\d+$/.test(v) || Number(v) < min || Number(v) > max) {
    details.push({ field: name, message: `${name} must be an integer${max === Infinity ? ` ≥ ${min}` : ` from ${min} to ${max}`}` });
    return undefined;
  }
  return Number(v);
}

function benchmarks(network: string, q: URLSearchParams, ctx: CatalogContext): SimResponse {
  const details: { field: string; message: string }[] = [];
  const code = q.get('code');
  if (code === null) details.push({ field: 'code', message: 'code is required (usd or eth)' });
  else if (!(BENCHMARK_CODES as readonly string[]).includes(code)) details.push({ field: 'code', message: 'code must be one of usd, eth' });
  const from = intParam(q, 'fromTimestamp', 0, Infinity, details);
  const to = intParam(q, 'toTimestamp', 0, Infinity, details);
  const page = intParam(q, 'page', 0, Infinity, details) ?? 0;
  const perPage = intParam(q, 'perPage', 1, 1000, details) ?? ctx.defaultPerPage;
  if (details.length) return errorResponse('catalog', 400, undefined, details);
  if (!ctx.world.hasNetwork(network)) return errorResponse('catalog', 400, undefined, [{ field: 'network', message: `unknown network "${network}"` }]);
  const { first, count, firstHistoryDay } = ctx.world.benchmarkDayStarts(network, ctx.nowMs, from, to ?? Math.floor(ctx.nowMs / 1000));
  const start = page * perPage;
  const end = Math.min(count, start + perPage);
  const data = [];
  for (let k = start; k < end; k++) {
    const day = ctx.world.benchmarkDay(network, code as BenchmarkCode, first + k * DAY_SEC, firstHistoryDay, ctx.nowMs);
    data.push(represent(day, ctx.encoding, `${network}/${code}/${day.timestamp}`, DAY_HINTS));
  }
  const body: Record<string, unknown> = { itemsOnPage: data.length };
  if (end < count) body.nextPage = page + 1;
  body.data = data;
  return { status: 200, body };
}

/** Answers a request on {catalog_url} (auth already checked); null when no route matches. */
export function routeCatalog(method: string, path: string, q: URLSearchParams, ctx: CatalogContext): SimResponse | null {
  if (path === '/api/catalog/networks') {
    if (method !== 'GET') return errorResponse('catalog', 405);
    return { status: 200, body: ctx.world.networks.map((n) => ({ name: n.name, chainId: n.chainId, networkCaip: n.networkCaip })) };
  }
  if (path.startsWith(PREFIX) && path.length > PREFIX.length && !path.slice(PREFIX.length).includes('/')) {
    if (method !== 'GET') return errorResponse('catalog', 405);
    let network: string;
    try {
      network = decodeURIComponent(path.slice(PREFIX.length));
    } catch {
      return errorResponse('catalog', 400, undefined, [{ field: 'network', message: 'network is not valid URL encoding' }]);
    }
    return benchmarks(network, q, ctx);
  }
  return null;
}
