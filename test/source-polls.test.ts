import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { silentLogger } from '../src/log.js';
import type { Reading } from '../src/model.js';
import { startSimulator, type Simulator } from '../src/simulator/index.js';
import { createDataServiceClient, type DataServiceClient } from '../src/source/client.js';
import { DataServiceError, failureReason } from '../src/source/errors.js';
import { indexPollKinds, pollKinds, runPoll, type PollContext } from '../src/source/polls/registry.js';
import { pollSchema, pollSchemas, type PollConfig } from '../src/source/polls/schemas.js';
import type { Shard } from '../src/source/shard.js';
import { rawServer, recordingSleep, sourceConfig } from './source-helpers.js';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
const clock = new ManualClock(NOW);
let canonical: Simulator;
let mixed: Simulator;
let cClient: DataServiceClient;
let mClient: DataServiceClient;

const poll = (raw: Record<string, unknown>): PollConfig => pollSchema.parse({ name: 'p', cron: '* * * * *', ...raw });
const ctx = (client: DataServiceClient, over: Partial<PollContext> = {}): PollContext => ({
  client,
  signal: new AbortController().signal,
  now: clock.now(),
  log: silentLogger,
  ...over,
});
const byEntity = (rs: Reading[]) => [...rs].sort((a, b) => a.entity.localeCompare(b.entity));

beforeAll(async () => {
  const opts = { seed: 11, markets: 15, positions: 90, clock, startedAt: NOW - 3_600_000 };
  canonical = await startSimulator({ ...opts, formats: 'canonical' });
  mixed = await startSimulator({ ...opts, formats: 'mixed' });
  cClient = createDataServiceClient(sourceConfig(canonical), { sleep: recordingSleep().sleep });
  mClient = createDataServiceClient(sourceConfig(mixed), { sleep: recordingSleep().sleep });
});
afterAll(async () => {
  await Promise.all([cClient.close(), mClient.close()]);
  await Promise.all([canonical.close(), mixed.close()]);
});

describe('poll kinds registry', () => {
  it('lists the six kinds once each, one per config schema', () => {
    expect(pollKinds.map((k) => k.kind).sort()).toEqual(Object.keys(pollSchemas).sort());
  });

  it('refuses a kind registered twice', () => {
    expect(() => indexPollKinds([pollKinds[0], pollKinds[1], pollKinds[0]])).toThrow(/"metrics" is registered twice/);
  });
});

describe('canonical and mixed formats read the same', () => {
  it.each([
    ['metrics', { kind: 'metrics' }],
    ['positions', { kind: 'positions', params: { limit: 40 } }],
    ['assets', { kind: 'assets' }],
    ['holdings', { kind: 'holdings' }],
    ['performance', { kind: 'performance' }],
    ['benchmarks', { kind: 'benchmarks', networks: ['base', 'mainnet'], lookback: '3d' }],
  ])('%s', async (_name, raw) => {
    const cfg = poll(raw);
    const a = await runPoll(cfg, ctx(cClient));
    const b = await runPoll(cfg, ctx(mClient));
    expect(a.readings.length).toBeGreaterThan(0);
    expect(byEntity(b.readings)).toEqual(byEntity(a.readings));
    expect(b.rejected).toEqual(a.rejected);
  });
});

