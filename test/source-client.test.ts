import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { RESPONSE_BYTES_CHANNEL } from '../src/channels.js';
import { Agent } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SourceError } from '../src/errors.js';
import { startSimulator, type Simulator } from '../src/simulator/index.js';
import { createDataServiceClient, type DataServiceClient, type SourceConfig } from '../src/source/client.js';
import { DataServiceError } from '../src/source/errors.js';
import type { HttpClient } from '../src/source/http.js';
import { walkCursorPages } from '../src/source/pages.js';
import { errorText, rawServer, recordingSleep, sourceConfig, until } from './source-helpers.js';

let sim: Simulator;
const clients: DataServiceClient[] = [];

function client(over: Partial<SourceConfig> = {}, opts: Parameters<typeof createDataServiceClient>[1] = {}): DataServiceClient {
  const c = createDataServiceClient(sourceConfig(sim, over), { sleep: recordingSleep().sleep, ...opts });
  clients.push(c);
  return c;
}

/** The rejection of `p`, which must reject with a DataServiceError. */
async function failure(p: Promise<unknown>): Promise<DataServiceError> {
  const err = await p.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DataServiceError);
  expect(err).toBeInstanceOf(SourceError);
  return err as DataServiceError;
}

beforeAll(async () => {
  sim = await startSimulator({ seed: 7, markets: 12, positions: 120, formats: 'mixed' });
});
afterEach(async () => {
  sim.faults.clear();
  await Promise.all(clients.splice(0).map((c) => c.close()));
});
afterAll(async () => {
  await sim.close();
});

