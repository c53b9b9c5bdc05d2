/**
 * undici's dispatchers without its index (src/net/undici.ts): the classes are the index's own, `request` behaves as
 * undici's top-level one over a real loopback server, and the daemon's modules load without the index (B6s).
 */
import type { IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScript } from './module-graph-helpers.js';
import { rawServer } from './source-helpers.js';
import { createRequire } from 'node:module';
import { Pool, fetch, getGlobalDispatcher, loadUndiciParts, request, undiciPartsFrom } from '../src/net/undici.js';

const require = createRequire(import.meta.url);
// Read before any test loads undici's index (which assigns its api to Dispatcher.prototype again).
const dispatcherProto = (require('undici/lib/dispatcher/dispatcher.js') as { prototype: object }).prototype;
const requestBeforeIndex = Object.getOwnPropertyDescriptor(dispatcherProto, 'request')?.value as unknown;
const indexLoaded = () => Object.keys(require.cache).some((f) => /node_modules[\\/]undici[\\/]index\.js$/.test(f));

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

let server: { url: string; close(): Promise<void> };
let base: string;
const seen: Seen[] = [];

beforeAll(async () => {
  server = await rawServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(201, { 'content-type': 'application/json', 'retry-after': '7' });
      res.end(JSON.stringify({ n: seen.length }));
    });
  });
  base = server.url;
});

afterAll(async () => {
  await server.close();
});

describe('undici without its index', () => {
  it('request sends the method, the path with its query, the headers and the body, and reads the answer', async () => {
    const res = await request(`${base}/v1/alerts?x=1&y=two`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-k': 'v' }, body: '{"a":1}' });
    expect(res.statusCode).toBe(201);
    expect(res.headers['retry-after']).toBe('7');
    expect(await res.body.json()).toEqual({ n: seen.length });
    const last = seen.at(-1)!;
    expect(last).toMatchObject({ method: 'POST', url: '/v1/alerts?x=1&y=two', body: '{"a":1}' });
    expect(last.headers['x-k']).toBe('v');
  });

  it('request defaults to GET without a body and PUT with one, as undici does', async () => {
    await (await request(new URL(`${base}/get`))).body.dump();
    expect(seen.at(-1)).toMatchObject({ method: 'GET', url: '/get' });
    await (await request(`${base}/put`, { body: 'x' })).body.dump();
    expect(seen.at(-1)).toMatchObject({ method: 'PUT', url: '/put', body: 'x' });
  });

  it('request goes through the dispatcher it is given', async () => {
    const pool = new Pool(base, { connections: 1 });
    try {
      let connects = 0;
      pool.on('connect', () => connects++);
      const res = await request(`${base}/pooled`, { dispatcher: pool });
      await res.body.dump();
      expect(connects).toBe(1);
      expect(pool.stats.connected).toBe(1);
      expect(seen.at(-1)).toMatchObject({ method: 'GET', url: '/pooled' });
    } finally {
      await pool.close();
    }
  });

  it('request takes a dispatcher that has only dispatch, as undici’s does', async () => {
    const pool = new Pool(base, { connections: 1 });
    try {
      const bare = { dispatch: pool.dispatch.bind(pool) } as unknown as InstanceType<typeof Pool>;
      const res = await request(`${base}/bare`, { dispatcher: bare });
      await res.body.dump();
      expect(seen.at(-1)).toMatchObject({ method: 'GET', url: '/bare' });
    } finally {
      await pool.close();
    }
  });

  it('request ends with its signal', async () => {
    const hang = await rawServer(() => undefined);
    try {
      const url = `${hang.url}/never`;
      await expect(request(url, { signal: AbortSignal.timeout(100) })).rejects.toMatchObject({ name: 'TimeoutError' });
    } finally {
      await hang.close();
    }
  });

  it('gives the very classes and request method the index exports, set before the index loads', async () => {
    // Every test above ran without undici's index: the method they used is the one set from its own file.
    expect(indexLoaded()).toBe(false);
    expect(requestBeforeIndex).toBe(require('undici/lib/api/api-request.js'));
    const undici = await import('undici');
    expect(Pool).toBe(undici.Pool);
    expect(Pool.prototype instanceof undici.Dispatcher).toBe(true);
    expect(undici.Dispatcher.prototype).toBe(dispatcherProto);
    // The index assigns its api to Dispatcher.prototype: the method set before it is that same function.
    expect(Object.getOwnPropertyDescriptor(undici.Dispatcher.prototype, 'request')?.value).toBe(requestBeforeIndex);
    expect(getGlobalDispatcher()).toBe(undici.getGlobalDispatcher());
  });

  it('falls back to the index when a file moved (an install of a later 7.x), and otherwise reads the files', () => {
    const moved = loadUndiciParts((id) => {
      if (id.startsWith('undici/lib/')) throw Object.assign(new Error(`Cannot find module '${id}'`), { code: 'MODULE_NOT_FOUND' });
      return require(id) as unknown;
    });
    const reshaped = loadUndiciParts((id) => (id === 'undici/lib/api/api-request.js' ? { request: 'not a function' } : (require(id) as unknown)));
    for (const parts of [moved, reshaped]) {
      expect(parts.from).toBe('index');
      expect(parts.Pool).toBe(Pool);
      expect(parts.request).toBe((require('undici') as typeof import('undici')).Dispatcher.prototype.request);
    }
    expect(undiciPartsFrom).toBe('files');
  });

  it('fetch is undici’s (its Response, not the global fetch’s)', async () => {
    const res = await fetch(`${base}/fetched`, { method: 'POST', body: 'f' });
    expect(res).toBeInstanceOf((await import('undici')).Response);
    expect(res).not.toBeInstanceOf(globalThis.Response);
    expect(res.status).toBe(201);
    expect(res.headers.get('retry-after')).toBe('7');
    await res.arrayBuffer();
    expect(seen.at(-1)).toMatchObject({ method: 'POST', url: '/fetched', body: 'f' });
  });

  it("loading the daemon's modules evaluates neither undici's index nor node's own undici", async () => {
    // The built daemon, as `lookout run` loads it (npm test builds first).
    const out = await runScript(`
      import { createRequire } from 'node:module';
      await import('./dist/daemon.js');
      const cache = Object.keys(createRequire(import.meta.url).cache);
      console.log(JSON.stringify({
        index: cache.filter((f) => /node_modules[\\/]undici[\\/]index\.js$/.test(f)),
        pool: cache.some((f) => /undici[\\/]lib[\\/]dispatcher[\\/]pool\.js$/.test(f)),
        nodeUndici: process.moduleLoadList.some((m) => m.includes('internal/deps/undici')),
      }));`);
    expect(JSON.parse(out)).toEqual({ index: [], pool: true, nodeUndici: false });
  });
});