describe('metrics poll', () => {
  it('one reading per market: the newest row, with exact oracle price and the market labels', async () => {
    const { readings, rejected } = await runPoll(poll({ kind: 'metrics', limit: 5000 }), ctx(mClient));
    expect(rejected).toEqual([]);
    expect(readings.map((r) => r.entity).sort()).toEqual(mixed.world.markets.map((m) => m.marketId).sort());
    const m = mixed.world.markets[0]!;
    const r = readings.find((x) => x.entity === m.marketId)!;
    const newestSec = Math.floor(NOW / 1000);
    const truth = mixed.world.metrics(0, newestSec);
    expect(r.at).toBe(truth.timestamp * 1000);
    expect(r.fields.oracle_price).toBe(truth.oracle_price);
    expect(BigInt(r.fields.oracle_price as string) > BigInt(Number.MAX_SAFE_INTEGER)).toBe(true);
    expect(r.fields.utilization).toBe(truth.utilization);
    expect(r.labels).toEqual({
      market_id: m.marketId,
      chain: truth.market.chain,
      protocol: m.marketId.split('-')[0],
      loan_asset: truth.market.loan_asset_symbol,
      collateral_asset: truth.market.collateral_asset_symbol,
      loan_asset_symbol: truth.market.loan_asset_symbol,
      collateral_asset_symbol: truth.market.collateral_asset_symbol,
    });
  });

  it('with markets listed: one query per market, only those markets', async () => {
    const ids = mixed.world.markets.slice(0, 3).map((m) => m.marketId);
    const before = mixed.requests.count('/yields/graphql');
    const { readings } = await runPoll(poll({ kind: 'metrics', markets: [...ids, 'morpho-base-0xnone'] }), ctx(mClient));
    expect(readings.map((r) => r.entity).sort()).toEqual([...ids].sort());
    expect(mixed.requests.count('/yields/graphql') - before).toBe(4);
  });

  it('asks only for recent rows: created_at _gt the date of now − max(lookback, 1 day), market_id _eq', async () => {
    const bodies: any[] = [];
    const srv = await rawServer((req, res) => {
      let text = '';
      req.on('data', (c) => (text += c));
      req.on('end', () => {
        bodies.push(JSON.parse(text));
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"data":{"metrics":[]}}');
      });
    });
    const c = createDataServiceClient(sourceConfig({ url: srv.url, catalogUrl: srv.url }));
    try {
      await runPoll(poll({ kind: 'metrics', limit: 300 }), ctx(c));
      await runPoll(poll({ kind: 'metrics', lookback: '7d', markets: ['m-1'] }), ctx(c));
      expect(bodies[0].variables).toEqual({ limit: 300, where: { created_at: { _gt: '2026-11-21' } } });
      expect(bodies[1].variables).toEqual({ limit: 1000, where: { created_at: { _gt: '2026-11-15' }, market_id: { _eq: 'm-1' } } });
      expect(bodies[0].query).toMatch(/metrics\(limit: \$limit, where: \$where\)/);
    } finally {
      await c.close();
      await srv.close();
    }
  });

  it('a bad field is unknown for its market and counted as a field rejection; the row and the poll are kept', async () => {
    mixed.faults.add({ path: '/yields/graphql', badRow: 'bad_value' });
    const { readings, rejected } = await runPoll(poll({ kind: 'metrics' }), ctx(mClient));
    const bad = mixed.world.markets[1]!.marketId;
    expect(rejected).toEqual([expect.objectContaining({ reason: 'not_a_number', entity: bad, field: 'utilization' })]);
    expect(readings).toHaveLength(mixed.world.markets.length);
    const fields = readings.find((r) => r.entity === bad)!.fields;
    expect(fields.utilization).toBeNull();
    expect(fields.borrow_apy).toEqual(expect.any(Number));
  });

  it('GraphQL errors fail the run with a SourceError', async () => {
    mixed.faults.add({ path: '/yields/graphql', body: { errors: [{ message: 'boom' }] } });
    const err = await runPoll(poll({ kind: 'metrics' }), ctx(mClient)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DataServiceError);
    expect(failureReason(err)).toBe('graphql');
  });
});

