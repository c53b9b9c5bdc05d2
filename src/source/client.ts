/**
 * The data-service client: one method per endpoint of the interface, over {@link HttpClient}.
 * Methods return raw rows (lists walked to their end); the poll kinds normalize them into readings.
 */
import type { Dispatcher } from 'undici';
import type { z } from 'zod';
import type { sourceSchema } from '../config/schema.js';
import type { Logger } from '../log.js';
import { DataServiceError, SOURCE_CODES } from './errors.js';
import { METRICS_QUERY } from './graphql.js';
import { HttpClient, type Sleep } from './http.js';
import { walkCursorPages, walkNumberedPages, type PageWalk } from './pages.js';

/** The `source:` config section, as validated (durations in ms). */
export type SourceConfig = z.output<typeof sourceSchema>;

/** Paths of the endpoints, relative to base_url / catalog_url (whose own path, if any, is a prefix). */
export const ENDPOINTS = {
  positions: '/api/v1/positions',
  assets: '/assets',
  holdings: '/holdings',
  performance: '/performance',
  networks: '/api/catalog/networks',
  benchmarks: '/api/catalog/historical-benchmarks/',
} as const;

/** Most rows the service returns per list page (interface §8). */
export const MAX_LIST_LIMIT = 500;

/** Per-call options. */
export interface CallOptions {
  /** Aborts the call, including any wait between retries. */
  signal?: AbortSignal;
}

/** Options of a list walk: with `onPage`, each page's rows go to it (awaited) instead of into the walk's `rows`. */
export interface ListCallOptions extends CallOptions {
  onPage?: (rows: unknown[]) => void | Promise<void>;
}

/** Query of a positions/assets/holdings list. Unknown extra parameters are passed through. */
export interface ListQuery {
  chain?: string;
  wallet?: string;
  snapshot_mode?: 'all' | 'daily_only' | 'interaction_only' | 'harmonized_only';
  /** Rows per page, at most {@link MAX_LIST_LIMIT}. */
  limit?: number;
  [param: string]: string | number | undefined;
}

/** Arguments of the GraphQL `metrics` query. */
export interface MetricsQuery {
  limit: number;
  /** created_at _gt, a date YYYY-MM-DD. */
  createdAfter?: string;
  /** created_at _lt, a date YYYY-MM-DD. */
  createdBefore?: string;
  /** market_id _eq. */
  marketId?: string;
}

/** Arguments of one historical-benchmarks walk. */
export interface BenchmarkQuery {
  network: string;
  code: string;
  /** Unix seconds, inclusive. */
  fromTimestamp?: number;
  /** Unix seconds, inclusive. */
  toTimestamp?: number;
  /** 1..1000. */
  perPage?: number;
}

/** A network of the catalog. */
export interface NetworkRecord {
  name: string;
  chainId: number | null;
  networkCaip: string | null;
}

/** Every endpoint of the data service. */
export interface DataServiceClient {
  /** GET /api/v1/positions, all pages. */
  positions(query: ListQuery, opts?: ListCallOptions): Promise<PageWalk>;
  /** GET /assets, all pages. */
  assets(query: ListQuery, opts?: ListCallOptions): Promise<PageWalk>;
  /** GET /holdings, all pages. */
  holdings(query: ListQuery, opts?: ListCallOptions): Promise<PageWalk>;
  /** GET /performance: the body as the service sent it (null on 404). */
  performance(params: Record<string, string | number>, opts?: CallOptions): Promise<unknown>;
  /** POST {query, variables} to graphql_path: the `metrics` rows. GraphQL `errors` reject with E_SOURCE_GRAPHQL. */
  metrics(query: MetricsQuery, opts?: CallOptions): Promise<unknown[]>;
  /** GET /api/catalog/networks. */
  networks(opts?: CallOptions): Promise<NetworkRecord[]>;
  /** GET /api/catalog/historical-benchmarks/{network}, all pages: the day records, oldest first. */
  benchmarks(query: BenchmarkQuery, opts?: CallOptions): Promise<PageWalk>;
  /** Closes the connection pools. */
  close(): Promise<void>;
}

/** Options of {@link createDataServiceClient}; all for tests and embedding. */
export interface ClientOptions {
  /** Send every request through this dispatcher (e.g. an Agent shared by the process); the client won't close it. */
  dispatcher?: Dispatcher;
  log?: Logger;
  /** Replaces the wait between retries. */
  sleep?: Sleep;
  /** Jitter source in [0, 1). */
  random?: () => number;
  /** Wall clock (ms) for Retry-After given as an HTTP date. */
  now?: () => number;
  /** At `max_pages`, stop and keep what was read instead of failing (`lookout probe`). */
  stopAtPageCap?: boolean;
}

