import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { startSimulator, type Simulator } from '../src/simulator/index.js';
import { runSimulateCommand } from '../src/simulator/cli.js';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { demoConfigYaml } from '../src/commands/demo-config.js';
import { loadConfigText } from '../src/config/load.js';
import { openStore } from '../src/store/index.js';
import { call, gql, normalize, walk } from './simulator-helpers.js';
import { tempDirs } from './store-helpers.js';

const dirs = tempDirs('lookout-sim-cli-');
afterAll(() => dirs.cleanup());

const T0 = Date.UTC(2026, 2, 10, 12, 0, 0); // a Tuesday noon UTC: today's benchmark day is complete

describe('simulator over HTTP (calm, canonical)', () => {
  let sim: Simulator;
  const clock = new ManualClock(T0);
  beforeAll(async () => {
    sim = await startSimulator({ clock, formats: 'canonical', seed: 7 });
  });
  afterAll(() => sim.close());

  const groups = [
    { name: 'positions', listener: 'url', path: '/api/v1/positions', shape: 'rest' },
    { name: 'assets', listener: 'url', path: '/assets', shape: 'rest' },
    { name: 'holdings', listener: 'url', path: '/holdings', shape: 'rest' },
    { name: 'performance', listener: 'url', path: '/performance', shape: 'rest' },
    { name: 'graphql /yields/graphql', listener: 'url', path: '/yields/graphql', shape: 'graphql' },
    { name: 'graphql /api/graphql', listener: 'url', path: '/api/graphql', shape: 'graphql' },
    { name: 'catalog networks', listener: 'catalogUrl', path: '/api/catalog/networks', shape: 'catalog' },
    { name: 'catalog benchmarks', listener: 'catalogUrl', path: '/api/catalog/historical-benchmarks/base?code=usd', shape: 'catalog' },
    { name: 'unknown path', listener: 'url', path: '/nope', shape: 'rest' },
  ] as const;

  it.each(groups.flatMap((g) => [{ ...g, key: false as const }, { ...g, key: 'wrong-key' }]))('$name answers 401 to key=$key before anything else', async (g) => {
    const isGql = g.shape === 'graphql';
    const a = await call(sim[g.listener] + g.path, { key: g.key, ...(isGql ? { body: { query: '{ nonsense' } } : {}) });
    expect(a.status).toBe(401);
    if (g.shape === 'rest') expect(a.json).toEqual({ error: 'Unauthorized', message: 'API key missing or rejected', statusCode: 401 });
    if (g.shape === 'catalog') expect(a.json).toEqual({ error: 'Unauthorized' });
    if (g.shape === 'graphql') expect(a.json).toEqual({ errors: [{ message: 'API key missing or rejected' }] });
    expect(a.text).not.toContain('sim-key');
  });

  it('accepts the key under any header-name case and records it in the request log', async () => {
    const a = await call(sim.url + '/api/v1/positions?limit=1', { headerName: 'X-Api-KEY' });
    expect(a.status).toBe(200);
    const last = sim.requests.last(1)[0];
    expect(last?.headers['x-api-key']).toBe('sim-key');
    expect(last?.status).toBe(200);
    expect(sim.requests.count('/api/v1/positions', 'GET')).toBeGreaterThan(0);
  });

  it.each([
    { path: '/api/v1/positions', truth: () => sim.world.positionsAt(clock.now()), id: (r: any) => r.id },
    { path: '/assets', truth: () => { const s = sim.world.assetsSource(clock.now()); return Array.from({ length: s.length }, (_, j) => s.row(j)); }, id: (r: any) => `${r.position_id}/${r.type}` },
    { path: '/holdings', truth: () => { const s = sim.world.holdingsSource(clock.now()); return Array.from({ length: s.length }, (_, j) => s.row(j)); }, id: (r: any) => JSON.stringify(r) },
  ])('walks $path to the end over several pages, no duplicates, expected total', async ({ path, truth, id }) => {
    const { rows, pages } = await walk(sim, path, { limit: '37' });
    const expected = truth();
    expect(pages).toBe(Math.ceil(expected.length / 37));
    expect(pages).toBeGreaterThan(3);
    expect(rows.length).toBe(expected.length);
    expect(new Set(rows.map(id)).size).toBe(rows.length);
    expect(rows).toEqual(expected);
  });

  it('filters by chain and snapshot_mode; unknown chain is a 404 with the service error body', async () => {
    const { rows } = await walk(sim, '/api/v1/positions', { chain: 'base', limit: '500' });
    expect(rows.length).toBe(sim.world.positionsAt(clock.now(), { chain: 'base' }).length);
    expect(rows.every((r) => r.chain === 'base')).toBe(true);
    const interaction = await walk(sim, '/api/v1/positions', { snapshot_mode: 'interaction_only', limit: '500' });
    expect(interaction.rows.length).toBeGreaterThan(0);
    expect(interaction.rows.length).toBeLessThan(300);
    const a = await call(sim.url + '/api/v1/positions?chain=atlantis');
    expect(a.status).toBe(404);
    expect(a.json).toMatchObject({ error: 'Not Found', statusCode: 404 });
    expect(typeof a.json.message).toBe('string');
  });

  it('has some unverified positions, all small in the calm world', () => {
    const rows = sim.world.positionsAt(clock.now());
    const unverified = rows.filter((r) => !r.verified);
    expect(unverified.length).toBeGreaterThan(0);
    expect(unverified.every((r) => r.value_usd < 10_000)).toBe(true);
  });

  it.each([
    ['limit=501', 'limit'],
    ['limit=0', 'limit'],
    ['limit=ten', 'limit'],
    ['snapshot_mode=weekly', 'snapshot_mode'],
    ['next_cursor=abc', 'next_cursor'],
  ])('answers 400 to %s', async (q, word) => {
    const a = await call(`${sim.url}/api/v1/positions?${q}`);
    expect(a.status).toBe(400);
    expect(a.json).toMatchObject({ error: 'Bad Request', statusCode: 400 });
    expect(a.json.message).toContain(word);
  });

  it('serves performance between two dates, and 400 on a bad date', async () => {
    const a = await call(`${sim.url}/performance?from=2026-01-01&to=2026-03-01`);
    expect(a.status).toBe(200);
    expect(Object.keys(a.json.data.organization)).toEqual(expect.arrayContaining(['pnl_usd', 'roi', 'twr', 'apr', 'apy']));
    expect(a.json.data.wallets.length).toBeGreaterThan(0);
    expect((await call(`${sim.url}/performance?from=01/01/2026`)).status).toBe(400);
    expect((await call(`${sim.url}/performance?from=2026-03-02&to=2026-03-01`)).status).toBe(400);
  });

  it('lists the catalog networks', async () => {
    const a = await call(sim.catalogUrl + '/api/catalog/networks');
    expect(a.status).toBe(200);
    expect(a.json.map((n: any) => n.name)).toEqual(['arbitrum', 'base', 'gnosis', 'linea', 'mainnet', 'mantle', 'optimism', 'sonic', 'unichain']);
    expect(a.json[4]).toEqual({ name: 'mainnet', chainId: 1, networkCaip: 'eip155:1' });
  });

  it('pages benchmarks with nextPage, oldest first, ending with today', async () => {
    const days: any[] = [];
    let page = 0;
    let pages = 0;
    for (;;) {
      const a = await call(`${sim.catalogUrl}/api/catalog/historical-benchmarks/base?code=eth&perPage=150&page=${page}`);
      expect(a.status).toBe(200);
      expect(a.json.itemsOnPage).toBe(a.json.data.length);
      days.push(...a.json.data);
      pages++;
      if (a.json.nextPage === undefined) break;
      page = a.json.nextPage;
    }
    expect(pages).toBe(3);
    expect(days).toEqual(sim.world.benchmarkDays('base', 'eth', clock.now()));
    const ts = days.map((d) => d.timestamp);
    expect(ts).toEqual([...ts].sort((x, y) => x - y));
    const newest = days[days.length - 1];
    expect(newest.timestamp).toBe(Math.floor(T0 / 86_400_000) * 86_400);
    expect(newest).toMatchObject({ isComplete: true, isStale: false });
    expect(days[0].isStale).toBe(true);
    expect(Object.keys(newest.apy)).toEqual(['1day', '7day', '30day']);
    expect(newest.apy['1day'].total).toBeCloseTo(newest.apy['1day'].base + newest.apy['1day'].reward, 6);
    expect(newest.constituents['1day'][0]).toEqual({ vaultId: expect.stringMatching(/^0x[0-9a-f]{40}$/), slug: expect.any(String), tvlUsd: expect.any(Number), weight: expect.any(Number) });
    // A young network has no 30-day window in its first days.
    const young = await call(`${sim.catalogUrl}/api/catalog/historical-benchmarks/unichain?code=usd&perPage=1`);
    expect(young.json.data[0].apy['30day']).toBeNull();
    expect(young.json.data[0].constituents['30day']).toEqual([]);
  });

  it('filters benchmark days by fromTimestamp/toTimestamp', async () => {
    const to = Math.floor(T0 / 1000);
    const a = await call(`${sim.catalogUrl}/api/catalog/historical-benchmarks/mainnet?code=usd&fromTimestamp=${to - 10 * 86_400}&toTimestamp=${to}`);
    expect(a.json.data.length).toBe(10);
    expect(a.json.nextPage).toBeUndefined();
  });

  it.each([
    ['base?perPage=10', 'code'],
    ['base?code=btc', 'code'],
    ['base?code=usd&perPage=0', 'perPage'],
    ['base?code=usd&perPage=1001', 'perPage'],
    ['base?code=usd&page=-1', 'page'],
    ['atlantis?code=usd', 'network'],
  ])('answers 400 {error, details} to historical-benchmarks/%s', async (q, field) => {
    const a = await call(`${sim.catalogUrl}/api/catalog/historical-benchmarks/${q}`);
    expect(a.status).toBe(400);
    expect(a.json.error).toEqual(expect.any(String));
    expect(a.json.details.map((d: any) => d.field)).toContain(field);
  });

  it('serves the catalog on {base_url} too (one port for the whole interface), and only catalog paths on the catalog listener', async () => {
    const onBase = await call(sim.url + '/api/catalog/networks');
    expect(onBase.status).toBe(200);
    expect(onBase.json).toEqual((await call(sim.catalogUrl + '/api/catalog/networks')).json);
    expect(sim.requests.last(2).map((r) => r.listener)).toEqual(['catalog', 'catalog']);
    // A catalog error keeps the catalog's shape on either port.
    expect((await call(sim.url + '/api/catalog/historical-benchmarks/base')).json).toEqual((await call(sim.catalogUrl + '/api/catalog/historical-benchmarks/base')).json);
    expect((await call(sim.catalogUrl + '/api/v1/positions')).status).toBe(404);
  });

  it('opens no second listener with catalogPort null: {catalog_url} is {base_url}', async () => {
    const one = await startSimulator({ catalogPort: null });
    try {
      expect(one.catalogUrl).toBe(one.url);
      expect((await call(one.url + '/api/catalog/networks')).status).toBe(200);
    } finally {
      await one.close();
    }
  });
});

