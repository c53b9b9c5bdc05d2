import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { startSimulator, type Simulator } from '../src/simulator/index.js';
import { call, gql } from './simulator-helpers.js';

const T0 = Date.UTC(2026, 2, 10, 12, 0, 0);

describe('fault injection', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ clock: new ManualClock(T0), formats: 'canonical' });
  });
  afterEach(() => {
    sim.faults.clear();
    sim.requests.clear();
  });
  afterAll(() => sim.close());

  it.each([
    { name: '429 with Retry-After', spec: { status: 429, retryAfter: 2, times: 2 }, status: 429, retryAfter: '2', body: { error: 'Too Many Requests', statusCode: 429 } },
    { name: '500', spec: { status: 500, times: 3 }, status: 500, retryAfter: null, body: { error: 'Internal Server Error', statusCode: 500 } },
    { name: '503 with a custom body', spec: { status: 503, body: { oops: true } }, status: 503, retryAfter: null, body: { oops: true } },
  ])('$name fires the given number of times, then the service answers', async ({ spec, status, retryAfter, body }) => {
    sim.faults.add({ path: '/api/v1/positions', ...spec });
    const times = spec.times ?? 1;
    for (let i = 0; i < times; i++) {
      const a = await call(sim.url + '/api/v1/positions?limit=5');
      expect(a.status).toBe(status);
      expect(a.headers.get('retry-after')).toBe(retryAfter);
      expect(a.json).toMatchObject(body);
    }
    expect((await call(sim.url + '/api/v1/positions?limit=5')).status).toBe(200);
    expect(sim.requests.count('/api/v1/positions')).toBe(times + 1);
    expect(sim.faults.list()).toEqual([]);
  });

  it('matches by path, prefix, RegExp and method; other requests pass', async () => {
    sim.faults.add({ path: '/holdings', status: 500 });
    sim.faults.add({ path: '/api/catalog/*', status: 502 });
    sim.faults.add({ path: /graphql$/, method: 'POST', status: 429, retryAfter: 1 });
    expect((await call(sim.url + '/assets?limit=1')).status).toBe(200);
    expect((await call(sim.url + '/holdings?limit=1')).status).toBe(500);
    expect((await call(sim.catalogUrl + '/api/catalog/networks')).status).toBe(502);
    const g = await gql(sim, '{ metrics(limit: 1) { id } }', undefined, '/api/graphql');
    expect(g.status).toBe(429);
    expect(g.json.errors[0].message).toEqual(expect.any(String));
  });

  it('delays a response by delayMs: a later request is answered first, then the delayed one with its data', async () => {
    sim.faults.add({ path: '/assets', delayMs: 2_000 });
    const order: string[] = [];
    const delayed = call(sim.url + '/assets?limit=1').then((a) => (order.push('delayed'), a));
    const deadline = Date.now() + 5_000;
    while (sim.requests.count('/assets') === 0 && Date.now() < deadline) await new Promise((r) => setImmediate(r));
    expect(sim.requests.count('/assets'), 'the delayed request reached the simulator').toBe(1);
    const later = await call(sim.url + '/assets?limit=1');
    order.push('later');
    expect(later.status).toBe(200);
    const a = await delayed;
    expect(order).toEqual(['later', 'delayed']);
    expect(a.status).toBe(200);
    expect(a.json).toEqual(later.json);
  });

  it('truncates the JSON body (complete HTTP response, half a body)', async () => {
    sim.faults.add({ path: '/api/v1/positions', truncate: true });
    const a = await call(sim.url + '/api/v1/positions?limit=50');
    expect(a.status).toBe(200);
    expect(a.json).toBeUndefined();
    expect(() => JSON.parse(a.text)).toThrow();
    expect(a.text.startsWith('{"data":[')).toBe(true);
    expect((await call(sim.url + '/api/v1/positions?limit=50')).json.data).toHaveLength(50);
  });

  it('drops the connection mid-body with truncate: socket', async () => {
    sim.faults.add({ path: '/api/v1/positions', truncate: 'socket' });
    await expect(call(sim.url + '/api/v1/positions?limit=50')).rejects.toThrow();
    expect((await call(sim.url + '/api/v1/positions?limit=5')).status).toBe(200);
  });

  it.each([
    ['rename_field', (r: any) => 'valueUsd' in r && !('value_usd' in r) && 'navUsd' in r],
    ['wrong_type', (r: any) => typeof r.value_usd === 'object' && r.value_usd.value !== undefined && typeof r.verified === 'string'],
    ['extra_fields', (r: any) => r.schema_version === 2 && 'value_usd' in r],
  ] as const)('drift %s changes every row of the page', async (drift, check) => {
    sim.faults.add({ path: '/api/v1/positions', drift });
    const a = await call(sim.url + '/api/v1/positions?limit=10');
    expect(a.json.data.every(check)).toBe(true);
    expect(a.json.page_info.has_more).toBe(true);
  });

  it('drifts GraphQL rows and benchmark days too', async () => {
    sim.faults.add({ path: /graphql/, drift: 'rename_field' });
    sim.faults.add({ path: '/api/catalog/*', drift: 'rename_field' });
    const g = await gql(sim, '{ metrics(limit: 2) { market_id borrow_apy } }');
    expect(Object.keys(g.json.data.metrics[0])).toEqual(['marketId', 'borrowApy']);
    const b = await call(sim.catalogUrl + '/api/catalog/historical-benchmarks/base?code=usd&perPage=1');
    expect(Object.keys(b.json.data[0])).toEqual(expect.arrayContaining(['is_complete', 'is_stale']));
  });

  it.each([
    ['bad_value', (r: any) => r.value_usd === 'abc'],
    ['missing_id', (r: any) => !('id' in r)],
  ] as const)('badRow %s breaks exactly one row of the page', async (badRow, broken) => {
    sim.faults.add({ path: '/api/v1/positions', badRow });
    const a = await call(sim.url + '/api/v1/positions?limit=10');
    expect(a.json.data.filter(broken)).toHaveLength(1);
    expect(a.json.data).toHaveLength(10);
  });

  it('repeatCursor makes the page cursor repeat forever until cleared', async () => {
    sim.faults.add({ path: '/api/v1/positions', repeatCursor: true });
    const first = await call(sim.url + '/api/v1/positions?limit=10');
    const cursor = first.json.page_info.next_cursor;
    for (let i = 0; i < 3; i++) {
      const again = await call(`${sim.url}/api/v1/positions?limit=10&next_cursor=${cursor}`);
      expect(again.json.page_info).toEqual({ has_more: true, next_cursor: cursor });
    }
    sim.faults.clear();
    const next = await call(`${sim.url}/api/v1/positions?limit=10&next_cursor=${cursor}`);
    expect(next.json.page_info.next_cursor).not.toBe(cursor);
  });

  it('accepts the snake_case names repeat_cursor and bad_row too', async () => {
    sim.faults.add({ path: '/holdings', repeat_cursor: true, bad_row: 'missing_id', times: 1 });
    const a = await call(sim.url + '/holdings?limit=5&next_cursor=1600000001000');
    expect(a.json.page_info).toEqual({ has_more: true, next_cursor: '1600000001000' });
    expect(a.json.data.filter((r: any) => !('wallet' in r))).toHaveLength(1);
  });

  it('repeatCursor on benchmarks repeats the page number', async () => {
    sim.faults.add({ path: '/api/catalog/*', repeatCursor: true, times: 2 });
    const a = await call(sim.catalogUrl + '/api/catalog/historical-benchmarks/base?code=usd&perPage=10&page=3');
    expect(a.json.nextPage).toBe(3);
  });

  describe('control endpoint', () => {
    it('POST /_sim/faults injects, GET lists, DELETE clears', async () => {
      const post = await call(sim.url + '/_sim/faults', { key: false, body: [{ path: '/holdings', status: 429, retry_after: 5, times: 2 }, { pathRegex: '^/assets$', bad_row: 'missing_id' }] });
      expect(post.status).toBe(201);
      expect(post.json.ids).toHaveLength(2);
      const list = await call(sim.url + '/_sim/faults', { key: false });
      expect(list.json.map((f: any) => f.spec)).toEqual([{ path: '/holdings', status: 429, retryAfter: 5, times: 2 }, { pathRegex: '^\\/assets$', badRow: 'missing_id' }]);
      const h = await call(sim.url + '/holdings');
      expect(h.status).toBe(429);
      expect(h.headers.get('retry-after')).toBe('5');
      expect((await call(sim.url + '/assets?limit=3')).json.data.filter((r: any) => !('position_id' in r))).toHaveLength(1);
      const del = await call(sim.url + '/_sim/faults', { key: false, method: 'DELETE' });
      expect(del.json).toEqual({ cleared: 1 });
      expect((await call(sim.url + '/holdings')).status).toBe(200);
    });

    it.each([
      [{ status: 'x' }, 'status'],
      [{ drift: 'sideways' }, 'drift'],
      [{ pathRegex: '(' }, 'pathRegex'],
      [{ tiems: 2 }, 'tiems'],
      ['[1,', 'JSON'],
    ])('refuses a bad spec %j with 400', async (spec, word) => {
      const res = await fetch(sim.url + '/_sim/faults', { method: 'POST', body: typeof spec === 'string' ? spec : JSON.stringify(spec) });
      expect(res.status).toBe(400);
      expect(((await res.json()) as any).message).toContain(word);
    });

    it('reports request counts and the scenario', async () => {
      await call(sim.url + '/assets?limit=1');
      const r = await call(sim.url + '/_sim/requests', { key: false });
      expect(r.json.counts['GET /assets']).toBe(1);
      const s = await call(sim.url + '/_sim/scenario', { key: false });
      expect(s.json).toMatchObject({ name: 'calm', timeScale: 1, now: T0 });
    });
  });
});

describe('flaky scenario', () => {
  it('answers 429 (with Retry-After) and 500 now and then, and 200 otherwise', async () => {
    const sim = await startSimulator({ scenario: 'flaky', clock: new ManualClock(T0) });
    try {
      const statuses: number[] = [];
      const retryAfters = new Set<string | null>();
      for (let i = 0; i < 35; i++) {
        const a = await call(sim.url + '/holdings?limit=1');
        statuses.push(a.status);
        if (a.status === 429) retryAfters.add(a.headers.get('retry-after'));
      }
      expect(statuses.filter((s) => s === 429)).toHaveLength(7);
      expect(statuses.filter((s) => s === 500)).toHaveLength(4);
      expect(statuses.filter((s) => s === 200)).toHaveLength(24);
      expect([...retryAfters]).toEqual(['1']);
    } finally {
      await sim.close();
    }
  });
});
