import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Reading } from '../src/model.js';
import { openStore, type Store } from '../src/store/index.js';
import { market, reading, tempDirs } from './store-helpers.js';

const dirs = tempDirs();
let store: Store;
beforeEach(() => {
  store = openStore(join(dirs.make(), 'lookout.db'));
});
afterEach(() => {
  store.close();
  dirs.cleanup();
});

describe('savePoll and latest', () => {
  it('stores fields with big decimal strings and nested objects and reads them back identical', () => {
    const r = market('0xabc', 1_700_000_000_123, 0.9512345678901234, {
      oracle_price: '123456789012345678901234567890123456789012',
      nested: { deep: [1, '2', null, { x: -0.000001 }] },
      unicode: 'USD₮ <!channel>',
    });
    expect(store.readings.savePoll('markets', [r], 5)).toEqual({ inserted: 1, latest: 1 });
    expect(store.readings.latest('market', '0xabc')).toEqual(r);
    expect(store.readings.historyAt('market', '0xabc', r.at)).toEqual(r);
  });

  it('keeps one latest per entity (the newest of a batch, the newest poll across batches)', () => {
    store.readings.savePoll('markets', [market('m1', 2000, 0.2), market('m1', 1000, 0.1), market('m2', 1000)], 2000);
    expect(store.readings.latest('market', 'm1')?.fields.utilization).toBe(0.2);
    store.readings.savePoll('markets', [market('m1', 3000, 0.3)], 3000);
    expect(store.readings.latest('market', 'm1')).toMatchObject({ at: 3000, fields: { utilization: 0.3 } });
    expect(store.readings.latestAll('market').map((r) => [r.entity, r.at])).toEqual([
      ['m1', 3000],
      ['m2', 1000],
    ]);
    expect(store.readings.latest('market', 'nope')).toBeUndefined();
    expect(store.readings.latest('position', 'm1')).toBeUndefined();
  });

  it('does not store a (kind, entity, at) twice when polls return the same row again', () => {
    const first = store.readings.savePoll('markets', [market('m1', 1000), market('m2', 1000)], 1000);
    const again = store.readings.savePoll('markets', [market('m1', 1000), market('m2', 2000)], 2000);
    expect(first.inserted).toBe(2);
    expect(again).toEqual({ inserted: 1, latest: 2 });
    expect(store.readings.counts()).toEqual({ latest: { market: 2 }, history: 3, oldestAt: 1000, newestAt: 2000 });
    expect(store.readings.historyRange('market', 'm1', 0, 10_000).map((r) => r.at)).toEqual([1000]);
  });

  it('tracks which poll wrote each entity, and forgets vanished ones', () => {
    store.readings.savePoll('markets', [market('m2', 1000), market('m1', 1000)], 1000);
    store.readings.savePoll('positions', [reading('position', 'p1', 1000, { verified: false })], 1000);
    expect(store.readings.entitiesForPoll('markets')).toEqual([
      { kind: 'market', entity: 'm1' },
      { kind: 'market', entity: 'm2' },
    ]);
    expect(store.readings.latestForPoll('positions').map((r) => r.entity)).toEqual(['p1']);
    expect(store.readings.removeLatest('market', 'm2')).toBe(true);
    expect(store.readings.removeLatest('market', 'm2')).toBe(false);
    expect(store.readings.entitiesForPoll('markets')).toEqual([{ kind: 'market', entity: 'm1' }]);
    // history is kept for windows and backtests
    expect(store.readings.historyAt('market', 'm2', 1000)?.entity).toBe('m2');
  });

  it('saves 10,000 readings in one call, all or nothing', () => {
    const many = Array.from({ length: 10_000 }, (_, i) => market(`m${i}`, 1000 + (i % 7)));
    expect(store.readings.savePoll('markets', many, 2000)).toEqual({ inserted: 10_000, latest: 10_000 });
    const bad = [...many.slice(0, 5000).map((r) => ({ ...r, at: r.at + 1000 })), market('broken', Number.NaN)];
    expect(() => store.readings.savePoll('markets', bad, 3000)).toThrow(/reading market\/broken has a non-finite time/);
    expect(store.readings.counts().history).toBe(10_000);
    expect(store.readings.latest('market', 'm0')?.at).toBe(1000);
  });

  it('keeps labels per history row even though they are stored once per distinct set', () => {
    const a = { ...market('m1', 1000), labels: { chain: 'base', loan_asset: 'USDC' } };
    const b = { ...market('m1', 2000), labels: { chain: 'base', loan_asset: 'USDT' } };
    store.readings.savePoll('markets', [a, b, { ...market('m2', 1000), labels: a.labels }], 2000);
    expect(store.readings.historyRange('market', 'm1', 0, 5000).map((r) => r.labels.loan_asset)).toEqual(['USDC', 'USDT']);
    expect(store.db.prepare('SELECT count(*) AS n FROM reading_labelsets').get()).toEqual({ n: 2 });
  });
});