describe('representation knob', () => {
  it('mixed numbers and times parse to the same values as canonical', async () => {
    const clock = new ManualClock(T0);
    const canonical = await startSimulator({ clock, formats: 'canonical' });
    const mixed = await startSimulator({ clock });
    try {
      const q = '{ metrics(limit: 200, where: {created_at: {_gt: "2026-03-10T11:50:00Z"}}) { id utilization borrow_apy oracle_price service_price total_borrowed total_supplied_usd created_at timestamp oracle_last_update block market { chain loan_asset_decimals } } }';
      const paths = ['/api/v1/positions?limit=100', '/assets?limit=100', '/holdings?limit=100'];
      const pairs = [
        [(await gql(canonical, q)).json, (await gql(mixed, q)).json],
        ...(await Promise.all(paths.map(async (p) => [(await call(canonical.url + p)).json, (await call(mixed.url + p)).json]))),
        [(await call(canonical.catalogUrl + '/api/catalog/historical-benchmarks/base?code=usd')).json, (await call(mixed.catalogUrl + '/api/catalog/historical-benchmarks/base?code=usd')).json],
      ];
      for (const [c, m] of pairs) {
        expect(m).not.toEqual(c);
        expect(normalize(m)).toEqual(normalize(c));
      }
      const metrics: any[] = pairs[0]![1].data.metrics;
      const kinds = new Set(metrics.flatMap((r) => ['created_at', 'timestamp', 'oracle_last_update'].map((f) => (typeof r[f] === 'string' ? 'iso' : r[f] > 1e11 ? 'ms' : 's'))));
      expect(kinds).toEqual(new Set(['iso', 'ms', 's']));
      expect(metrics.some((r) => typeof r.utilization === 'string')).toBe(true);
      expect(metrics.some((r) => typeof r.utilization === 'number')).toBe(true);
    } finally {
      await Promise.all([canonical.close(), mixed.close()]);
    }
  });
});