describe('pagination to the end', () => {
  // What tells rows apart: a position's id, an assets row's position and type, a holding's (wallet, chain, token).
  it.each([
    ['positions', '/api/v1/positions', () => sim.world.positionsSource(Date.now()).length, (r: Record<string, unknown>) => r.id],
    ['assets', '/assets', () => sim.world.assetsSource(Date.now()).length, (r: Record<string, unknown>) => `${r.position_id}/${r.type}`],
    ['holdings', '/holdings', () => sim.world.holdingsSource(Date.now()).length, (r: Record<string, unknown>) => `${r.wallet}/${r.chain}/${r.token_address}`],
  ] as const)('%s across several pages', async (kind, path, total, identity) => {
    const c = client();
    const before = sim.requests.count(path);
    const walk = await c[kind]({ limit: 25 });
    const expected = total();
    expect(expected).toBeGreaterThan(50);
    expect(walk.rows).toHaveLength(expected);
    expect(new Set(walk.rows.map((r) => identity(r as Record<string, unknown>))).size).toBe(expected);
    expect(walk.pages).toBe(Math.ceil(expected / 25));
    expect(sim.requests.count(path) - before).toBe(walk.pages);
    for (const r of sim.requests.last(walk.pages)) {
      expect(r.headers['x-api-key']).toBe('sim-key');
      expect(r.query).toContain('limit=25');
    }
  });

  it('read page by page, asks for the next page before a page is read, and drops it when the reading fails', async () => {
    const path = '/api/v1/positions';
    const total = sim.world.positionsSource(Date.now()).length;
    const pages = Math.ceil(total / 25);
    const before = sim.requests.count(path);
    const read: unknown[] = [];
    let page = 0;
    const walk = await client().positions(
      { limit: 25 },
      {
        onPage: async (rows) => {
          page++;
          // The service has the next page's request while this one is read (not after: this waits for it).
          await until(() => sim.requests.count(path) - before === Math.min(page + 1, pages), 2_000);
          read.push(...rows);
        },
      },
    );
    expect(walk).toEqual({ rows: [], pages });
    expect(read).toHaveLength(total);
    expect(new Set(read.map((r) => (r as { id: string }).id)).size).toBe(total);
    expect(sim.requests.count(path) - before).toBe(pages);
    // The reading of the second page fails: the walk fails with it, and the third page's request goes nowhere.
    const broken = new Error('reading failed');
    let calls = 0;
    const err = await client()
      .positions({ limit: 25 }, { onPage: () => { if (++calls === 2) throw broken; } })
      .then(() => undefined, (e: unknown) => e);
    expect(err).toBe(broken);
    expect(calls).toBe(2);
  });

  it('aborts the next page asked for early when a page’s reading fails (an http client that records each request’s signal)', async () => {
    const asked: Array<{ cursor: string | null; signal: AbortSignal | undefined }> = [];
    const http = {
      request: async (req: { url: URL; signal?: AbortSignal }) => {
        asked.push({ cursor: req.url.searchParams.get('cursor'), signal: req.signal });
        const k = asked.length;
        return { status: 200, body: { data: [{ id: `r${k}` }], page_info: { has_more: true, next_cursor: `c${k}` } } };
      },
    } as unknown as HttpClient;
    const broken = new Error('reading failed');
    let pages = 0;
    const err = await walkCursorPages(http, 'positions', (c) => new URL(`http://127.0.0.1/p${c ? `?cursor=${c}` : ''}`), 100, undefined, false, () => {
      if (++pages === 2) throw broken;
    }).then(() => undefined, (e: unknown) => e);
    expect(err).toBe(broken);
    // Page 3 was asked for while page 2 was read, with the cursor page 2 gave; its request is dropped.
    expect(asked.map((a) => a.cursor)).toEqual([null, 'c1', 'c2']);
    expect(asked[1]!.signal?.aborted ?? false).toBe(false);
    expect(asked[2]!.signal?.aborted).toBe(true);
  });

  it.each([
    // [what the pages say, max pages, stop at the cap, the walk's end, the cursors asked for]
    ['the page cap', (k: number) => ({ has_more: true, next_cursor: `c${k}` }), 3, false, 'page_cap', [null, 'c1', 'c2']],
    ['the page cap, stopping there', (k: number) => ({ has_more: true, next_cursor: `c${k}` }), 3, true, 'truncated', [null, 'c1', 'c2']],
    ['a repeated cursor', (k: number) => ({ has_more: true, next_cursor: k >= 2 ? 'again' : `c${k}` }), 10, false, 'repeated_cursor', [null, 'c1', 'again']],
    ['a missing cursor', (k: number) => (k >= 2 ? { has_more: true } : { has_more: true, next_cursor: `c${k}` }), 10, false, 'missing_cursor', [null, 'c1']],
    ['the last page', (k: number) => ({ has_more: k < 3, next_cursor: `c${k}` }), 10, false, 'end', [null, 'c1', 'c2']],
  ] as const)('read page by page, asks for no page after %s, and hands every page it got to the reader', async (_what, info, maxPages, stopAtCap, end, cursors) => {
    const asked: Array<string | null> = [];
    const http = {
      request: async (req: { url: URL }) => {
        asked.push(req.url.searchParams.get('cursor'));
        const k = asked.length;
        return { status: 200, body: { data: [{ id: `r${k}` }], page_info: info(k) } };
      },
    } as unknown as HttpClient;
    const read: unknown[] = [];
    const walk = walkCursorPages(http, 'positions', (c) => new URL(`http://127.0.0.1/p${c ? `?cursor=${c}` : ''}`), maxPages, undefined, stopAtCap, (rows) => {
      read.push(...rows);
    });
    if (end === 'end' || end === 'truncated') {
      expect(await walk).toEqual(end === 'truncated' ? { rows: [], pages: cursors.length, truncated: true } : { rows: [], pages: cursors.length });
    } else {
      expect((await failure(walk)).reason).toBe(end);
    }
    expect(asked).toEqual(cursors);
    expect(read).toEqual(cursors.map((_, i) => ({ id: `r${i + 1}` })));
  });

  it('caps limit at 500 rows per page', async () => {
    await client().positions({ limit: 5000 });
    expect(sim.requests.last(1)[0]!.query).toContain('limit=500');
  });

  it('historical benchmarks across several numbered pages', async () => {
    const c = client();
    const from = Math.floor(Date.now() / 1000) - 30 * 86_400;
    const all = await c.benchmarks({ network: 'base', code: 'usd', fromTimestamp: from, perPage: 1000 });
    const paged = await c.benchmarks({ network: 'base', code: 'usd', fromTimestamp: from, perPage: 7 });
    expect(all.rows.length).toBeGreaterThanOrEqual(30);
    expect(paged.pages).toBe(Math.ceil(all.rows.length / 7));
    expect(paged.rows).toEqual(all.rows);
  });

  it('a 404 from a list is an empty, successful page', async () => {
    const before = sim.requests.count('/api/v1/positions');
    const walk = await client().positions({ chain: 'no-such-chain' });
    expect(walk).toEqual({ rows: [], pages: 1 });
    expect(sim.requests.count('/api/v1/positions') - before).toBe(1);
    expect(sim.requests.last(1)[0]!.status).toBe(404);
  });

  it.each([
    ['positions', '/api/v1/positions', (c: DataServiceClient) => c.positions({ limit: 10 })],
    ['benchmarks', '/api/catalog/historical-benchmarks/base', (c: DataServiceClient) => c.benchmarks({ network: 'base', code: 'usd', perPage: 2, fromTimestamp: 0 })],
  ])('a repeated cursor stops the %s walk with a failure', async (_name, path, call) => {
    sim.faults.add({ path, repeatCursor: true });
    const before = sim.requests.count(path);
    const err = await failure(call(client()));
    expect(err.code).toBe('E_SOURCE_PAGINATION');
    expect(err.reason).toBe('repeated_cursor');
    expect(err.message).toContain('partial data discarded');
    expect(sim.requests.count(path) - before).toBeLessThanOrEqual(3);
  });

  it('reaching max_pages fails the walk (page_cap)', async () => {
    const err = await failure(client({ max_pages: 2 }).positions({ limit: 10 }));
    expect(err.code).toBe('E_SOURCE_PAGINATION');
    expect(err.reason).toBe('page_cap');
    expect(err.message).toMatch(/after 2 pages/);
  });
});