describe('list polls', () => {
  it('positions: every position, entity = id, a bad field unknown and counted, its row kept', async () => {
    const total = mixed.world.positionsSource(NOW).length;
    mixed.faults.add({ path: '/api/v1/positions', badRow: 'bad_value' });
    const { readings, rejected } = await runPoll(poll({ kind: 'positions', params: { limit: 25 } }), ctx(mClient));
    expect(readings).toHaveLength(total);
    expect(rejected).toEqual([expect.objectContaining({ reason: 'not_a_number', field: 'value_usd', entity: expect.stringMatching(/^pos_/), detail: expect.stringContaining('value_usd') })]);
    expect(readings.find((r) => r.entity === rejected[0]!.entity)!.fields.value_usd).toBeNull();
    expect(readings.every((r) => r.entity === r.fields.id && r.labels.position_id === r.entity)).toBe(true);
    expect(new Set(readings.map((r) => r.labels.verified))).toEqual(new Set(['true', 'false']));
  });

  it('wrong types in every row: each field unknown and counted, every position still present (not "all gone")', async () => {
    const total = mixed.world.positionsSource(NOW).length;
    mixed.faults.add({ path: '/api/v1/positions', drift: 'wrong_type' });
    const { readings, rejected } = await runPoll(poll({ kind: 'positions' }), ctx(mClient));
    expect(readings).toHaveLength(total);
    expect(rejected.length).toBeGreaterThan(0);
    expect(rejected.every((r) => r.field !== undefined)).toBe(true);
    const unreadable = new Set(rejected.filter((r) => r.field === 'value_usd').map((r) => r.entity));
    expect(unreadable.size).toBeGreaterThan(0);
    expect(readings.filter((r) => unreadable.has(r.entity)).every((r) => r.fields.value_usd === null)).toBe(true);
  });

  it.each([['rename_field' as const]])('schema drift (%s) of every row fails the run instead of reading as "all gone"', async (drift) => {
    mixed.faults.add({ path: '/api/v1/positions', drift });
    const err = await runPoll(poll({ kind: 'positions' }), ctx(mClient)).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'E_SOURCE_SCHEMA', reason: 'schema' });
    expect((err as Error).message).toMatch(/all \d+ rows failed validation/);
  });

  it('read page by page as one list: a position repeated on a later page keeps its first row, the walk holds no rows', async () => {
    const pages: Record<string, unknown> = {
      '': { data: [{ id: 'p1', chain: 'base', value_usd: 1 }, { id: 'p2', chain: 'base', value_usd: 2 }], page_info: { has_more: true, next_cursor: 'c2' } },
      c2: { data: [{ id: 'p1', chain: 'base', value_usd: 99 }, 7, { id: 'p3', chain: 'eth', value_usd: 3 }], page_info: { has_more: true, next_cursor: 'c3' } },
      c3: { data: [{ id: 'p4', value_usd: 'x' }], page_info: { has_more: false } },
      // A cursor the service repeats: the run fails, nothing of its pages is kept.
      bad: { data: [{ id: 'p9' }], page_info: { has_more: true, next_cursor: 'bad' } },
    };
    const srv = await rawServer((req, res) => {
      const cursor = new URL(req.url ?? '/', 'http://x').searchParams.get('next_cursor') ?? '';
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(pages[cursor === '' && req.url?.includes('wallet=w9') ? 'bad' : cursor]));
    });
    const c = createDataServiceClient(sourceConfig({ url: srv.url, catalogUrl: srv.url }));
    try {
      const { readings, rejected } = await runPoll(poll({ kind: 'positions' }), ctx(c));
      expect(readings.map((r) => [r.entity, r.fields.value_usd])).toEqual([['p1', 1], ['p2', 2], ['p3', 3], ['p4', null]]);
      expect(rejected).toEqual([
        expect.objectContaining({ reason: 'duplicate', entity: 'p1' }),
        expect.objectContaining({ reason: 'missing_id', detail: 'position row that is not an object' }),
        expect.objectContaining({ entity: 'p4', field: 'value_usd' }),
      ]);
      const seen: unknown[][] = [];
      const walk = await c.positions({}, { onPage: (rows) => void seen.push(rows) });
      expect({ pages: walk.pages, rows: walk.rows.length, seen: seen.map((p) => p.length) }).toEqual({ pages: 3, rows: 0, seen: [2, 3, 1] });
      expect((await c.positions({})).rows).toHaveLength(6);
      const err = await runPoll(poll({ kind: 'positions', params: { wallet: 'w9' } }), ctx(c)).catch((e: unknown) => e);
      expect(failureReason(err)).toBe('repeated_cursor');
    } finally {
      await c.close();
      await srv.close();
    }
  });

  it('a repeated cursor fails the run', async () => {
    mixed.faults.add({ path: '/assets', repeatCursor: true });
    const err = await runPoll(poll({ kind: 'assets', params: { limit: 20 } }), ctx(mClient)).catch((e: unknown) => e);
    mixed.faults.clear();
    expect(failureReason(err)).toBe('repeated_cursor');
  });

  it('an aborted run stops with E_SOURCE_ABORTED', async () => {
    const ac = new AbortController();
    ac.abort(new Error('shutting down'));
    const err = await runPoll(poll({ kind: 'positions' }), ctx(mClient, { signal: ac.signal })).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'E_SOURCE_ABORTED', reason: 'aborted' });
  });
});

