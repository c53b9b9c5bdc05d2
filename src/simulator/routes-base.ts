/** The positions-type routes on {base_url}: positions, assets, holdings, performance, and GraphQL. */
import { DAY_SEC } from './benchmarks.js';
import { represent, type Encoding, type RecordHints } from './encoding.js';
import { executeGraphQL } from './graphql.js';
import { pageOf, type RowSource } from './paging.js';
import { hash32, randRange } from './random.js';
import { errorResponse, type SimResponse } from './responses.js';
import { SNAPSHOT_MODES, type ListFilter, type SnapshotMode, type World } from './world.js';

/** What the base routes need. */
export interface BaseContext {
  world: World;
  nowMs: number;
  encoding: Encoding;
  sampleIntervalMs: number;
  maxGraphqlRows: number;
  /** Default and maximum page sizes of the list endpoints. */
  defaultLimit: number;
  maxLimit: number;
}

const bad = (message: string) => errorResponse('rest', 400, message);

type ListName = 'positions' | 'assets' | 'holdings';

/** Assets and holdings carry a token balance in base units, scaled by the row's own decimals. */
function hintsOf(row: object): RecordHints {
  const r = row as { balance?: unknown; decimals?: unknown };
  return typeof r.balance === 'string' && typeof r.decimals === 'number' ? { amounts: { balance: r.decimals } } : {};
}

function listRoute(name: ListName, q: URLSearchParams, ctx: BaseContext): SimResponse {
  const limitRaw = q.get('limit');
  let limit = ctx.defaultLimit;
  if (limitRaw !== null) {
    if (!/^\d+$/.test(limitRaw) || Number(limitRaw) < 1 || Number(limitRaw) > ctx.maxLimit) return bad(`limit must be an integer between 1 and ${ctx.maxLimit}`);
    limit = Number(limitRaw);
  }
  const cursorRaw = q.get('next_cursor');
  if (cursorRaw !== null && !/^\d{1,16}$/.test(cursorRaw)) return bad('next_cursor must be a cursor returned by a previous page');
  const mode = q.get('snapshot_mode') ?? 'all';
  if (!(SNAPSHOT_MODES as readonly string[]).includes(mode)) return bad(`snapshot_mode must be one of ${SNAPSHOT_MODES.join(', ')}`);
  const chain = q.get('chain');
  const filter: ListFilter = { chain: chain || null, mode: mode as SnapshotMode };
  if (filter.chain && !ctx.world.hasNetwork(filter.chain)) return errorResponse('rest', 404, `no ${name} found for chain "${filter.chain}"`);
  const src: RowSource<object> =
    name === 'positions' ? ctx.world.positionsSource(ctx.nowMs, filter) : name === 'assets' ? ctx.world.assetsSource(ctx.nowMs, filter) : ctx.world.holdingsSource(ctx.nowMs, filter);
  if (src.length === 0) return errorResponse('rest', 404, `no ${name} matched`);
  const page = pageOf(src, cursorRaw === null ? null : Number(cursorRaw), limit);
  const data = page.rows.map((row, i) => represent(row, ctx.encoding, page.keys[i] as number, hintsOf(row)));
  const pageInfo = page.hasMore ? { has_more: true, next_cursor: page.nextCursor } : { has_more: false };
  return { status: 200, body: { data, page_info: pageInfo } };
}

function parseDay(v: string | null, name: string): number | string | null {
  if (v === null) return null;
  if (!/^\d{4}-\d{2}-\d{2}$/.test(v) || !Number.isFinite(Date.parse(v + 'T00:00:00Z'))) return `${name} must be a date YYYY-MM-DD`;
  return Date.parse(v + 'T00:00:00Z') / 1000;
}

function performanceRoute(q: URLSearchParams, ctx: BaseContext): SimResponse {
  const to = parseDay(q.get('to'), 'to');
  const from = parseDay(q.get('from'), 'from');
  if (typeof to === 'string') return bad(to);
  if (typeof from === 'string') return bad(from);
  const toSec = to ?? Math.floor(ctx.nowMs / 1000 / DAY_SEC) * DAY_SEC;
  const fromSec = from ?? toSec - 30 * DAY_SEC;
  if (fromSec > toSec) return bad('from must not be after to');
  const days = (toSec - fromSec) / DAY_SEC + 1;
  const seed = ctx.world.seed;
  const metric = (key: string, i: number, nav: number) => {
    const apr = randRange(-0.02, 0.14, seed, 'perf', key, i, fromSec, toSec);
    const roi = apr * (days / 365);
    return { pnl_usd: Math.round(nav * roi * 100) / 100, roi: Number(roi.toFixed(6)), twr: Number((roi * 0.98).toFixed(6)), apr: Number(apr.toFixed(6)), apy: Number(Math.expm1(apr).toFixed(6)) };
  };
  const wallets = ctx.world.wallets.slice(0, 20).map((wallet, i) => {
    const nav = 1000 + (hash32(seed, 'perf-nav', i) % 5_000_000);
    const assets = ['USDC', 'WETH'].map((symbol, k) => ({ symbol, ...metric(symbol, i * 10 + k, nav / 2) }));
    return represent({ wallet, nav_usd: nav, ...metric('wallet', i, nav), assets }, ctx.encoding, `perf/${i}`);
  });
  const totalNav = ctx.world.wallets.slice(0, 20).reduce((s, _, i) => s + 1000 + (hash32(seed, 'perf-nav', i) % 5_000_000), 0);
  const organization = represent({ nav_usd: totalNav, ...metric('org', 0, totalNav) }, ctx.encoding, 'perf/org');
  return {
    status: 200,
    body: { data: { from: new Date(fromSec * 1000).toISOString().slice(0, 10), to: new Date(toSec * 1000).toISOString().slice(0, 10), organization, wallets } },
  };
}

/** Answers a request on {base_url} (auth already checked); null when no route matches. */
export function routeBase(method: string, path: string, q: URLSearchParams, body: unknown, ctx: BaseContext): SimResponse | null {
  const lists: Record<string, ListName> = { '/api/v1/positions': 'positions', '/assets': 'assets', '/holdings': 'holdings' };
  const list = lists[path];
  if (list) return method === 'GET' ? listRoute(list, q, ctx) : errorResponse('rest', 405, `${method} is not allowed on ${path}`);
  if (path === '/performance') return method === 'GET' ? performanceRoute(q, ctx) : errorResponse('rest', 405, `${method} is not allowed on ${path}`);
  if (path === '/yields/graphql' || path === '/api/graphql') {
    if (method !== 'POST') return errorResponse('graphql', 405, 'GraphQL requests must be POST');
    if (body === undefined) return errorResponse('graphql', 400, 'Body must be JSON: {query, variables}');
    return executeGraphQL(body, { world: ctx.world, nowMs: ctx.nowMs, encoding: ctx.encoding, sampleIntervalMs: ctx.sampleIntervalMs, maxRows: ctx.maxGraphqlRows });
  }
  return null;
}