describe('GraphQL metrics', () => {
  it.each(['/yields/graphql', '/api/graphql'])('works on %s', async (path) => {
    const before = sim.requests.count(path, 'POST');
    const rows = await client({ graphql_path: path }).metrics({ limit: 100, createdAfter: new Date(Date.now() - 86_400_000).toISOString().slice(0, 10) });
    expect(rows).toHaveLength(100);
    expect(new Set(rows.map((r) => (r as { market_id: string }).market_id)).size).toBe(12);
    expect(sim.requests.count(path, 'POST') - before).toBe(1);
  });

  it('filters by market_id', async () => {
    const id = sim.world.markets[3]!.marketId;
    const rows = await client().metrics({ limit: 50, marketId: id });
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => (r as { market_id: string }).market_id === id)).toBe(true);
  });

  it('errors in the response fail the call (E_SOURCE_GRAPHQL), not retried', async () => {
    sim.faults.add({ path: '/yields/graphql', body: { errors: [{ message: 'field "nope" not found' }] } });
    const before = sim.requests.count('/yields/graphql');
    const err = await failure(client().metrics({ limit: 10 }));
    expect(err.code).toBe('E_SOURCE_GRAPHQL');
    expect(err.reason).toBe('graphql');
    expect(err.message).toContain('field "nope" not found');
    expect(sim.requests.count('/yields/graphql') - before).toBe(1);
  });

  it('a 400 from the GraphQL endpoint is an HTTP failure, not retried', async () => {
    sim.faults.add({ path: '/yields/graphql', status: 400 });
    const before = sim.requests.count('/yields/graphql');
    const err = await failure(client().metrics({ limit: 10 }));
    expect(err).toMatchObject({ code: 'E_SOURCE_HTTP', reason: 'http_400', status: 400 });
    expect(sim.requests.count('/yields/graphql') - before).toBe(1);
  });

  it('a 404 from the GraphQL endpoint (not a list) is an HTTP failure, not retried', async () => {
    sim.faults.add({ path: '/yields/graphql', status: 404, times: 5 });
    const before = sim.requests.count('/yields/graphql', 'POST');
    const err = await failure(client().metrics({ limit: 10 }));
    expect(err).toMatchObject({ code: 'E_SOURCE_HTTP', reason: 'http_404', status: 404, retryable: false, endpoint: 'POST /yields/graphql' });
    expect(err.message).toMatch(/^POST \/yields\/graphql: 404 — nothing matched/);
    expect(sim.requests.count('/yields/graphql', 'POST') - before).toBe(1);
  });
});

