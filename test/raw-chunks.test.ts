/**
 * Full-resolution history sealed in hourly chunks (src/store/raw-chunks.ts, src/store/raw-store.ts): the chunk form
 * packed and read back exactly, what it refuses; and a store whose past hours are sealed (one of them twice: rows
 * stored after it was sealed) answering every read exactly as its twin that keeps every row in `reading_history` —
 * point reads, ranges (with asOf), storage order with vanished markers, the look-back memo's questions, counts, the
 * latest readings — before and after a fold into buckets and a prune that each cut through a chunk.
 */
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { Reading } from '../src/model.js';
import { chunkStart, CHUNK_MS } from '../src/store/chunk-form.js';
import type { HistoryChanges, HistoryRowKey } from '../src/store/history-changes.js';
import type { Store } from '../src/store/index.js';
import { decodeRawChunk, encodeRawChunk, openRawChunk, type RawEntry } from '../src/store/raw-chunks.js';
import { createRawStore, type RawRow } from '../src/store/raw-store.js';
import { openStore } from '../src/store/index.js';
import { HOUR, market, MIN, tempDirs, tempStore } from './alerts-helpers.js';

const H = Date.UTC(2025, 2, 3, 8);
const dirs = tempDirs();
afterAll(() => dirs.cleanup());

const entry = (seen: number, at: number, poll: number, shape: number, vals: number[]): RawEntry => ({ seen_at: seen, at, poll, shape, vals: Uint8Array.from(vals) });
const plainOf = (e: RawEntry) => ({ seen_at: e.seen_at, at: e.at, poll: e.poll, shape: e.shape, vals: Buffer.from(e.vals).toString('hex') });

describe('a raw chunk packed and read back', () => {
  it('gives back every row exactly: times before and after their storage, ids, values (vanished markers with none)', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 0, max: CHUNK_MS - 1 }), { minLength: 1, maxLength: 40 }),
        fc.array(fc.tuple(fc.integer({ min: -2 * HOUR, max: HOUR }), fc.nat(5), fc.nat(300), fc.uint8Array({ maxLength: 120 }))),
        (offsets, rest) => {
          const entries = [...offsets]
            .sort((a, b) => a - b)
            .map((o, i) => {
              const [dt, poll, shape, vals] = rest[i % Math.max(1, rest.length)] ?? [0, 1, 2, new Uint8Array()];
              return { seen_at: H + o, at: H + o + dt, poll, shape, vals: shape === 0 ? new Uint8Array() : vals };
            });
          const data = encodeRawChunk(entries);
          expect(decodeRawChunk(data, entries[0]!.seen_at).map(plainOf)).toEqual(entries.map(plainOf));
        },
      ),
    );
  });

  it('is deflated where that is smaller, plain where not', () => {
    const same = Array.from({ length: 100 }, (_, i) => entry(H + i * 30_000, H + i * 30_000 - 5_000, 1, 7, [0x14, 0x80, 0x01, 0x33, 0x44, 0x55]));
    const big = encodeRawChunk(same);
    expect(big[0]).toBe(1);
    expect(decodeRawChunk(big, H).map(plainOf)).toEqual(same.map(plainOf));
    const one = encodeRawChunk([entry(H, H, 1, 7, [0x14])]);
    expect(one[0]).toBe(0);
    expect(openRawChunk(one, H).n).toBe(1);
  });

  it('refuses rows out of storage order, rows of another hour, no rows, and a chunk whose lengths do not add up', () => {
    expect(() => encodeRawChunk([])).toThrow(/needs a row/);
    expect(() => encodeRawChunk([entry(H + 10, H, 1, 7, [1]), entry(H + 5, H, 1, 7, [1])])).toThrow(/order or hour/);
    expect(() => encodeRawChunk([entry(H + 10, H, 1, 7, [1]), entry(H + 10, H, 1, 7, [2])])).toThrow(/order or hour/);
    expect(() => encodeRawChunk([entry(H, H, 1, 7, [1]), entry(H + CHUNK_MS, H, 1, 7, [1])])).toThrow(/order or hour/);
    const data = encodeRawChunk([entry(H, H, 1, 7, [1, 2, 3])]);
    expect(() => openRawChunk(data.subarray(0, data.length - 1), H)).toThrow(/do not match/);
    expect(() => openRawChunk(Buffer.of(9, 1), H)).toThrow(/unknown form/);
  });
});

