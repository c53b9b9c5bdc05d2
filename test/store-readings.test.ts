import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Reading } from '../src/model.js';
import { openStore, type Store } from '../src/store/index.js';
import { runSync } from '../src/yielding.js';
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

  it('does not store a reading twice when polls return it again, nor a snapshot that only moved on in time', () => {
    const first = store.readings.savePoll('markets', [market('m1', 1000), market('m2', 1000, 0.5, { timestamp: 1000, block: 6 })], 1000);
    // m1 as it was; m2 with the same values, a newer time, timestamp and block: nothing new to keep.
    const again = store.readings.savePoll('markets', [market('m1', 1000), market('m2', 2000, 0.5, { timestamp: 2000, block: 7 })], 2000);
    expect(first.inserted).toBe(2);
    expect(again).toEqual({ inserted: 0, latest: 2 });
    // The latest reading is the newest stored: a snapshot that only moved on in time keeps the time of its last change.
    expect(store.readings.latest('market', 'm2')).toMatchObject({ at: 1000, fields: { utilization: 0.5, block: 6 } });
    // A changed value is kept, and so is the same value again after it.
    expect(store.readings.savePoll('markets', [market('m2', 3000, 0.6, { timestamp: 3000, block: 8 })], 3000).inserted).toBe(1);
    expect(store.readings.savePoll('markets', [market('m2', 4000, 0.5, { timestamp: 4000, block: 9 })], 4000).inserted).toBe(1);
    expect(store.readings.counts()).toEqual({ latest: { market: 2 }, history: 4, buckets: 0, oldestAt: 1000, newestAt: 4000 });
    expect(store.readings.historyRange('market', 'm2', 0, 10_000).map((r) => [r.at, r.fields.utilization])).toEqual([
      [1000, 0.5],
      [3000, 0.6],
      [4000, 0.5],
    ]);
    // Not a snapshot: a benchmark day with the same values under another time is another day.
    store.readings.savePoll('benchmarks', [reading('benchmark', 'base/usd', 1000, { rate: 0.05 })], 5000);
    expect(store.readings.savePoll('benchmarks', [reading('benchmark', 'base/usd', 2000, { rate: 0.05 })], 6000).inserted).toBe(1);
  });

  it('stores a snapshot again when only a text field, a nested object, a label, a field order or null/undefined changed', () => {
    const base = { wallet: '0xaaa', chain: 'base', value_usd: 10, verified: true, meta: { tier: 1 }, balance: '1000', note: null as unknown };
    const pos = (at: number, change: Record<string, unknown> = {}, labels?: Record<string, string>): Reading => {
      const r = reading('position', 'p1', at, { ...base, ...change });
      return labels ? { ...r, labels } : r;
    };
    let now = 1000;
    const save = (r: Reading) => store.readings.savePoll('positions', [r], (now += 1000)).inserted;
    expect(save(pos(1000))).toBe(1);
    expect(save(pos(2000))).toBe(0);
    expect(save(pos(3000, { wallet: '0xbbb' }))).toBe(1);
    expect(save(pos(4000, { wallet: '0xbbb' }))).toBe(0);
    expect(save(pos(5000, { wallet: '0xbbb', meta: { tier: 2 } }))).toBe(1);
    expect(save(pos(6000, { wallet: '0xbbb', meta: { tier: 2 } }, { entity: 'p1', chain: 'eth' }))).toBe(1);
    expect(save(pos(7000, { wallet: '0xbbb', meta: { tier: 2 }, note: undefined }, { entity: 'p1', chain: 'eth' }))).toBe(1);
    expect(save(pos(8000, { wallet: '0xbbb', meta: { tier: 2 }, note: undefined }, { entity: 'p1', chain: 'eth' }))).toBe(0);
    // The same values in another order: another shape.
    const { balance, ...rest } = { ...base, wallet: '0xbbb', meta: { tier: 2 }, note: undefined };
    expect(save({ ...reading('position', 'p1', 9000, { balance, ...rest }), labels: { entity: 'p1', chain: 'eth' } })).toBe(1);
    // A packed value: a number, a boolean, a decimal string.
    expect(save({ ...reading('position', 'p1', 10_000, { balance: '1001', ...rest }), labels: { entity: 'p1', chain: 'eth' } })).toBe(1);
    expect(save({ ...reading('position', 'p1', 11_000, { balance: '1001', ...rest, verified: false }), labels: { entity: 'p1', chain: 'eth' } })).toBe(1);
    expect(save({ ...reading('position', 'p1', 12_000, { balance: '1001', ...rest, verified: false }), labels: { entity: 'p1', chain: 'eth' } })).toBe(0);
  });

  it("compares a reading with the newest one of the poll's last save: an older time again is stored, a newer one is not", () => {
    const save = (rs: Reading[], now: number) => store.readings.savePoll('markets', rs, now).inserted;
    // Two rows of m1 in one save: the newer one (2000) is what the next save compares with.
    expect(save([market('m1', 2000), market('m1', 1000)], 10_000)).toBe(2);
    expect(save([market('m1', 1000)], 20_000)).toBe(1);
    expect(save([market('m1', 1500)], 30_000)).toBe(0);
    expect(save([market('m1', 1500.5), market('m1', 1400)], 40_000)).toBe(1);
    expect(save([market('m1', 1_700_000_000_123)], 50_000)).toBe(0);
    expect(save([market('m1', 1_700_000_000_122)], 60_000)).toBe(1);
    // Not a snapshot: only the same time is the same reading.
    const day = (at: number, rate = 0.05) => reading('benchmark', 'base/usd', at, { rate });
    expect(store.readings.savePoll('benchmarks', [day(86_400_000)], 70_000).inserted).toBe(1);
    expect(store.readings.savePoll('benchmarks', [day(86_400_000)], 80_000).inserted).toBe(0);
    expect(store.readings.savePoll('benchmarks', [day(2 * 86_400_000)], 90_000).inserted).toBe(1);
    expect(store.readings.savePoll('benchmarks', [day(2 * 86_400_000, 0.06)], 100_000).inserted).toBe(1);
  });

  it('forgets the entities a poll returned before and its save just now did not, but those spared', () => {
    store.readings.savePoll('markets', ['m2', 'm1', 'm3', 'm4'].map((m) => market(m, 1000)), 1000);
    store.readings.savePoll('positions', [reading('position', 'p1', 1000, { verified: false })], 1000);
    // A poll never saved has nothing to forget; one saved, but not since the caches were dropped (a rollback): refused.
    expect(runSync(store.readings.forgetVanishedSteps('benchmarks', () => false))).toBe(0);
    store.readings.forget();
    expect(() => runSync(store.readings.forgetVanishedSteps('markets', () => false))).toThrow(/before a save/);
    const steps = (poll: string, spare: (e: { kind: string; entity: string }) => boolean, pageSize?: number) => {
      const it = store.readings.forgetVanishedSteps(poll, spare, pageSize);
      let pauses = 0;
      for (;;) {
        const r = it.next();
        if (r.done) return { forgotten: r.value, pauses };
        pauses++;
      }
    };
    store.readings.savePoll('markets', [market('m1', 2000), market('m4', 2000)], 2000);
    const spared: string[] = [];
    // A page of one entity at a time: a pause between pages; m3 spared (a rejected row), m2 forgotten, p1 another poll's.
    const r = steps('markets', (e) => (spared.push(`${e.kind}/${e.entity}`), e.entity === 'm3'), 1);
    expect(r).toEqual({ forgotten: 1, pauses: 4 });
    expect(spared.sort()).toEqual(['market/m2', 'market/m3']);
    expect(store.readings.entitiesForPoll('markets').map((e) => e.entity)).toEqual(['m1', 'm3', 'm4']);
    expect(store.readings.latest('market', 'm2')).toBeUndefined();
    expect(store.readings.latest('market', 'm3')?.at).toBe(1000);
    expect(store.readings.entitiesForPoll('positions').map((e) => e.entity)).toEqual(['p1']);
    expect(steps('markets', () => false)).toEqual({ forgotten: 1, pauses: 0 });
    expect(store.readings.entitiesForPoll('markets').map((e) => e.entity)).toEqual(['m1', 'm4']);
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
    // Another poll that returns m1 takes it over; its next save updates that row in place.
    store.readings.savePoll('markets-b', [market('m1', 2000, 0.9)], 2000);
    expect(store.readings.entitiesForPoll('markets')).toEqual([]);
    expect(store.readings.entitiesForPoll('markets-b')).toEqual([{ kind: 'market', entity: 'm1' }]);
    store.readings.savePoll('markets-b', [market('m1', 3000, 0.8)], 3000);
    expect(store.readings.latestForPoll('markets-b').map((r) => [r.entity, r.at, r.fields.utilization])).toEqual([['m1', 3000, 0.8]]);
    // history is kept for windows and backtests
    expect(store.readings.historyAt('market', 'm2', 1000)?.entity).toBe('m2');
    // The first poll returns m1 again, unchanged since its own last save that had it: it takes m1 back all the same.
    store.readings.savePoll('markets', [market('m1', 1000)], 4000);
    store.readings.savePoll('markets', [market('m1', 1000)], 4500);
    expect(store.readings.entitiesForPoll('markets')).toEqual([{ kind: 'market', entity: 'm1' }]);
    expect(store.readings.entitiesForPoll('markets-b')).toEqual([]);
    // And after a restart (nothing remembered), the poll that saves first owns what it returns.
    store.readings.forget();
    store.readings.savePoll('markets-b', [market('m1', 3000, 0.8)], 5000);
    expect(store.readings.entitiesForPoll('markets-b')).toEqual([{ kind: 'market', entity: 'm1' }]);
  });

  it("marks where an entity of a poll's last save is missing from its next one, that poll's only, and stores it afresh when it returns", () => {
    const marks = () =>
      [...store.readings.iterateHistory(0, Number.MAX_SAFE_INTEGER, { vanished: true })].map((r) => [r.poll, r.kind, r.entity, r.seen_at, r.vanished === true]);
    // A position and a market of the same name are two entities.
    store.readings.savePoll('markets', [market('m1', 1000), market('m2', 1000), market('x', 1000)], 1000);
    store.readings.savePoll('positions', [reading('position', 'x', 1000, { verified: false })], 1500);
    store.readings.savePoll('markets', [market('m1', 1000), market('m2', 1000)], 2000);
    store.readings.savePoll('positions', [reading('position', 'x', 1000, { verified: false })], 3000);
    // m2 back with the values it had: its last save did not return it, so it is stored again.
    expect(store.readings.savePoll('markets', [market('m1', 1000), market('m2', 1000)], 4000).inserted).toBe(0);
    expect(store.readings.savePoll('markets', [market('m1', 1000)], 5000).inserted).toBe(0);
    expect(store.readings.savePoll('markets', [market('m1', 1000), market('m2', 1000)], 6000).inserted).toBe(1);
    expect(marks()).toEqual([
      ['markets', 'market', 'm1', 1000, false],
      ['markets', 'market', 'm2', 1000, false],
      ['markets', 'market', 'x', 1000, false],
      ['positions', 'position', 'x', 1500, false],
      ['markets', 'market', 'x', 2000, true],
      ['markets', 'market', 'm2', 5000, true],
      ['markets', 'market', 'm2', 6000, false],
    ]);
  });

  it("stores each save's rows after every row stored before it: two saves in one millisecond, a clock stepped back, a reopened file", () => {
    const seen = () => [...store.readings.iterateHistory(0, Number.MAX_SAFE_INTEGER)].map((r) => [r.entity, r.seen_at]);
    store.readings.savePoll('markets', [market('m2', 1000)], 5000);
    store.readings.savePoll('markets-b', [market('m1', 1000)], 5000); // m1 sorts before m2 in a millisecond: not here
    store.readings.savePoll('markets-c', [market('m3', 1000)], 4000); // the clock stepped back
    expect(seen()).toEqual([['m2', 5000], ['m1', 5001], ['m3', 5002]]);
    const path = store.path;
    store.close();
    store = openStore(path);
    store.readings.savePoll('markets-d', [market('m4', 1000)], 5000);
    expect(seen().at(-1)).toEqual(['m4', 5003]);
  });

  it('saves 10,000 readings in one call, all or nothing', () => {
    const many = Array.from({ length: 10_000 }, (_, i) => market(`m${i}`, 1000 + (i % 7)));
    expect(store.readings.savePoll('markets', many, 2000)).toEqual({ inserted: 10_000, latest: 10_000 });
    const bad = [...many.slice(0, 5000).map((r) => ({ ...r, at: r.at + 1000 })), market('broken', Number.NaN)];
    expect(() => store.readings.savePoll('markets', bad, 3000)).toThrow(/reading market\/broken has a non-finite time/);
    expect(store.readings.counts().history).toBe(10_000);
    expect(store.readings.latest('market', 'm0')?.at).toBe(1000);
  });

  it('keeps labels per history row even though they are stored once per shape', () => {
    const a = { ...market('m1', 1000), labels: { chain: 'base', loan_asset: 'USDC' } };
    const b = { ...market('m1', 2000, 0.6), labels: { chain: 'base', loan_asset: 'USDT' } };
    store.readings.savePoll('markets', [a, b, { ...market('m2', 1000), labels: a.labels }], 2000);
    expect(store.readings.historyRange('market', 'm1', 0, 5000).map((r) => r.labels.loan_asset)).toEqual(['USDC', 'USDT']);
    expect(store.readings.historyAt('market', 'm2', 5000)?.labels).toEqual(a.labels);
    const shapes = () => (store.db.prepare('SELECT count(*) AS n FROM history_shapes').get() as { n: number }).n;
    expect(shapes()).toBe(3);
    // New values under the same labels and keys add rows, not shapes.
    store.readings.savePoll('markets', [{ ...market('m1', 3000, 0.9), labels: b.labels }, { ...market('m2', 3000, 0.9), labels: a.labels }], 3000);
    expect(shapes()).toBe(3);
  });

  it('packs a reading whose labels give no shape key (not all strings) by its own fields, after one whose labels did', () => {
    const a = reading('position', 'p1', 1000, { a: 1, b: 'x', c: '12' });
    const b = { ...reading('position', 'p2', 1000, { b: 2, a: 'y', c: 'z' }), labels: { chain: null as unknown as string } };
    store.readings.savePoll('positions', [a, b, a], 1000);
    expect(store.readings.historyAt('position', 'p2', 5000)).toEqual(b);
    expect(store.readings.historyAt('position', 'p1', 5000)).toEqual(a);
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
  // Stored by three polls at three times; each poll's rows by entity id (the order they were first seen), then time.
  beforeEach(() => {
    store.readings.savePoll('markets', [market('m2', 3000), market('m1', 1000), market('m1', 3000, 0.6)], 4000);
    store.readings.savePoll('positions', [reading('position', 'p1', 2000, { verified: true })], 5000);
    store.readings.savePoll('benchmarks', [reading('benchmark', 'base/usd', 1000, { days: 7 })], 6000);
    store.readings.savePoll('positions', [reading('position', 'p1', 5000, { verified: false })], 7000);
  });
  const order = [
    '4000 3000 market m2 markets',
    '4000 1000 market m1 markets',
    '4000 3000 market m1 markets',
    '5000 2000 position p1 positions',
    '6000 1000 benchmark base/usd benchmarks',
    '7000 5000 position p1 positions',
  ];

  it.each([1, 2, 3, 1000])('yields rows in the order polls stored them (page size %s)', (pageSize) => {
    const seen = [...store.readings.iterateHistory(0, 10_000, { pageSize })].map((r) => `${r.seen_at} ${r.at} ${r.kind} ${r.entity} ${r.poll}`);
    expect(seen).toEqual(order);
  });

  it('bounds the storage time range inclusively and filters kinds', () => {
    const seen = [...store.readings.iterateHistory(4000, 6000, { kinds: ['market', 'position'], pageSize: 2 })];
    expect(seen.map((r) => `${r.seen_at} ${r.entity}`)).toEqual(['4000 m2', '4000 m1', '4000 m1', '5000 p1']);
    expect(seen[1]).toEqual({ ...market('m1', 1000), poll: 'markets', seen_at: 4000 });
    expect([...store.readings.iterateHistory(4001, 4999)]).toEqual([]);
    expect([...store.readings.iterateHistory(0, 9999, { kinds: [] })]).toEqual([]);
  });

  it('leaves the connection free for writes between pages', () => {
    const it = store.readings.iterateHistory(0, 10_000, { pageSize: 2 });
    expect(it.next().value?.entity).toBe('m2');
    store.readings.savePoll('markets', [market('m9', 9999)], 9999);
    expect([...it].map((r) => r.entity).at(-1)).toBe('m9');
  });
});