describe('catalog', () => {
  it('lists networks', async () => {
    const nets = await client().networks();
    expect(nets.map((n) => n.name)).toEqual(sim.world.networks.map((n) => n.name));
    expect(nets[0]).toMatchObject({ chainId: expect.any(Number), networkCaip: expect.stringMatching(/^eip155:/) });
  });

  it('400 (unknown network) is not retried and says what the service said', async () => {
    const path = '/api/catalog/historical-benchmarks/atlantis';
    const err = await failure(client().benchmarks({ network: 'atlantis', code: 'usd' }));
    expect(err).toMatchObject({ code: 'E_SOURCE_HTTP', reason: 'http_400', status: 400, retryable: false });
    expect(err.message).toContain(`GET ${path}: 400`);
    expect(err.message).toContain('unknown network');
    expect(sim.requests.count(path)).toBe(1);
  });
});

describe('authentication', () => {
  const key = `k-${Math.random().toString(36).slice(2)}-do-not-leak`;

  it('401: a clear error, no retry, and the key appears nowhere in it', async () => {
    const before = sim.requests.count('/api/v1/positions');
    const err = await failure(client({ api_key: key }).positions({}));
    expect(err).toMatchObject({ code: 'E_SOURCE_AUTH', reason: 'http_401', status: 401, retryable: false, endpoint: 'GET /api/v1/positions' });
    expect(err.message).toMatch(/^GET \/api\/v1\/positions: 401 — API key missing or rejected/);
    expect(sim.requests.count('/api/v1/positions') - before).toBe(1);
    expect(sim.requests.last(1)[0]!.headers['x-api-key']).toBe(key);
    expect(errorText(err)).not.toContain(key);
  });

  it('a service message that echoes the key is redacted', async () => {
    sim.faults.add({ path: '/api/catalog/networks', status: 401, body: { error: 'Unauthorized', message: `key ${key} is not valid` } });
    const err = await failure(client({ api_key: key }).networks());
    expect(err.message).toContain('[redacted]');
    expect(errorText(err)).not.toContain(key);
  });

  it('without a key configured, the message says so', async () => {
    const err = await failure(client({ api_key: undefined }).networks());
    expect(err.code).toBe('E_SOURCE_AUTH');
    expect(err.message).toContain('source.api_key is not set');
    expect(sim.requests.last(1)[0]!.headers['x-api-key']).toBeUndefined();
  });
});