/** Three markets (m2's labels change in hour 2, m3 vanishes for a while) every 2 minutes, a position every 5 with times going back. */
function pollsBetween(store: Store, from: number, to: number): void {
  for (let t = from; t < to; t += 2 * MIN) {
    const k = Math.floor((t - H) / MIN);
    const u = (e: number) => Math.round((0.5 + 0.4 * Math.sin(t / 7e5 + e)) * 1e6) / 1e6;
    const markets: Reading[] = [1, 2, 3]
      .filter((e) => e !== 3 || k < 50 || k > 90)
      .map((e) => {
        const m = market(`m${e}`, t, { utilization: k % 10 === 4 ? u(e + 0.001) : u(e), total_borrowed: `${Math.round(u(e) * 1e6)}000000000000`, timestamp: t, block: t / 2000 });
        return e === 2 && k > 70 ? { ...m, labels: { ...m.labels, chain: 'mainnet' } } : m;
      });
    store.readings.savePoll('markets', markets, t + 2_000);
    if (k % 5 === 0) {
      const at = k % 35 === 0 ? t - 40 * MIN : t - 20_000;
      store.readings.savePoll('positions', [{ kind: 'position', entity: 'p1', at, labels: { wallet: '0xw' }, fields: { value_usd: u(9) * 1000, balance: `${k}000000000` } }], t + 3_000);
    }
    // A revision of m1's reading of this time, from another poll.
    if (k % 24 === 6) store.readings.savePoll('markets-b', [market('m1', t, { utilization: 0.123, timestamp: t })], t + 4_000);
  }
}

const KEYS = [['market', 'm1'], ['market', 'm2'], ['market', 'm3'], ['position', 'p1'], ['market', 'nobody']] as const;
const GRID = Array.from({ length: 60 }, (_, i) => H - 50 * MIN + i * (4 * MIN + 13_000));

/** Everything a reader of history can ask, as plain data. */
function answers(store: Store, marker: HistoryRowKey | undefined) {
  const changes = store.readings.historyChanges();
  const r = store.readings;
  return {
    at: KEYS.flatMap(([k, e]) => GRID.flatMap((t) => [r.historyAt(k, e, t), r.historyAt(k, e, t, H + 80 * MIN), r.historyAt(k, e, t, t - 1_000)])),
    range: KEYS.flatMap(([k, e]) => GRID.flatMap((t) => [r.historyRange(k, e, t, t + 25 * MIN), r.historyRange(k, e, t - HOUR, t, H + 100 * MIN)])),
    all: [...r.iterateHistory(0, Number.MAX_SAFE_INTEGER, { vanished: true, pageSize: 7 })],
    some: [...r.iterateHistory(H + 37 * MIN + 1, H + 2 * HOUR + 3 * MIN, { kinds: ['position', 'market'], vanished: true })],
    positions: [...r.iterateHistory(H + 20 * MIN, H + 3 * HOUR, { kinds: ['position'] })],
    buckets: [...r.iterateBuckets(0, Number.MAX_SAFE_INTEGER)],
    counts: r.counts(),
    rawSince: r.rawSince(),
    latest: KEYS.map(([k, e]) => r.latest(k, e)),
    latestAll: r.latestAll('market'),
    last: changes.last(),
    oldest: changes.oldestSeen(),
    has: marker && changes.has(marker),
    since: changes.since(marker, 'market', Number.MAX_SAFE_INTEGER),
    sincePositions: changes.since(marker, 'position', H + 2 * HOUR),
    next: KEYS.flatMap(([k, e]) => GRID.map((t) => changes.nextAt(k, e, t))),
  };
}