describe('determinism', () => {
  it('gives the same bytes for the same seed and time, and different bytes for another seed', async () => {
    const clock = new ManualClock(T0);
    const [a, b, c] = await Promise.all([startSimulator({ clock, seed: 3 }), startSimulator({ clock, seed: 3 }), startSimulator({ clock, seed: 4 })]);
    try {
      const read = async (s: Simulator) => [
        (await call(s.url + '/api/v1/positions?limit=500')).text,
        (await call(s.url + '/assets?limit=50&next_cursor=1600000020000')).text,
        (await gql(s, '{ metrics(limit: 100) { id market_id utilization oracle_price created_at market { loan_asset market_address } } }')).text,
        (await call(s.catalogUrl + '/api/catalog/historical-benchmarks/sonic?code=usd&perPage=20')).text,
      ];
      const [ra, rb, rc] = await Promise.all([read(a), read(b), read(c)]);
      expect(ra).toEqual(rb);
      ra!.forEach((text, i) => expect(text).not.toEqual(rc![i]));
    } finally {
      await Promise.all([a.close(), b.close(), c.close()]);
    }
  });
});

describe('scale', () => {
  it('starts with 10,000 markets and 50,000 positions and answers', async () => {
    const clock = new ManualClock(T0);
    const sim = await startSimulator({ clock, markets: 10_000, positions: 50_000 });
    try {
      const g = await gql(sim, '{ metrics(limit: 30000, where: {created_at: {_gt: "2026-03-10T11:57:30Z"}}) { market_id utilization timestamp } }');
      expect(g.json.data.metrics.length).toBe(30_000);
      expect(new Set(g.json.data.metrics.map((r: any) => r.market_id)).size).toBe(10_000);
      const first = await call(sim.url + '/api/v1/positions?limit=500');
      expect(first.json.data.length).toBe(500);
      const tail = await call(`${sim.url}/api/v1/positions?limit=500&next_cursor=${1_600_000_000_000 + 49_800 * 1000}`);
      expect(tail.json.data.length).toBe(199);
      expect(tail.json.page_info.has_more).toBe(false);
      const chain = await call(sim.url + '/assets?limit=500&chain=mainnet&next_cursor=1600030000000');
      expect(chain.json.data.every((r: any) => r.chain === 'mainnet')).toBe(true);
    } finally {
      await sim.close();
    }
  });
});