describe('retries', () => {
  it('429 with Retry-After: waits what the server asked, then succeeds', async () => {
    const { sleep, delays } = recordingSleep();
    sim.faults.add({ path: '/api/catalog/networks', status: 429, retryAfter: 1 });
    const before = sim.requests.count('/api/catalog/networks');
    const nets = await client({ max_backoff: 5_000 }, { sleep }).networks();
    expect(nets.length).toBeGreaterThan(0);
    expect(delays).toEqual([1000]);
    expect(sim.requests.count('/api/catalog/networks') - before).toBe(2);
  });

  it('429 with a real 1 s Retry-After (real sleep) succeeds', async () => {
    sim.faults.add({ path: '/api/catalog/networks', status: 429, retryAfter: 1 });
    const c = createDataServiceClient(sourceConfig(sim, { max_backoff: 5_000 }));
    clients.push(c);
    await expect(c.networks()).resolves.toHaveLength(sim.world.networks.length);
  });

  it('a Retry-After longer than max_backoff is capped', async () => {
    const { sleep, delays } = recordingSleep();
    sim.faults.add({ path: '/api/catalog/networks', status: 429, retryAfter: 3600 });
    await client({ max_backoff: 250 }, { sleep }).networks();
    expect(delays).toEqual([250]);
  });

  it('500 then success, with exponential backoff and full jitter', async () => {
    const { sleep, delays } = recordingSleep();
    sim.faults.add({ path: '/performance', status: 500, times: 3 });
    const before = sim.requests.count('/performance');
    const body = await client({ backoff: 100, max_backoff: 250, retries: 3 }, { sleep, random: () => 0.5 }).performance({});
    expect(body).toMatchObject({ data: { organization: expect.any(Object) } });
    expect(delays).toEqual([50, 100, 125]); // 0.5 × min(250, 100 × 2^n)
    expect(sim.requests.count('/performance') - before).toBe(4);
  });

  it('gives up after `retries` more attempts, saying how many', async () => {
    sim.faults.add({ path: '/performance', status: 503, times: 10 });
    const before = sim.requests.count('/performance');
    const err = await failure(client({ retries: 2 }).performance({}));
    expect(err).toMatchObject({ code: 'E_SOURCE_HTTP', reason: 'http_5xx', status: 503, retryable: true });
    expect(err.message).toMatch(/^GET \/performance: 503 — the service failed \(service says: .*\); gave up after 3 attempts$/);
    expect(sim.requests.count('/performance') - before).toBe(3);
  });

  // A cut-short body is almost always the transport, so it is retried; a body that stays broken
  // fails with E_SOURCE_BAD_JSON once the retries are spent.
  it.each([
    ['body', 'body' as const],
    ['socket', 'socket' as const],
  ])('truncated JSON (%s) once: retried, then succeeds', async (_name, truncate) => {
    sim.faults.add({ path: '/api/v1/positions', truncate });
    const walk = await client().positions({ limit: 500 });
    expect(walk.rows.length).toBe(sim.world.positionsSource(Date.now()).length);
  });

  it('truncated JSON every time: E_SOURCE_BAD_JSON after the retries', async () => {
    sim.faults.add({ path: '/api/v1/positions', truncate: true, times: 10 });
    const before = sim.requests.count('/api/v1/positions');
    const err = await failure(client({ retries: 2 }).positions({}));
    expect(err).toMatchObject({ code: 'E_SOURCE_BAD_JSON', reason: 'bad_json', status: 200 });
    expect(err.message).toContain('not valid JSON');
    expect(sim.requests.count('/api/v1/positions') - before).toBe(3);
  });

  it('a body that is not JSON: the error counts the bytes that came, not the decoded text', async () => {
    // 9 characters of text, 3 of them 3-byte UTF-8 (€), after a BOM that decoding drops: 3 + 6 + 9 = 18 bytes.
    const body = Buffer.concat([Buffer.of(0xef, 0xbb, 0xbf), Buffer.from('{"a":"€€€', 'utf8')]);
    expect(body.length).toBe(18);
    const srv = await rawServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    });
    try {
      const c = createDataServiceClient(sourceConfig({ url: srv.url, catalogUrl: srv.url }, { retries: 0 }));
      clients.push(c);
      const err = await failure(c.networks());
      expect(err).toMatchObject({ code: 'E_SOURCE_BAD_JSON', reason: 'bad_json', status: 200 });
      expect(err.message).toMatch(/not valid JSON \(.*, 18 bytes\)$/);
    } finally {
      await srv.close();
    }
  });

  it('a response slower than the timeout is E_SOURCE_TIMEOUT', async () => {
    sim.faults.add({ path: '/api/catalog/networks', delayMs: 2_000, times: 5 });
    const err = await failure(client({ timeout: 100, retries: 1 }).networks());
    expect(err).toMatchObject({ code: 'E_SOURCE_TIMEOUT', reason: 'timeout' });
    expect(err.message).toContain('no complete response within 100ms');
  });

  it('a refused connection is E_SOURCE_NETWORK, retried', async () => {
    const srv = await rawServer(() => {});
    await srv.close();
    const { sleep, delays } = recordingSleep();
    const c = createDataServiceClient(sourceConfig({ url: srv.url, catalogUrl: srv.url }, { retries: 2 }), { sleep });
    clients.push(c);
    const err = await failure(c.networks());
    expect(err).toMatchObject({ code: 'E_SOURCE_NETWORK', reason: 'network' });
    expect(err.message).toContain('ECONNREFUSED');
    expect(delays).toHaveLength(2);
  });

  it('an abort stops the wait between retries at once', async () => {
    sim.faults.add({ path: '/api/catalog/networks', status: 429, retryAfter: 60 });
    const c = createDataServiceClient(sourceConfig(sim, { max_backoff: 60_000 }));
    clients.push(c);
    const ac = new AbortController();
    const before = sim.requests.count('/api/catalog/networks');
    const pending = failure(c.networks({ signal: ac.signal }));
    await until(() => sim.requests.count('/api/catalog/networks') > before && sim.requests.last(1)[0]!.status === 429);
    ac.abort(new Error('shutting down'));
    const err = await pending;
    expect(err).toMatchObject({ code: 'E_SOURCE_ABORTED', reason: 'aborted' });
    expect(err.message).toContain('shutting down');
    expect(sim.requests.count('/api/catalog/networks') - before).toBe(1);
  });
});