describe('history sealed in hourly chunks', () => {
  const plain = tempStore(dirs, 'plain.db');
  const sealed = tempStore(dirs, 'sealed.db');
  let marker: HistoryRowKey | undefined;
  const chunks = () => sealed.db.prepare(`SELECT entity, first, n FROM reading_history_chunks ORDER BY entity, first`).all() as Array<{ entity: number; first: number; n: number }>;
  const head = (s: Store) => (s.db.prepare(`SELECT count(*) AS n FROM reading_history`).get() as { n: number }).n;

  it('answers every read as the same history kept row by row', () => {
    for (const s of [plain, sealed]) pollsBetween(s, H + 30_000, H + 2 * HOUR + 20 * MIN);
    marker = plain.readings.historyChanges().last();
    // An hour is sealed once it is over by 10 minutes: at 10:05 the first, at 10:10 the second; the third goes on in the head.
    const first = sealed.readings.sealHistory(H + 2 * HOUR + 5 * MIN);
    expect(new Set(chunks().map((c) => chunkStart(c.first)))).toEqual(new Set([H]));
    const n = first + sealed.readings.sealHistory(H + 2 * HOUR + 10 * MIN, { batchSize: 30, maxRows: 1_000 });
    expect(n).toBeGreaterThan(100);
    expect(head(sealed)).toBe(head(plain) - n);
    expect(new Set(chunks().map((c) => chunkStart(c.first)))).toEqual(new Set([H, H + HOUR]));
    // Then everything, the current hour too (as migration 12 does), and rows stored after that into the same hour.
    sealed.readings.sealHistory(Number.MAX_SAFE_INTEGER);
    expect(head(sealed)).toBe(0);
    for (const s of [plain, sealed]) pollsBetween(s, H + 2 * HOUR + 20 * MIN + 30_000, H + 3 * HOUR + 30 * MIN);
    expect(answers(sealed, marker)).toEqual(answers(plain, marker));
    sealed.readings.sealHistory(H + 4 * HOUR + 10 * MIN);
    expect(head(sealed)).toBe(0);
    // The third hour of each entity in two chunks: sealed, then its late rows.
    const third = chunks().filter((c) => chunkStart(c.first) === H + 2 * HOUR);
    expect(third.length).toBe(2 * new Set(third.map((c) => c.entity)).size);
    expect(answers(sealed, marker)).toEqual(answers(plain, marker));
  });

  it('reads sealed hours in pages of any size and in many short spans of storage time, in the same order', () => {
    const plainRows = (rows: RawRow[]) => rows.map((r) => ({ seen_at: r.seen_at, entity: r.entity, at: r.at, poll: r.poll, shape: r.shape, vals: Buffer.from(r.vals).toString('hex') }));
    const read = (s: Store, from: number, to: number, limit: number) => [...createRawStore(s.db).iterate(from, to, limit)].flat();
    const want = plainRows(read(plain, 0, Number.MAX_SAFE_INTEGER, 5));
    for (const limit of [1, 2, 5, 1_000]) expect(plainRows(read(sealed, 0, Number.MAX_SAFE_INTEGER, limit))).toEqual(want);
    // Spans of 7 minutes (a chunk's hour in nine and a bit), then spans of 1 s across an hour's end.
    const spans = (width: number, from: number, to: number) => {
      const out: RawRow[] = [];
      for (let t = from; t <= to; t += width) out.push(...read(sealed, t, Math.min(to, t + width - 1), 3));
      return plainRows(out);
    };
    const seens = want.map((r) => r.seen_at);
    const first = Math.min(...seens);
    const last = Math.max(...seens);
    expect(spans(7 * MIN, first, last)).toEqual(want);
    const around = want.filter((r) => r.seen_at >= H + HOUR - 5 * MIN && r.seen_at <= H + HOUR + 5 * MIN);
    expect(around.length).toBeGreaterThan(10);
    expect(spans(1_000, H + HOUR - 5 * MIN, H + HOUR + 5 * MIN)).toEqual(around);
  });

  it('folds sealed hours into buckets whole (a cutoff inside an hour leaves it for later), as rows kept one by one fold at the hour: the same answers, the newest reading kept', () => {
    // The cutoff is 10 minutes into the second hour: the sealed store folds the first hour only (cutting the second
    // would re-encode every entity's chunk of it on each call); its twin, cut at that hour's start, answers the same.
    const cut = H + 70 * MIN + 7_000;
    expect(sealed.readings.downsample(cut, { batchSize: 50 }).rows).toBeGreaterThan(0);
    expect(plain.readings.downsample(chunkStart(cut), { batchSize: 50 }).rows).toBeGreaterThan(0);
    expect(answers(sealed, marker)).toEqual(answers(plain, marker));
    // Folding past the hour's end takes the rest, as it does rows.
    for (const s of [plain, sealed]) s.readings.downsample(H + 2 * HOUR);
    expect(answers(sealed, marker)).toEqual(answers(plain, marker));
    // m3 vanished at 08:52 and p1's newest is older than the cut: their latest readings are kept.
    for (const s of [plain, sealed]) s.readings.prune(H + 2 * HOUR, { batchSize: 40 });
    expect(answers(sealed, marker)).toEqual(answers(plain, marker));
    for (const s of [plain, sealed]) s.readings.prune(H + 5 * HOUR);
    expect(answers(sealed, marker)).toEqual(answers(plain, marker));
    expect(chunks()).toEqual([]);
    expect(sealed.readings.latest('market', 'm1')).toBeDefined();
    expect(sealed.readings.pruneShapes()).toBe(plain.readings.pruneShapes());
  });
});