describe('benchmarks poll', () => {
  it('networks: all asks the catalog first, then one reading per network and code', async () => {
    const before = mixed.requests.count('/api/catalog/networks');
    const { readings } = await runPoll(poll({ kind: 'benchmarks', networks: 'all', codes: ['usd', 'eth'] }), ctx(mClient));
    expect(mixed.requests.count('/api/catalog/networks') - before).toBe(1);
    const expected = mixed.world.networks.flatMap((n) => [`${n.name}/usd`, `${n.name}/eth`]).sort();
    expect(readings.map((r) => r.entity).sort()).toEqual(expected);
  });

  it('the reading is the newest day of the lookback', async () => {
    const { readings } = await runPoll(poll({ kind: 'benchmarks', networks: ['base'], codes: ['usd'], lookback: '5d' }), ctx(mClient));
    const days = (await cClient.benchmarks({ network: 'base', code: 'usd', fromTimestamp: Math.floor((NOW - 5 * 86_400_000) / 1000) })).rows as { timestamp: number; isComplete: boolean }[];
    const newest = days[days.length - 1]!;
    expect(readings).toHaveLength(1);
    expect(readings[0]).toMatchObject({ entity: 'base/usd', labels: { network: 'base', code: 'usd' }, at: newest.timestamp * 1000 });
    expect(readings[0]!.fields).toMatchObject({ day: newest.timestamp * 1000, isComplete: newest.isComplete, days: days.length });
  });
});

describe('shards', () => {
  const shards: Shard[] = [0, 1, 2].map((index) => ({ index, total: 3 }));

  it.each([
    ['metrics', { kind: 'metrics' }],
    ['positions', { kind: 'positions' }],
    ['benchmarks', { kind: 'benchmarks', networks: 'all' }],
  ])('%s: the shards split the entities without overlap or loss', async (_name, raw) => {
    const cfg = poll(raw);
    const whole = await runPoll(cfg, ctx(cClient));
    const parts = await Promise.all(shards.map((shard) => runPoll(cfg, ctx(cClient, { shard }))));
    const entities = parts.flatMap((p) => p.readings.map((r) => r.entity));
    expect(new Set(entities).size).toBe(entities.length);
    expect(entities.sort()).toEqual(whole.readings.map((r) => r.entity).sort());
    expect(parts.every((p) => p.readings.length > 0)).toBe(true);
  });

  it("positions: a wallet's positions stay on one replica", async () => {
    const parts = await Promise.all(shards.map((shard) => runPoll(poll({ kind: 'positions' }), ctx(cClient, { shard }))));
    const owner = new Map<string, number>();
    parts.forEach((p, i) => {
      for (const r of p.readings) {
        const w = r.labels.wallet!;
        expect(owner.get(w) ?? i).toBe(i);
        owner.set(w, i);
      }
    });
  });
});