describe('lookout simulate', () => {
  it('prints one line with both URLs and the key', async () => {
    const lines: string[] = [];
    const sim = (await runSimulateCommand({ scenario: 'demo', seed: 2, write: (l) => lines.push(l) }))!;
    try {
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`base_url=${sim.url}`);
      expect(lines[0]).toContain(`catalog_url=${sim.catalogUrl}`);
      expect(lines[0]).toContain('api_key=sim-key');
      expect(lines[0]).toContain('scenario=demo');
      expect((await call(sim.url + '/api/v1/positions?limit=1')).status).toBe(200);
    } finally {
      await sim.close();
    }
  });

  it('--print-config prints a config that loads and polls this simulator on its one port, and starts nothing', async () => {
    const lines: string[] = [];
    const dir = dirs.make();
    const db = join(dir, 'sim.db');
    expect(await runSimulateCommand({ port: 18123, printConfig: true, db, write: (l) => lines.push(l) })).toBeUndefined();
    expect(lines).toHaveLength(1);
    const config = loadConfigText('printed.yaml', lines[0]!, { env: {} });
    expect(config.source.base_url).toBe('http://127.0.0.1:18123');
    expect(config.source.catalog_url).toBe('http://127.0.0.1:18123');
    expect(config.source.api_key).toBe('sim-key');
    expect(config.storage.path).toBe(db);
    expect(config.storage.retention).toBeGreaterThanOrEqual(7 * 86_400_000);
    expect(config.server.listen).toBe('127.0.0.1:9464');
    // The demo's rules and polls, not a second set.
    const demo = loadConfigText('demo.yaml', demoConfigYaml({ baseUrl: 'http://x', catalogUrl: 'http://x', apiKey: 'k', dbPath: db, listen: '127.0.0.1:1' }), { env: {} });
    expect(config.rules.map((r) => r.rule.name)).toEqual(demo.rules.map((r) => r.rule.name));
    expect(config.polls.map((p) => p.name)).toEqual(demo.polls.map((p) => p.name));
    expect(existsSync(db)).toBe(false);
  });

  it('refuses, before starting anything: --print-config without a fixed port, a bad --history, an existing --db', async () => {
    const dir = dirs.make();
    const existing = join(dir, 'old.db');
    writeFileSync(existing, '');
    await expect(runSimulateCommand({ port: 0, printConfig: true })).rejects.toThrow(/--print-config needs a fixed --port/);
    await expect(runSimulateCommand({ port: 0, history: 'a week', db: join(dir, 'x.db') })).rejects.toThrow(/invalid --history 'a week'/);
    await expect(runSimulateCommand({ port: 0, history: '7d', db: existing })).rejects.toThrow(/old\.db already exists/);
    expect(readdirSync(dir)).toEqual(['old.db']);
  });

  it('--history writes runs of every poll at simulated past times into --db, then serves the present of the same world', async () => {
    const dir = dirs.make();
    const db = join(dir, 'h.db');
    const notes: string[] = [];
    const lines: string[] = [];
    const now = Date.now();
    const sim = (await runSimulateCommand({ port: 0, history: '2h', db, now: () => now, write: (l) => lines.push(l), note: (l) => notes.push(l) }))!;
    try {
      expect(sim.world.scenario.name).toBe('incidents');
      expect(sim.world.startedAt).toBe(now - 7_200_000);
      expect(sim.catalogUrl).toBe(sim.url);
      expect(notes.at(-1)).toMatch(/history written: 19 poll runs, \d+ readings/);
      expect(lines).toHaveLength(1);
      const store = openStore(db, { readonly: true });
      try {
        const runs = store.db.prepare('SELECT poll, min(finished_at) AS first, max(finished_at) AS last, count(*) AS n, sum(ok) AS ok FROM poll_runs GROUP BY poll ORDER BY poll').all();
        // markets every 10 simulated minutes, positions and benchmarks hourly, from the start of the history to now
        expect(runs).toEqual([
          { poll: 'benchmarks', first: now - 7_200_000, last: now, n: 3, ok: 3 },
          { poll: 'markets', first: now - 7_200_000, last: now, n: 13, ok: 13 },
          { poll: 'positions', first: now - 7_200_000, last: now, n: 3, ok: 3 },
        ]);
        // The incidents scenario's first utilization spike (1 h in) is in the stored history.
        const spiked = [...store.readings.iterateHistory(0, now, { kinds: ['market'] })].filter((r) => Number(r.fields.utilization) > 0.95);
        expect(spiked.length).toBeGreaterThan(0);
      } finally {
        store.close();
      }
    } finally {
      await sim.close();
    }
  });

  it('accepts any key when apiKey is null', async () => {
    const sim = await startSimulator({ apiKey: null });
    try {
      expect((await call(sim.url + '/holdings?limit=1', { key: false })).status).toBe(200);
    } finally {
      await sim.close();
    }
  });
});