describe('an hour in which every entity stored a row at every poll (its chunks in step)', () => {
  it('reads as the same rows kept one by one: in storage order, each page one storage time, in pages of any size and short spans', () => {
    // Five markets whose values move every poll, polled every 2 minutes of one hour (given out of entity order); the
    // same hour with one market unchanged at one poll (no row stored); and with that market's row of another poll
    // stored at another time as well (as many rows as the others, at other storage times). The last two are not in
    // step: grouped by storage time. And the first hour with a poll stored into it after it was sealed (late rows in
    // the head): grouped too.
    const fill = (s: Store, variant: 'moving' | 'same' | 'other' | 'late') => {
      for (let k = 0; k < 30; k++) {
        const t = H + k * 2 * MIN;
        const markets = [5, 3, 1, 4, 2].map((e) => market(`m${e}`, t - e * 1_000, { utilization: (((variant === 'same' || variant === 'other') && e === 4 && k === 17 ? k - 1 : k) * 7 + e) / 1_000 }));
        s.readings.savePoll('markets', markets, t + 1_000);
        if (variant === 'other' && k === 20) s.readings.savePoll('markets-b', [market('m4', t, { utilization: 0.9 })], t + 30_000);
      }
    };
    const plainRows = (rows: RawRow[]) => rows.map((r) => ({ seen_at: r.seen_at, entity: r.entity, at: r.at, poll: r.poll, shape: r.shape, vals: Buffer.from(r.vals).toString('hex') }));
    for (const variant of ['moving', 'same', 'other', 'late'] as const) {
      const plain = tempStore(dirs, `step-plain-${variant}.db`);
      const sealed = tempStore(dirs, `step-sealed-${variant}.db`);
      for (const s of [plain, sealed]) fill(s, variant);
      sealed.readings.sealHistory(Number.MAX_SAFE_INTEGER);
      if (variant === 'late') for (const s of [plain, sealed]) s.readings.savePoll('markets', [5, 3, 1, 4, 2].map((e) => market(`m${e}`, H + 59 * MIN, { utilization: e / 100 })), H + 59 * MIN + 1_000);
      expect((sealed.db.prepare(`SELECT count(*) AS n FROM reading_history`).get() as { n: number }).n).toBe(variant === 'late' ? 5 : 0);
      const pages = (s: Store, from: number, to: number, limit: number) => [...createRawStore(s.db).iterate(from, to, limit)];
      const want = plainRows(pages(plain, 0, Number.MAX_SAFE_INTEGER, 1_000).flat());
      expect(want.length).toBe({ moving: 150, same: 149, other: 150, late: 155 }[variant]);
      for (const limit of [1, 2, 3, 5, 1_000]) {
        const got = pages(sealed, 0, Number.MAX_SAFE_INTEGER, limit);
        expect(plainRows(got.flat())).toEqual(want);
        for (const page of got) {
          expect(page.length).toBeLessThanOrEqual(limit);
          expect(new Set(page.map((r) => r.seen_at)).size).toBe(1);
        }
        // A page is full unless it ends its storage time.
        for (let i = 0; i + 1 < got.length; i++) if (got[i]![0]!.seen_at === got[i + 1]![0]!.seen_at) expect(got[i]!.length).toBe(limit);
      }
      // Spans of storage time that cut polls apart (7 minutes, then a few seconds around one poll).
      const spans = (width: number, from: number, to: number) => {
        const out: RawRow[] = [];
        for (let t = from; t <= to; t += width) out.push(...pages(sealed, t, Math.min(to, t + width - 1), 2).flat());
        return plainRows(out);
      };
      expect(spans(7 * MIN, H, H + HOUR - 1)).toEqual(want);
      const around = want.filter((r) => r.seen_at >= H + 34 * MIN && r.seen_at <= H + 34 * MIN + 1_000);
      expect(around.length).toBe(variant === 'same' || variant === 'other' ? 4 : 5);
      expect(spans(500, H + 34 * MIN, H + 34 * MIN + 1_000)).toEqual(around);
      expect([...sealed.readings.iterateHistory(0, Number.MAX_SAFE_INTEGER)]).toEqual([...plain.readings.iterateHistory(0, Number.MAX_SAFE_INTEGER)]);
      plain.close();
      sealed.close();
    }
  });
});