/** Joins a configured URL (which may carry a path prefix) with an endpoint path and query. */
function urlOf(base: string, path: string, query: Record<string, string | number | undefined> = {}): URL {
  const root = new URL(base);
  const url = new URL(root.pathname.replace(/\/+$/, '') + path, root.origin);
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') url.searchParams.set(k, String(v));
  return url;
}

function schemaError(endpoint: string, message: string): DataServiceError {
  return new DataServiceError(SOURCE_CODES.schema, `${endpoint}: ${message}`, { endpoint, reason: 'schema' });
}

/** Creates a client for the `source:` config section. */
export function createDataServiceClient(cfg: SourceConfig, opts: ClientOptions = {}): DataServiceClient {
  const http = new HttpClient({
    apiKey: cfg.api_key,
    timeout: cfg.timeout,
    retries: cfg.retries,
    backoff: cfg.backoff,
    maxBackoff: cfg.max_backoff,
    concurrency: cfg.concurrency,
    dispatcher: opts.dispatcher,
    sleep: opts.sleep,
    random: opts.random,
    now: opts.now,
    log: opts.log,
  });
  const base = cfg.base_url;
  const catalog = cfg.catalog_url ?? cfg.base_url;

  const list = (path: string) => (query: ListQuery, o: ListCallOptions = {}) => {
    const limit = Math.min(MAX_LIST_LIMIT, Math.max(1, Math.floor(query.limit ?? MAX_LIST_LIMIT)));
    const params = { ...query, limit };
    return walkCursorPages(http, `GET ${urlOf(base, path).pathname}`, (cursor) => urlOf(base, path, { ...params, next_cursor: cursor }), cfg.max_pages, o.signal, opts.stopAtPageCap ?? false, o.onPage);
  };

  return {
    positions: list(ENDPOINTS.positions),
    assets: list(ENDPOINTS.assets),
    holdings: list(ENDPOINTS.holdings),

    async performance(params, o = {}) {
      const res = await http.request({ method: 'GET', url: urlOf(base, ENDPOINTS.performance, params), signal: o.signal, accept: [404] });
      return res.status === 404 ? null : res.body;
    },

    async metrics(q, o = {}) {
      const where: Record<string, unknown> = {};
      const created: Record<string, string> = {};
      if (q.createdAfter) created._gt = q.createdAfter;
      if (q.createdBefore) created._lt = q.createdBefore;
      if (Object.keys(created).length) where.created_at = created;
      if (q.marketId) where.market_id = { _eq: q.marketId };
      const url = urlOf(base, cfg.graphql_path);
      const endpoint = `POST ${url.pathname}`;
      const res = await http.request({ method: 'POST', url, body: { query: METRICS_QUERY, variables: { limit: q.limit, where } }, signal: o.signal });
      const body = res.body as { data?: { metrics?: unknown } | null; errors?: unknown } | null;
      if (body && Array.isArray(body.errors) && body.errors.length > 0) {
        const messages = body.errors.map((e) => String((e as { message?: unknown })?.message ?? JSON.stringify(e))).slice(0, 3);
        throw new DataServiceError(SOURCE_CODES.graphql, `${endpoint}: the query failed: ${messages.join('; ').slice(0, 300)}`, { endpoint, reason: 'graphql', status: res.status });
      }
      const rows = body?.data?.metrics;
      if (!Array.isArray(rows)) throw schemaError(endpoint, 'the response has no data.metrics array');
      return rows;
    },

    async networks(o = {}) {
      const url = urlOf(catalog, ENDPOINTS.networks);
      const res = await http.request({ method: 'GET', url, signal: o.signal });
      const body = res.body as unknown;
      const items = Array.isArray(body) ? body : Array.isArray((body as { data?: unknown })?.data) ? (body as { data: unknown[] }).data : undefined;
      if (!items) throw schemaError(`GET ${url.pathname}`, 'the response is not a list of networks');
      const out: NetworkRecord[] = [];
      for (const n of items) {
        const r = (n ?? {}) as Record<string, unknown>;
        const name = typeof n === 'string' ? n : typeof r.name === 'string' ? r.name : undefined;
        if (!name) continue;
        const chainId = Number(r.chainId ?? r.chain_id);
        const caip = r.networkCaip ?? r.network_caip;
        out.push({ name, chainId: Number.isInteger(chainId) ? chainId : null, networkCaip: typeof caip === 'string' ? caip : null });
      }
      return out;
    },

    benchmarks(q, o = {}) {
      const path = ENDPOINTS.benchmarks + encodeURIComponent(q.network);
      const query = { code: q.code, fromTimestamp: q.fromTimestamp, toTimestamp: q.toTimestamp, perPage: q.perPage };
      return walkNumberedPages(http, `GET ${urlOf(catalog, path).pathname}`, (page) => urlOf(catalog, path, { ...query, page }), cfg.max_pages, o.signal, opts.stopAtPageCap ?? false);
    },

    close: () => http.close(),
  };
}