describe('prune', () => {
  it("keeps an entity's newest reading when the sealed hour chunk holding it is pruned", () => {
    const H = 10 * 3_600_000;
    store.readings.savePoll('markets', [market('m1', H + 60_000, 0.4), market('m2', H + 60_000, 0.5)], H + 65_000);
    store.readings.savePoll('markets', [market('m1', H + 120_000, 0.41), market('m2', H + 60_000, 0.5)], H + 125_000);
    // Folded and sealed: the raw rows are gone, the hour is one chunk per entity.
    store.readings.downsample(H + 5 * 3_600_000);
    expect(store.db.prepare('SELECT count(*) AS n FROM reading_bucket_chunks').get()).toEqual({ n: 2 });
    expect(store.readings.counts()).toMatchObject({ history: 0 });
    expect(store.readings.prune(H + 6 * 3_600_000)).toBe(2);
    expect(store.readings.counts()).toMatchObject({ history: 0, buckets: 0 });
    expect(store.readings.latest('market', 'm1')).toMatchObject({ at: H + 120_000, fields: { utilization: 0.41 } });
    expect(store.readings.latest('market', 'm2')).toMatchObject({ at: H + 60_000, fields: { utilization: 0.5 } });
    expect(store.readings.latest('market', 'm1')).not.toHaveProperty('bucket');
  });

  it("keeps an entity's newest reading while a poll returns it, from raw rows and from buckets, until history has a newer one or it vanished", () => {
    const poll = (now: number, rows: Reading[]) => store.readings.savePoll('markets', rows, now);
    // m1 changes at 1000 and 2000, then stays as it was; m2 changes at 1000 only; m3 vanishes at 3000.
    poll(1000, [market('m1', 1000, 0.1), market('m2', 1000, 0.5), market('m3', 1000, 0.7)]);
    poll(2000, [market('m1', 2000, 0.2), market('m2', 2000, 0.5), market('m3', 2000, 0.7)]);
    poll(3000, [market('m1', 3000, 0.2), market('m2', 3000, 0.5)]);
    store.readings.removeLatest('market', 'm3');
    expect(store.readings.prune(10_000, { batchSize: 2 })).toBe(5); // 4 readings (the rest did not change) and m3's vanished mark
    expect(store.readings.counts().history).toBe(0);
    expect(store.readings.latest('market', 'm1')).toMatchObject({ at: 2000, fields: { utilization: 0.2 } });
    expect(store.readings.latest('market', 'm2')).toMatchObject({ at: 1000, fields: { utilization: 0.5 } });
    expect(store.readings.latest('market', 'm3')).toBeUndefined();
    const kept = () => (store.db.prepare('SELECT count(*) AS n FROM latest_kept').get() as { n: number }).n;
    expect(kept()).toBe(2);
    // m1 moves again: history has a newer reading, and the next prune drops the kept one.
    poll(12_000, [market('m1', 12_000, 0.3), market('m2', 12_000, 0.5)]);
    expect(store.readings.latest('market', 'm1')?.fields.utilization).toBe(0.3);
    store.readings.prune(11_000);
    expect(kept()).toBe(1);
    // From buckets: m1's rows folded, then the buckets pruned; the newest bucket's last reading is kept.
    poll(13_000, [market('m1', 13_000, 0.4), market('m2', 13_000, 0.5)]);
    store.readings.downsample(20_000);
    expect(store.readings.counts()).toMatchObject({ history: 0 });
    // Its latest reading is now the newest bucket's last one, as it was saved: without the bucket's extremes.
    expect(store.readings.latest('market', 'm1')).toEqual(market('m1', 13_000, 0.4));
    expect(store.readings.prune(Number.MAX_SAFE_INTEGER)).toBeGreaterThan(0);
    expect(store.readings.counts()).toMatchObject({ history: 0, buckets: 0 });
    expect(store.readings.latest('market', 'm1')).toMatchObject({ at: 13_000, fields: { utilization: 0.4 } });
    expect(store.readings.latest('market', 'm1')).not.toHaveProperty('bucket');
    expect(store.readings.latest('market', 'm2')).toMatchObject({ at: 1000, fields: { utilization: 0.5 } });
    // Its shape is still needed.
    expect(store.readings.pruneShapes()).toBe(0);
    expect(store.readings.latestAll('market').map((r) => r.entity)).toEqual(['m1', 'm2']);
    // Once no poll returns it, its kept reading goes with it.
    expect(store.readings.removeLatest('market', 'm2')).toBe(true);
    expect(store.readings.latest('market', 'm2')).toBeUndefined();
    expect(kept()).toBe(1);
  });

  it('takes as latest the newest of raw rows and buckets, by time: a raw row newer than a bucket, a bucket newer than a late raw row', () => {
    store.readings.savePoll('markets', [market('m1', 1000, 0.1)], 1000);
    store.readings.downsample(1500);
    store.readings.savePoll('markets', [market('m1', 2000, 0.2)], 2000);
    expect(store.readings.counts()).toMatchObject({ history: 1, buckets: 1 });
    expect(store.readings.latest('market', 'm1')).toEqual(market('m1', 2000, 0.2));
    store.readings.savePoll('markets', [market('m1', 4000, 0.4)], 4000);
    store.readings.downsample(4500);
    // Stored late, with an older time than the bucket's last reading.
    store.readings.savePoll('markets', [market('m1', 3000, 0.3)], 5000);
    expect(store.readings.counts()).toMatchObject({ history: 1, buckets: 1 });
    expect(store.readings.latest('market', 'm1')).toEqual(market('m1', 4000, 0.4));
  });

  it('removes only history stored before the cutoff, in batches, and keeps latest', () => {
    for (let i = 0; i < 10; i++) {
      store.readings.savePoll('markets', Array.from({ length: 5 }, (_, m) => market(`m${m}`, 1000 + i * 100, 0.1 + i / 100)), 1000 + i * 100);
    }
    // cutoff 1400: the polls stored at 1000..1300 (20 rows) go, the one at 1400 stays
    expect(store.readings.prune(1400, { batchSize: 7, maxRows: 10 })).toBe(10);
    expect(store.readings.prune(1400, { batchSize: 7 })).toBe(10);
    expect(store.readings.prune(1400)).toBe(0);
    expect(store.readings.counts()).toMatchObject({ history: 30, oldestAt: 1400 });
    expect(store.readings.historyAt('market', 'm0', 1399)).toBeUndefined();
    expect(store.readings.historyAt('market', 'm0', 1400)?.at).toBe(1400);
    expect(store.readings.latestAll('market')).toHaveLength(5);
  });
});
