/**
 * undici's dispatchers without undici's index (target B6s, docs/performance.md "B6s: undici without its index").
 *
 * `import … from 'undici'` evaluates the whole package: fetch, WebSocket, EventSource, the cache, the mocks, and on
 * the way (`lib/web/cookies` reads `globalThis.Headers`) node's own bundled copy of undici with its WebAssembly
 * parser. A daemon uses a Pool for the data service and `Dispatcher#request` for its HTTP notifiers (on undici's
 * global dispatcher, an Agent, unless given one): loading the rest
 * cost the daemon watching 200 markets ~5 MB of RSS. So the parts come from their own files, and `request` is
 * given to `Dispatcher.prototype` as undici's index gives it (`Object.assign(Dispatcher.prototype, api)`: the same
 * function, so loading the index later changes nothing). `fetch` is loaded with the index, on first use only: the
 * Slack bot mode hands it to @slack/web-api (the webhook mode has its own over `request`, slack-fetch.ts).
 *
 * undici does not promise these paths (it has no `exports` map, so they resolve, but a release may move them):
 * test/net-undici.test.ts holds each to the index's own export and fails on an undici that moved one; an install
 * that gets such a release (the range is `^7`) falls back to the index ({@link loadUndiciParts}).
 */
import { createRequire } from 'node:module';
import type * as Undici from 'undici';

/** What this module takes from undici. */
export interface UndiciParts {
  Dispatcher: typeof Undici.Dispatcher;
  Pool: typeof Undici.Pool;
  request: Undici.Dispatcher['request'];
  getGlobalDispatcher(): Undici.Dispatcher;
  /** `files` when they came from their own files, `index` when from undici's index (a release that moved them). */
  from: 'files' | 'index';
}

/**
 * undici's parts from their own files, or — when one of those paths is gone or holds something else (a release that
 * moved them, an `exports` map; an install takes any 7.x) — from its index, as before: a moved file costs the memory
 * back, never the start.
 */
export function loadUndiciParts(req: (id: string) => unknown): UndiciParts {
  try {
    const parts = {
      Dispatcher: req('undici/lib/dispatcher/dispatcher.js') as typeof Undici.Dispatcher,
      Pool: req('undici/lib/dispatcher/pool.js') as typeof Undici.Pool,
      request: req('undici/lib/api/api-request.js') as Undici.Dispatcher['request'],
      getGlobalDispatcher: (req('undici/lib/global.js') as { getGlobalDispatcher: () => Undici.Dispatcher }).getGlobalDispatcher,
    };
    const ok = [parts.Dispatcher, parts.Pool, parts.request, parts.getGlobalDispatcher].every((p) => typeof p === 'function') && parts.Pool.prototype instanceof parts.Dispatcher;
    if (ok) {
      // As undici's index does (`Object.assign(Dispatcher.prototype, api)`): the same function, set before it loads.
      (parts.Dispatcher.prototype as { request?: unknown }).request ??= parts.request;
      return { ...parts, from: 'files' };
    }
  } catch {
    // moved: the index below
  }
  const index = req('undici') as typeof Undici;
  return { Dispatcher: index.Dispatcher, Pool: index.Pool, request: index.Dispatcher.prototype.request, getGlobalDispatcher: index.getGlobalDispatcher, from: 'index' };
}

const parts = loadUndiciParts(createRequire(import.meta.url));

/** undici's `Pool` (the class its index exports). */
export const Pool = parts.Pool;
/** Where the parts came from (see {@link loadUndiciParts}). */
export const undiciPartsFrom = parts.from;

/** The dispatcher undici's own top-level functions use when none is given (`setGlobalDispatcher` sets it). */
export function getGlobalDispatcher(): Undici.Dispatcher {
  return parts.getGlobalDispatcher();
}

/** Options of {@link request}: undici's, with the dispatcher to use (default: {@link getGlobalDispatcher}). */
export type RequestOptions = Omit<Undici.Dispatcher.RequestOptions, 'origin' | 'path' | 'method'> & {
  method?: Undici.Dispatcher.HttpMethod;
  dispatcher?: Undici.Dispatcher;
};

/**
 * undici's top-level `request(url, options)`: the URL split into origin and path (with its query), the method GET
 * unless given (PUT with a body, as undici's), on `options.dispatcher` or the global one — called on the dispatcher as
 * undici's is (`request.call(dispatcher, …)`), so a dispatcher with only `dispatch` will do. Not undici's checks of
 * the arguments (`opts.path`, `opts.agent`, a URL that is not http(s) refused before any promise): the callers pass
 * URLs from a checked config.
 */
export function request(url: string | URL, options: RequestOptions = {}): Promise<Undici.Dispatcher.ResponseData> {
  const u = typeof url === 'string' ? new URL(url) : url;
  const { dispatcher = getGlobalDispatcher(), ...rest } = options;
  return parts.request.call(dispatcher, {
    ...rest,
    origin: u.origin,
    path: u.search ? `${u.pathname}${u.search}` : u.pathname,
    method: rest.method ?? (rest.body ? 'PUT' : 'GET'),
  }) as Promise<Undici.Dispatcher.ResponseData>;
}

let index: Promise<typeof Undici> | undefined;

/** undici's `fetch`, its index loaded at the first call. */
export async function fetch(input: Parameters<typeof Undici.fetch>[0], init?: Parameters<typeof Undici.fetch>[1]): Promise<Undici.Response> {
  const undici = await (index ??= import('undici'));
  return undici.fetch(input, init);
}