describe('transport', () => {
  it('bounds requests in flight, reuses connections, and keeps a path prefix of base_url', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    const sockets = new Set<unknown>();
    const paths: string[] = [];
    const srv = await rawServer((req, res) => {
      sockets.add(req.socket);
      paths.push(req.url ?? '');
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      setTimeout(() => {
        inFlight--;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"data":{}}');
      }, 20);
    });
    try {
      const c = createDataServiceClient(sourceConfig({ url: `${srv.url}/svc/`, catalogUrl: srv.url }, { concurrency: 2 }));
      clients.push(c);
      await Promise.all(Array.from({ length: 12 }, (_, i) => c.performance({ i })));
      expect(maxInFlight).toBe(2);
      expect(sockets.size).toBeLessThanOrEqual(2);
      expect(paths[0]).toMatch(/^\/svc\/performance\?i=\d+$/);
    } finally {
      await srv.close();
    }
  });

  it('keeps oracle prices above 2^53 exact even as raw JSON numbers', async () => {
    const srv = await rawServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"data":{"metrics":[{"market_id":"m-1","oracle_price":3022232490411010000000000001,"total_supplied":143857416635568123}]}}');
    });
    try {
      const c = createDataServiceClient(sourceConfig({ url: srv.url, catalogUrl: srv.url }));
      clients.push(c);
      const rows = (await c.metrics({ limit: 1 })) as Record<string, unknown>[];
      expect(rows[0]!.oracle_price).toBe('3022232490411010000000000001');
      expect(rows[0]!.total_supplied).toBe('143857416635568123');
    } finally {
      await srv.close();
    }
  });

  it('reads the body as body.text() would: a leading BOM dropped, a character split across writes whole, a bad byte as U+FFFD', async () => {
    const json = Buffer.from('{"data":{"metrics":[{"market_id":"m-é-😀","chain":"b?se"}]}}', 'utf8');
    json[json.indexOf('?')] = 0xff; // not UTF-8
    const split = json.indexOf(0xf0) + 2; // inside the emoji's four bytes
    const srv = await rawServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(Buffer.from([0xef, 0xbb, 0xbf]));
      res.write(json.subarray(0, split), () => setImmediate(() => res.end(json.subarray(split))));
    });
    try {
      const c = createDataServiceClient(sourceConfig({ url: srv.url, catalogUrl: srv.url }));
      clients.push(c);
      expect(await c.metrics({ limit: 1 })).toEqual([{ market_id: 'm-é-😀', chain: 'b\ufffdse' }]);
    } finally {
      await srv.close();
    }
  });

  it('reads a body of many chunks whole, with a Content-Length and without one (chunked, its buffer growing)', async () => {
    // ~600 KB of rows in 4 KB writes: ten times the first buffer a body without a length gets.
    // All ASCII (copied as it is), and with a non-ASCII label (decoded as UTF-8).
    for (const [declared, odd] of [[true, 'base'], [false, 'base'], [true, 'bäse'], [false, 'bäse']] as const) {
      const rows = Array.from({ length: 3000 }, (_, i) => ({ market_id: `m${i}`, chain: i % 100 === 0 ? odd : 'base', note: 'x'.repeat(150) }));
      const json = Buffer.from(JSON.stringify({ data: { metrics: rows } }), 'utf8');
      const srv = await rawServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', ...(declared ? { 'content-length': String(json.length) } : {}) });
        let at = 0;
        const next = () => {
          if (at >= json.length) return void res.end();
          const part = json.subarray(at, (at += 4096));
          res.write(part, () => setImmediate(next));
        };
        next();
      });
      // Each response's size goes out on the diagnostics channel the heap settings size the young generation by.
      const sizes: number[] = [];
      const onSize = (m: unknown) => sizes.push((m as { bytes: number }).bytes);
      subscribe(RESPONSE_BYTES_CHANNEL, onSize);
      try {
        const c = createDataServiceClient(sourceConfig({ url: srv.url, catalogUrl: srv.url }));
        clients.push(c);
        expect(await c.metrics({ limit: rows.length }), `content-length: ${declared}, ${odd}`).toEqual(rows);
        expect(sizes, 'the response sizes published').toContain(json.length);
      } finally {
        unsubscribe(RESPONSE_BYTES_CHANNEL, onSize);
        await srv.close();
      }
    }
  });

  it('sends through a dispatcher passed in, and leaves it open on close()', async () => {
    const agent = new Agent();
    try {
      const before = sim.requests.count('/api/catalog/networks');
      const c = createDataServiceClient(sourceConfig(sim), { dispatcher: agent });
      await c.networks();
      await c.close();
      expect(sim.requests.count('/api/catalog/networks') - before).toBe(1);
      expect(agent.closed).toBe(false);
      await expect(createDataServiceClient(sourceConfig(sim), { dispatcher: agent }).networks()).resolves.not.toHaveLength(0);
    } finally {
      await agent.close();
    }
  });

  it('honours a Retry-After given as an HTTP date, against the clock passed in', async () => {
    const now = Date.UTC(2026, 0, 1, 12, 0, 0);
    let calls = 0;
    const srv = await rawServer((_req, res) => {
      calls++;
      if (calls === 1) {
        res.writeHead(429, { 'retry-after': new Date(now + 3_000).toUTCString(), 'content-type': 'application/json' });
        res.end('{"error":"Too Many Requests"}');
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('[]');
      }
    });
    try {
      const { sleep, delays } = recordingSleep();
      const c = createDataServiceClient(sourceConfig({ url: srv.url, catalogUrl: srv.url }, { max_backoff: 10_000 }), { sleep, now: () => now });
      clients.push(c);
      await expect(c.networks()).resolves.toEqual([]);
      expect(delays).toEqual([3_000]);
    } finally {
      await srv.close();
    }
  });
});
