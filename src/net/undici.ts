/**
 * undici's dispatchers without undici's index (target B6s, docs/performance.md "B6s: undici without its index").
 *
 * `import … from 'undici'` evaluates the whole package: fetch, WebSocket, EventSource, the cache, the mocks, and on
 * the way (`lib/web/cookies` reads `globalThis.Headers`) node's own bundled copy of undici with its WebAssembly
 * parser. A daemon uses a Pool for the data service and `Dispatcher#request` for its HTTP notifiers: loading the rest
 * cost the daemon watching 200 markets ~5 MB of RSS. So the classes come from their own files, and `request` is
 * given to `Dispatcher.prototype` as undici's index gives it (`Object.assign(Dispatcher.prototype, api)`: the same
 * function, so loading the index later changes nothing). `fetch` is loaded with the index, on first use only (the
 * Slack notifiers hand a fetch to the Slack libraries).
 *
 * undici does not promise these paths (it has no `exports` map, so they resolve, but a release may move them):
 * test/net-undici.test.ts holds each to the index's own export, and fails on an undici that moved one.
 */
import { createRequire } from 'node:module';
import type * as Undici from 'undici';

const require = createRequire(import.meta.url);

const DispatcherClass = require('undici/lib/dispatcher/dispatcher.js') as typeof Undici.Dispatcher;
const apiRequest = require('undici/lib/api/api-request.js') as Undici.Dispatcher['request'];
const proto = DispatcherClass.prototype as { request?: Undici.Dispatcher['request'] };
proto.request ??= apiRequest;

/** undici's `Pool` (the class its index exports). */
export const Pool = require('undici/lib/dispatcher/pool.js') as typeof Undici.Pool;
/** undici's `Agent` (the class its index exports). */
export const Agent = require('undici/lib/dispatcher/agent.js') as typeof Undici.Agent;
/** undici's `Dispatcher` base class (the one its index exports). */
export const Dispatcher = DispatcherClass;

const global = require('undici/lib/global.js') as { getGlobalDispatcher(): Undici.Dispatcher };

/** The dispatcher undici's own top-level functions use when none is given (`setGlobalDispatcher` sets it). */
export function getGlobalDispatcher(): Undici.Dispatcher {
  return global.getGlobalDispatcher();
}

/** Options of {@link request}: undici's, with the dispatcher to use (default: {@link getGlobalDispatcher}). */
export type RequestOptions = Omit<Undici.Dispatcher.RequestOptions, 'origin' | 'path' | 'method'> & {
  method?: Undici.Dispatcher.HttpMethod;
  dispatcher?: Undici.Dispatcher;
};

/**
 * undici's top-level `request(url, options)`: the URL split into origin and path (with its query), the method GET
 * unless given (PUT with a body, as undici's), on `options.dispatcher` or the global one.
 */
export function request(url: string | URL, options: RequestOptions = {}): Promise<Undici.Dispatcher.ResponseData> {
  const u = typeof url === 'string' ? new URL(url) : url;
  const { dispatcher = getGlobalDispatcher(), ...rest } = options;
  return dispatcher.request({
    ...rest,
    origin: u.origin,
    path: u.search ? `${u.pathname}${u.search}` : u.pathname,
    method: rest.method ?? (rest.body ? 'PUT' : 'GET'),
  });
}

let index: Promise<typeof Undici> | undefined;

/** undici's `fetch`, its index loaded at the first call. */
export async function fetch(input: Parameters<typeof Undici.fetch>[0], init?: Parameters<typeof Undici.fetch>[1]): Promise<Undici.Response> {
  const undici = await (index ??= import('undici'));
  return undici.fetch(input, init);
}