describe('rows of one storage time in two chunks of an entity', () => {
  it('come out in storage order: by entity, then time, then poll', () => {
    const store = tempStore(dirs, 'twice.db');
    store.readings.savePoll('markets', [market('m1', H + 5_000, { utilization: 0.5 }), market('m2', H + 5_000, { utilization: 0.6 })], H + 10_000);
    store.readings.sealHistory(Number.MAX_SAFE_INTEGER);
    // Another writer's row of the same storage time and entity, with an earlier time: sealed into a second chunk.
    const m1 = store.readings.entityId('market', 'm1')!;
    const row = [...createRawStore(store.db).iterate(0, Number.MAX_SAFE_INTEGER, 10)].flat().find((r) => r.entity === m1)!;
    store.db.prepare(`INSERT INTO reading_history (seen_at, entity, at, poll, shape, vals) VALUES (?, ?, ?, ?, ?, ?)`).run(row.seen_at, m1, row.at - 1_000, row.poll, row.shape, Buffer.from(row.vals));
    store.readings.sealHistory(Number.MAX_SAFE_INTEGER);
    expect((store.db.prepare(`SELECT count(*) AS n FROM reading_history_chunks`).get() as { n: number }).n).toBe(3);
    const order = [...store.readings.iterateHistory(0, Number.MAX_SAFE_INTEGER)].map((r) => `${r.entity}@${r.at - H}`);
    expect(order).toEqual(['m1@4000', 'm1@5000', 'm2@5000']);
    store.close();
  });

  it('after a restart whose history is all sealed: the newest reading is found in chunks past vanished markers, and a save stores after it', () => {
    const path = join(dirs.make(), 'restart.db');
    let store = openStore(path);
    store.readings.savePoll('markets', [market('m1', H + 5_000, { utilization: 0.5 }), market('m2', H + 5_000, { utilization: 0.6 })], H + 10_000);
    // m2 missing from the next poll: a vanished marker is the newest row.
    store.readings.savePoll('markets', [market('m1', H + 5_000, { utilization: 0.5 })], H + 20_000);
    store.readings.sealHistory(Number.MAX_SAFE_INTEGER);
    const changes = store.readings.historyChanges();
    expect(changes.last()).toMatchObject({ seen_at: H + 10_000, entity: store.readings.entityId('market', 'm2') });
    store.close();
    // A clock stepped back: the save is still stored after every row before it.
    store = openStore(path);
    store.readings.savePoll('markets', [market('m1', H + 6_000, { utilization: 0.7 })], H);
    const all = [...store.readings.iterateHistory(0, Number.MAX_SAFE_INTEGER, { vanished: true })];
    expect(all.map((r) => `${r.entity}@${r.seen_at - H}${r.vanished ? ' vanished' : ''}`)).toEqual(['m1@10000', 'm2@10000', 'm2@20000 vanished', 'm1@20001']);
    store.close();
  });
});