describe('historyAt', () => {
  beforeEach(() => {
    store.readings.savePoll('markets', [market('m1', 1000, 0.1)], 1000);
    store.readings.savePoll('markets', [market('m1', 2000, 0.2)], 2000);
    store.readings.savePoll('markets', [market('m1', 3000, 0.3), market('m2', 500, 0.9)], 3000);
  });

  it.each([
    ['before any history', 999, undefined],
    ['exactly at the first reading', 1000, 0.1],
    ['between readings', 1999, 0.1],
    ['exactly at a later reading', 2000, 0.2],
    ['after the newest', 1e13, 0.3],
  ])('%s (t=%s)', (_name, t, expected) => {
    expect(store.readings.historyAt('market', 'm1', t)?.fields.utilization).toBe(expected);
  });

  it('looks at one entity and kind only', () => {
    expect(store.readings.historyAt('market', 'm2', 400)).toBeUndefined();
    expect(store.readings.historyAt('market', 'm2', 2500)?.fields.utilization).toBe(0.9);
    expect(store.readings.historyAt('position', 'm1', 5000)).toBeUndefined();
  });

  it('historyRange is inclusive at both ends and oldest first', () => {
    expect(store.readings.historyRange('market', 'm1', 1000, 2000).map((r) => r.at)).toEqual([1000, 2000]);
    expect(store.readings.historyRange('market', 'm1', 1001, 2999).map((r) => r.at)).toEqual([2000]);
    expect(store.readings.historyRange('market', 'm1', 3001, 9000)).toEqual([]);
  });
});

describe('iterateHistory', () => {
  const rows: Reading[] = [
    market('m2', 3000),
    reading('benchmark', 'base/usd', 1000, { days: 7 }),
    market('m1', 1000),
    reading('position', 'p1', 2000, { verified: true }),
    market('m1', 3000),
    market('m2', 1000),
    reading('position', 'p1', 5000, { verified: false }),
  ];
  beforeEach(() => {
    store.readings.savePoll('markets', rows.filter((r) => r.kind === 'market'), 9000);
    store.readings.savePoll('positions', rows.filter((r) => r.kind === 'position'), 9000);
    store.readings.savePoll('benchmarks', rows.filter((r) => r.kind === 'benchmark'), 9000);
  });

  it.each([1, 2, 3, 1000])('yields readings in time order across entities and kinds (page size %s)', (pageSize) => {
    const seen = [...store.readings.iterateHistory(0, 10_000, { pageSize })].map((r) => `${r.at} ${r.kind} ${r.entity} ${r.poll}`);
    expect(seen).toEqual([
      '1000 benchmark base/usd benchmarks',
      '1000 market m1 markets',
      '1000 market m2 markets',
      '2000 position p1 positions',
      '3000 market m1 markets',
      '3000 market m2 markets',
      '5000 position p1 positions',
    ]);
  });

  it('bounds the time range inclusively and filters kinds', () => {
    const seen = [...store.readings.iterateHistory(1000, 3000, { kinds: ['market', 'position'], pageSize: 2 })];
    expect(seen.map((r) => `${r.at} ${r.entity}`)).toEqual(['1000 m1', '1000 m2', '2000 p1', '3000 m1', '3000 m2']);
    expect(seen[0]).toEqual({ ...market('m1', 1000), poll: 'markets', seen_at: 9000 });
    expect([...store.readings.iterateHistory(3001, 4999)]).toEqual([]);
    expect([...store.readings.iterateHistory(0, 9999, { kinds: [] })]).toEqual([]);
  });

  it('leaves the connection free for writes between pages', () => {
    const it = store.readings.iterateHistory(0, 10_000, { pageSize: 2 });
    expect(it.next().value?.entity).toBe('base/usd');
    store.readings.savePoll('markets', [market('m9', 9999)], 9999);
    expect([...it].map((r) => r.entity).at(-1)).toBe('m9');
  });
});

describe('prune', () => {
  it('removes only history older than the cutoff, in batches, and keeps latest', () => {
    const batch = Array.from({ length: 50 }, (_, i) => market(`m${i % 5}`, 1000 + i * 100));
    store.readings.savePoll('markets', batch, 9000);
    // cutoff 3000: at = 1000..2900 (20 rows) go, at = 3000 stays
    expect(store.readings.prune(3000, { batchSize: 7, maxRows: 10 })).toBe(10);
    expect(store.readings.prune(3000, { batchSize: 7 })).toBe(10);
    expect(store.readings.prune(3000)).toBe(0);
    expect(store.readings.counts()).toMatchObject({ history: 30, oldestAt: 3000 });
    expect(store.readings.historyAt('market', 'm0', 2999)).toBeUndefined();
    expect(store.readings.historyAt('market', 'm0', 3000)?.at).toBe(3000);
    expect(store.readings.latestAll('market')).toHaveLength(5);
  });
});