describe('the newest row while a seal bounded by its row limit is part done', () => {
  it('is the sealed one when the head keeps only older rows of entities not sealed yet', () => {
    const store = tempStore(dirs, 'part-sealed.db');
    store.readings.savePoll('a', [market('m1', H + 1_000, { utilization: 0.5 })], H + 2_000);
    store.readings.savePoll('b', [market('m2', H + 3_000, { utilization: 0.6 })], H + 4_000);
    store.readings.savePoll('a', [market('m1', H + 5_000, { utilization: 0.7 })], H + 6_000);
    // m1 has the oldest row: its rows (the newest one too) are sealed first, and the limit stops the seal there.
    store.readings.sealHistory(H + 2 * HOUR, { batchSize: 1, maxRows: 1 });
    const head = store.db.prepare(`SELECT seen_at FROM reading_history`).all() as Array<{ seen_at: number }>;
    expect(head.map((r) => r.seen_at - H)).toEqual([4_000]);
    const changes = store.readings.historyChanges();
    expect(changes.last()).toEqual({ seen_at: H + 6_000, entity: store.readings.entityId('market', 'm1'), at: H + 5_000, poll: expect.any(Number) });
    store.close();
  });
});

describe("an entity's kept latest reading and a revision of its time sealed since", () => {
  it('is dropped where the revision is newer, kept where the kept one is still the newest', () => {
    const store = tempStore(dirs, 'kept.db');
    const kept = () => (store.db.prepare(`SELECT entity, seen_at - ${H} AS seen, at - ${H} AS at FROM latest_kept ORDER BY entity`).all() as Array<{ entity: number; seen: number; at: number }>);
    store.readings.savePoll('markets', [market('m1', H + 1_000, { utilization: 0.5 })], H + 2_000);
    // Pruned while a poll still returns m1: its newest reading is kept.
    store.readings.prune(H + 5 * MIN);
    const m1 = store.readings.entityId('market', 'm1')!;
    expect(kept()).toEqual([{ entity: m1, seen: 2_000, at: 1_000 }]);
    // A revision of that time stored, then sealed: its chunk's newest time is the kept reading's.
    store.readings.savePoll('markets', [market('m1', H + 1_000, { utilization: 0.6 })], H + 20 * MIN);
    store.readings.sealHistory(H + 2 * HOUR);
    expect(store.db.prepare(`SELECT hi_at - ${H} AS hi FROM reading_history_chunks`).all()).toEqual([{ hi: 1_000 }]);
    // m2: a chunk whose newest time is also its kept reading's, but the kept one is the later revision of that time.
    store.readings.savePoll('others', [market('m2', H + 30 * MIN, { utilization: 0.1 })], H + 30 * MIN);
    store.readings.savePoll('others', [market('m2', H + 29 * MIN, { utilization: 0.2 })], H + 32 * MIN);
    store.readings.sealHistory(H + 2 * HOUR);
    const m2 = store.readings.entityId('market', 'm2')!;
    // (Not a state prune makes: it keeps the newest of what it deletes, and deletes the oldest stored first.)
    const first = [...createRawStore(store.db).iterate(0, Number.MAX_SAFE_INTEGER, 10)].flat().find((r) => r.entity === m2)!;
    store.db.prepare(`INSERT INTO latest_kept (entity, seen_at, at, poll, shape, vals) VALUES (?, ?, ?, ?, ?, ?)`).run(m2, H + 31 * MIN, first.at, first.poll, first.shape, Buffer.from(first.vals));
    const before = { m1: store.readings.latest('market', 'm1'), m2: store.readings.latest('market', 'm2') };
    expect(before.m1?.fields.utilization).toBe(0.6);
    // A prune with nothing to delete drops what is stale.
    store.readings.prune(H);
    expect(kept()).toEqual([{ entity: m2, seen: 31 * MIN, at: 30 * MIN }]);
    expect({ m1: store.readings.latest('market', 'm1'), m2: store.readings.latest('market', 'm2') }).toEqual(before);
    store.close();
  });
});

describe('rows added since a marker, asked once per reading kind', () => {
  /** Two polls of an hour, the marker after the first; the hour is over (sealable) by the end of the next. */
  const fill = (store: Store) => {
    store.readings.savePoll('markets', [market('m1', H + 1_000, { utilization: 0.5 })], H + 2_000);
    const marker = store.readings.historyChanges().last()!;
    store.readings.savePoll('markets', [market('m1', H + 3_000, { utilization: 0.6 }), market('m2', H + 3_000, { utilization: 0.7 })], H + 4_000);
    store.readings.savePoll('positions', [{ kind: 'position', entity: 'p1', at: H + 3_500, labels: {}, fields: { value_usd: 10 } }], H + 4_000);
    return marker;
  };
  const ask = (store: Store, changes: HistoryChanges, marker: HistoryRowKey) => ({
    market: changes.since(marker, 'market', Number.MAX_SAFE_INTEGER).map((r) => `${r.entity}@${r.at - H}`),
    position: changes.since(marker, 'position', Number.MAX_SAFE_INTEGER).map((r) => `${r.entity}@${r.at - H}`),
  });
  const want = { market: ['m1@3000', 'm2@3000'], position: ['p1@3500'] };

  it('finds them whether they are in the head or were sealed since it last asked, by this connection or another', () => {
    const path = join(dirs.make(), 'since.db');
    const store = openStore(path);
    const marker = fill(store);
    const changes = store.readings.historyChanges();
    expect(ask(store, changes, marker)).toEqual(want);
    // Sealed by this connection: the same rows, now from chunks.
    store.readings.sealHistory(H + 2 * HOUR);
    expect((store.db.prepare(`SELECT count(*) AS n FROM reading_history`).get() as { n: number }).n).toBe(0);
    expect(ask(store, changes, marker)).toEqual(want);
    expect(ask(store, changes, marker)).toEqual(want);
    store.close();

    // Sealed by another connection (a daemon, while a report reads): the same again.
    const path2 = join(dirs.make(), 'since-other.db');
    const reader = openStore(path2);
    const marker2 = fill(reader);
    const changes2 = reader.readings.historyChanges();
    expect(ask(reader, changes2, marker2)).toEqual(want);
    const writer = openStore(path2);
    writer.readings.sealHistory(H + 2 * HOUR);
    writer.close();
    expect(ask(reader, changes2, marker2)).toEqual(want);
    reader.close();
  });

  it('forgets what it found sealed inside a transaction that rolled back (the rows are back in the head)', () => {
    const store = openStore(join(dirs.make(), 'since-rollback.db'));
    const marker = fill(store);
    const changes = store.readings.historyChanges();
    expect(() =>
      store.transaction(() => {
        store.readings.sealHistory(H + 2 * HOUR);
        expect(ask(store, changes, marker)).toEqual(want);
        throw new Error('the poll failed');
      }),
    ).toThrow('the poll failed');
    expect((store.db.prepare(`SELECT count(*) AS n FROM reading_history`).get() as { n: number }).n).toBe(4);
    // SQLite's total_changes() does not go back at a rollback: only forgetting the memo keeps the sealed rows out.
    expect(ask(store, changes, marker)).toEqual(want);
    store.close();
  });
});
