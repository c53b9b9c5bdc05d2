/**
 * Schema 8 (compact history rows) from a database as lookout 7 left it, schema 9 (packed latest readings) from one
 * as lookout 8 left it, schema 10 (only the poll per entity) from one as lookout 9 left it, and schema 11 (buckets
 * sealed in hourly chunks) from one as lookout 10 left it: every row converted, none lost, and the same answers — by
 * an oracle that reads the fixture rows themselves, not the store's own code (for 11: the answers the
 * one-row-per-bucket table gave before).
 */
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import type { Reading, ReadingKind } from '../src/model.js';
import { migrations, openStore } from '../src/store/index.js';
import { packReading, Reader, unpackFields, Writer, type Shape } from '../src/store/codec.js';
import { decodeChunk } from '../src/store/bucket-chunks.js';
import { writeBucketValues } from '../src/store/buckets.js';
import { createHistoryImporter, createLatestImporter } from '../src/store/readings.js';
import { tempDirs } from './store-helpers.js';

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

interface OldRow {
  kind: ReadingKind;
  entity: string;
  at: number;
  seen_at: number;
  poll: string;
  labels: Record<string, string>;
  fields: Record<string, unknown>;
  unreadable?: Record<string, string>;
}

const UNREADABLE = '\u0000unreadable';

/** Rows as schema 7 stored them: fields JSON (the unreadable map under its NUL key), labels in reading_labelsets. */
function v7Database(rows: readonly OldRow[]): string {
  const path = join(dirs.make(), 'v7.db');
  const old = openStore(path, { migrations: migrations.filter((m) => m.version <= 7) });
  const label = old.db.prepare(`INSERT OR IGNORE INTO reading_labelsets (hash, labels) VALUES (?, ?)`);
  const row = old.db.prepare(`INSERT INTO reading_history (kind, entity, at, seen_at, fields, labelset, poll) VALUES (?, ?, ?, ?, ?, ?, ?)`);
  old.transaction(() => {
    for (const r of rows) {
      const labels = JSON.stringify(r.labels);
      label.run(labels, labels);
      const fields = r.unreadable ? { ...r.fields, [UNREADABLE]: r.unreadable } : r.fields;
      row.run(r.kind, r.entity, r.at, r.seen_at, JSON.stringify(fields), labels, r.poll);
    }
  });
  expect(old.version).toBe(7);
  old.close();
  return path;
}

const marketFields = (i: number, u: number) => ({
  market_id: `0x${i}`,
  utilization: u,
  borrow_apy: 1.386636e-2 + i / 1e6,
  oracle_price: '1201231211320350000000000000000000000',
  total_borrowed: '17712277853470900000000',
  total_borrowed_usd: 52085279.95,
  oracle_last_update: 1_795_619_840_000 + i,
  timestamp: 1_795_619_844_000 + i,
  block: 178674935 + i,
  verified: i % 2 === 0,
  note: null,
  market: { chain: 'base', loan_asset_symbol: 'USDC', loan_asset_decimals: 6, tags: ['a', 'b'] },
});

describe('migration 8: compact history', () => {
  const rows: OldRow[] = [
    { kind: 'market', entity: 'm1', at: 1000, seen_at: 1000, poll: 'markets', labels: { market_id: 'm1', chain: 'base' }, fields: marketFields(1, 0.5) },
    { kind: 'market', entity: 'm2', at: 1000, seen_at: 1000, poll: 'markets', labels: { market_id: 'm2', chain: 'base' }, fields: marketFields(2, 0.6), unreadable: { borrow_apy: 'not a number: "n/a"' } },
    // A revision of the same time seen later, and an older time again.
    { kind: 'market', entity: 'm1', at: 1000, seen_at: 2000, poll: 'markets', labels: { market_id: 'm1', chain: 'base' }, fields: marketFields(1, 0.7) },
    { kind: 'market', entity: 'm1', at: 3000, seen_at: 3000, poll: 'markets', labels: { market_id: 'm1', chain: 'arb' }, fields: marketFields(1, 0.8) },
    { kind: 'market', entity: 'm1', at: 2500, seen_at: 3500, poll: 'markets-b', labels: { market_id: 'm1', chain: 'arb' }, fields: marketFields(1, 0.9) },
    { kind: 'benchmark', entity: 'base/usd', at: 86_400_000, seen_at: 3000, poll: 'benchmarks', labels: {}, fields: { rate: 0.0512, isComplete: false, isStale: true } },
    { kind: 'position', entity: 'p1', at: 2000, seen_at: 2000, poll: 'positions', labels: { wallet: '0xw' }, fields: { wallet: '0xw', value_usd: -12.5, verified: null, extra: { x: [1, '2'] } } },
  ];
  const asReading = (r: OldRow): Reading => ({ kind: r.kind, entity: r.entity, at: r.at, labels: r.labels, fields: r.fields, ...(r.unreadable ? { unreadable: r.unreadable } : {}) });
  /** The oracle: the newest fixture row at or before t (of one time, the last seen by asOf). */
  const oracleAt = (kind: string, entity: string, t: number, asOf = Infinity) =>
    rows
      .filter((r) => r.kind === kind && r.entity === entity && r.at <= t && r.seen_at <= asOf)
      .sort((a, b) => a.at - b.at || a.seen_at - b.seen_at)
      .at(-1);

  it('converts every row, keeps none out, and gives the same history answers', () => {
    const store = openStore(v7Database(rows));
    try {
      expect(store.version).toBe(migrations.at(-1)!.version);
      // Every row, in the order it was stored (then entity, time).
      const all = [...store.readings.iterateHistory(0, 10_000)];
      expect(all).toHaveLength(rows.length);
      const bySeen = [...rows].sort((a, b) => a.seen_at - b.seen_at);
      expect(new Set(all.map((r) => JSON.stringify(r)))).toEqual(new Set(bySeen.map((r) => JSON.stringify({ ...asReading(r), poll: r.poll, seen_at: r.seen_at }))));
      expect(all.map((r) => r.seen_at)).toEqual(bySeen.map((r) => r.seen_at));
      for (const t of [999, 1000, 1500, 2500, 2999, 3000, 1e9]) {
        for (const asOf of [1000, 1999, 2000, 3499, Infinity]) {
          const want = oracleAt('market', 'm1', t, asOf);
          expect(store.readings.historyAt('market', 'm1', t, asOf === Infinity ? undefined : asOf), `t=${t} asOf=${asOf}`).toEqual(want && asReading(want));
        }
      }
      expect(store.readings.historyRange('market', 'm1', 0, 5000).map((r) => r.fields.utilization)).toEqual([0.7, 0.9, 0.8]);
      expect(store.readings.historyAt('market', 'm2', 1000)).toEqual(asReading(rows[1]!));
      expect(store.readings.historyAt('position', 'p1', 5000)).toEqual(asReading(rows[6]!));
      expect(store.readings.historyAt('benchmark', 'base/usd', 1e9)).toEqual(asReading(rows[5]!));
      // The old tables are gone; writing goes on in the new ones.
      const tables = (store.db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).all() as Array<{ name: string }>).map((t) => t.name);
      expect(tables).not.toContain('reading_labelsets');
      expect(tables).not.toContain('reading_history_v7');
      store.readings.savePoll('markets', [{ ...asReading(rows[0]!), at: 4000, fields: marketFields(1, 0.1) }], 4000);
      expect(store.readings.historyAt('market', 'm1', 4000)?.fields.utilization).toBe(0.1);
    } finally {
      store.close();
    }
  });
});

describe('migration 9: the latest readings packed', () => {
  interface OldLatest extends OldRow {
    updated_at: number;
  }
  const latest: OldLatest[] = [
    { kind: 'market', entity: 'm1', at: 3000, seen_at: 3000, updated_at: 3000, poll: 'markets', labels: { market_id: 'm1', chain: 'arb' }, fields: marketFields(1, 0.8) },
    { kind: 'market', entity: 'm2', at: 1000, seen_at: 1000, updated_at: 1500, poll: 'markets-b', labels: { market_id: 'm2', chain: 'base' }, fields: marketFields(2, 0.6), unreadable: { borrow_apy: 'not a number: "n/a"' } },
    { kind: 'benchmark', entity: 'base/usd', at: 86_400_000, seen_at: 3000, updated_at: 3000, poll: 'benchmarks', labels: {}, fields: { rate: 0.0512, isComplete: false, isStale: true } },
    { kind: 'position', entity: 'p1', at: 2000, seen_at: 2000, updated_at: 2000, poll: 'positions', labels: { wallet: '0xw' }, fields: { wallet: '0xw', value_usd: -12.5, verified: null, balance: '123456789012345678901234567890', extra: { x: [1, '2'] } } },
  ];
  const asReading = (r: OldRow): Reading => ({ kind: r.kind, entity: r.entity, at: r.at, labels: r.labels, fields: r.fields, ...(r.unreadable ? { unreadable: r.unreadable } : {}) });

  /** Latest rows as schema 8 stored them: labels and fields JSON, the unreadable map under its NUL key. */
  function v8Database(): string {
    const path = join(dirs.make(), 'v8.db');
    const old = openStore(path, { migrations: migrations.filter((m) => m.version <= 8) });
    const row = old.db.prepare(`INSERT INTO latest_readings (kind, entity, at, labels, fields, poll, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)`);
    old.transaction(() => {
      for (const r of latest) {
        const fields = r.unreadable ? { ...r.fields, [UNREADABLE]: r.unreadable } : r.fields;
        row.run(r.kind, r.entity, r.at, JSON.stringify(r.labels), JSON.stringify(fields), r.poll, r.updated_at);
      }
    });
    expect(old.version).toBe(8);
    old.close();
    return path;
  }

  it('converts every latest reading, keeps none out, and gives the same answers', () => {
    const store = openStore(v8Database());
    try {
      expect(store.version).toBe(migrations.at(-1)!.version);
      // The oracle is the fixture itself: every field exactly, the unreadable map back beside the fields.
      for (const r of latest) expect(store.readings.latest(r.kind, r.entity), `${r.kind}/${r.entity}`).toEqual(asReading(r));
      expect(store.readings.latestAll('market')).toEqual([asReading(latest[0]!), asReading(latest[1]!)]);
      expect(store.readings.latestForPoll('markets-b')).toEqual([asReading(latest[1]!)]);
      expect(store.readings.entitiesForPoll('positions')).toEqual([{ kind: 'position', entity: 'p1' }]);
      expect(store.readings.counts().latest).toEqual({ benchmark: 1, market: 2, position: 1 });
      // No history holds these readings (a database whose history was pruned): migration 10 kept each, with when it was written.
      const kept = store.db.prepare(`SELECT seen_at FROM latest_kept ORDER BY seen_at`).all();
      expect(kept).toEqual([...latest].map((r) => ({ seen_at: r.updated_at })).sort((a, b) => a.seen_at - b.seen_at));
      const tables = (store.db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).all() as Array<{ name: string }>).map((t) => t.name);
      expect(tables).not.toContain('latest_readings_v8');
      expect(tables).not.toContain('latest_readings');
      // A shape only a latest reading points to is not garbage.
      expect(store.readings.pruneShapes()).toBe(0);
      expect(store.readings.latest('position', 'p1')).toEqual(asReading(latest[3]!));
      // Writing goes on in the new table.
      store.readings.savePoll('markets', [{ ...asReading(latest[0]!), at: 4000, fields: marketFields(1, 0.1) }], 4000);
      expect(store.readings.latest('market', 'm1')?.fields).toEqual(marketFields(1, 0.1));
    } finally {
      store.close();
    }
  });
});

describe('migration 11: sealed buckets in hourly chunks', () => {
  const H = Date.UTC(2025, 2, 3, 8);
  const MIN = 60_000;
  /** Three hours of two markets (one changes its shape in the third) and a position, a reading a minute, folded. */
  function folded(path: string) {
    const store = openStore(path);
    for (let t = H + 30_000; t < H + 3 * 3_600_000; t += MIN) {
      const u = (k: number) => Math.round((0.5 + 0.4 * Math.sin(t / 7e5 + k)) * 1e6) / 1e6;
      const markets = [1, 2].map((k) => ({ ...marketFields(k, u(k)), timestamp: t, block: t / 2000, market_id: t > H + 2.5 * 3_600_000 && k === 2 ? '0x2b' : `0x${k}` }));
      store.readings.savePoll(
        'markets',
        [
          { kind: 'market', entity: 'm1', at: t, labels: { market_id: 'm1' }, fields: markets[0]! },
          { kind: 'market', entity: 'm2', at: t, labels: { market_id: 'm2' }, fields: markets[1]! },
          { kind: 'position', entity: 'p1', at: t - 20_000, labels: { wallet: '0xw' }, fields: { value_usd: u(3) * 1000, balance: `${Math.round(u(4) * 1e6)}000000000000` } },
        ],
        t + 2_000,
      );
    }
    store.readings.downsample(H + 4 * 3_600_000);
    return store;
  }
  /** What the buckets answer: all of them in order, point reads, ranges, counts. */
  function answers(store: ReturnType<typeof openStore>) {
    const grid = Array.from({ length: 3 * 60 + 20 }, (_, i) => H - 10 * MIN + i * MIN + 17_000);
    const keys = [['market', 'm1'], ['market', 'm2'], ['position', 'p1']] as const;
    return {
      all: [...store.readings.iterateBuckets(0, Number.MAX_SAFE_INTEGER)],
      at: keys.flatMap(([k, e]) => grid.flatMap((t) => [store.readings.historyAt(k, e, t), store.readings.historyAt(k, e, t, H + 90 * MIN)])),
      range: keys.flatMap(([k, e]) => grid.map((t) => store.readings.historyRange(k, e, t, t + 40 * MIN))),
      counts: store.readings.counts(),
    };
  }
  /**
   * The buckets as lookout 10 kept them: each one row of `reading_buckets` (a table migration 11 does not change, its
   * rows written as lookout 10 wrote them: writeBucketValues of the bucket), the chunks gone.
   */
  function unseal(store: ReturnType<typeof openStore>): void {
    const db = store.db;
    const shape = (id: number) => JSON.parse((db.prepare(`SELECT value FROM history_shapes WHERE id = ?`).get(id) as { value: string }).value) as Shape;
    const chunks = db.prepare(`SELECT entity, start, poll, shape, data FROM reading_bucket_chunks`).all() as Array<{ entity: number; start: number; poll: number; shape: number; data: Buffer }>;
    const put = db.prepare(`INSERT INTO reading_buckets (entity, start, at, seen_at, poll, shape, n, vals) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);
    store.transaction(() => {
      for (const c of chunks) {
        for (const b of decodeChunk(c.data, c.start, c.poll, c.shape, shape(c.shape))) {
          const w = new Writer();
          writeBucketValues(w, shape(c.shape), b);
          put.run(c.entity, b.start, b.at, b.seenAt, b.poll, b.shape, b.n, w.take());
        }
      }
      db.exec(`DELETE FROM reading_bucket_chunks`);
    });
  }

  it('leaves the buckets of a database lookout 10 left answering as they did, and the background sealing loses none and gives the same answers', () => {
    const path = join(dirs.make(), 'v9.db');
    const sealed = folded(path);
    const fromChunks = answers(sealed);
    expect(fromChunks.all).toHaveLength(3 * 36);
    expect(fromChunks.counts.history).toBe(0);
    unseal(sealed);
    // Read from the one-row-per-bucket table, as lookout 9 read it: the same.
    const before = answers(sealed);
    expect(before).toEqual(fromChunks);
    expect((sealed.db.prepare(`SELECT count(*) AS n FROM reading_buckets`).get() as { n: number }).n).toBe(3 * 36);
    // Schema 10: no chunk table (nor the raw one of 12: this history is all buckets). The alerts' schema 13 stays
    // applied: this is about history, and the migrations missing run in order.
    sealed.db.exec(`DROP TABLE reading_bucket_chunks; DROP TABLE reading_history_chunks; DELETE FROM schema_migrations WHERE version IN (11, 12)`);
    sealed.close();
    const store = openStore(path);
    try {
      expect(store.version).toBe(migrations.at(-1)!.version);
      // The migration only adds the chunk table (sealing 30 days of buckets at start-up would hold it for many
      // minutes): the buckets answer from their old table as they did.
      expect(answers(store)).toEqual(before);
      const n = (sql: string) => (store.db.prepare(sql).get() as { n: number }).n;
      expect(n(`SELECT count(*) AS n FROM reading_bucket_chunks`)).toBe(0);
      // The daemon's downsample turns seal them in the background, a small batch a call: none lost, the same answers.
      while (store.readings.downsample(H + 4 * 3_600_000, { batchSize: 36, maxRows: 36 }).sealed > 0);
      expect(answers(store)).toEqual(before);
      expect(n(`SELECT count(*) AS n FROM reading_buckets`)).toBe(0);
      // An entity's hour a chunk, and one more where m2's shape changed mid-hour.
      expect(n(`SELECT count(*) AS n FROM reading_bucket_chunks`)).toBe(3 * 3 + 1);
      expect(n(`SELECT sum(n) AS n FROM reading_bucket_chunks`)).toBe(3 * 36);
    } finally {
      store.close();
    }
  });
});

describe('migration 10: only the poll per entity, the latest reading from history', () => {
  const history: OldRow[] = [
    { kind: 'market', entity: 'm1', at: 1000, seen_at: 1000, poll: 'markets', labels: { market_id: 'm1' }, fields: marketFields(1, 0.5) },
    { kind: 'market', entity: 'm1', at: 3000, seen_at: 3000, poll: 'markets', labels: { market_id: 'm1' }, fields: marketFields(1, 0.8) },
    { kind: 'market', entity: 'm2', at: 1000, seen_at: 1000, poll: 'markets-b', labels: { market_id: 'm2' }, fields: marketFields(2, 0.6), unreadable: { borrow_apy: 'not a number: "n/a"' } },
    { kind: 'market', entity: 'gone', at: 1000, seen_at: 1000, poll: 'markets', labels: {}, fields: { utilization: 0.1 } },
  ];
  /** Schema 9's latest rows: m1 moved on in time since its last change, m2 as stored, p1 with its history pruned; 'gone' vanished. */
  const latest = [
    { ...history[1]!, at: 5000, updated_at: 5000 },
    { ...history[2]!, updated_at: 1000 },
    { kind: 'position' as const, entity: 'p1', at: 2000, seen_at: 2000, updated_at: 2500, poll: 'positions', labels: { wallet: '0xw' }, fields: { wallet: '0xw', value_usd: -12.5, balance: '123456789012345678901234567890' } },
  ];
  const asReading = (r: OldRow): Reading => ({ kind: r.kind, entity: r.entity, at: r.at, labels: r.labels, fields: r.fields, ...(r.unreadable ? { unreadable: r.unreadable } : {}) });
  const withNul = (r: OldRow) => (r.unreadable ? { ...r.fields, [UNREADABLE]: r.unreadable } : r.fields);

  function v9Database(): string {
    const path = join(dirs.make(), 'v9.db');
    const old = openStore(path, { migrations: migrations.filter((m) => m.version <= 9) });
    old.transaction(() => {
      const write = createHistoryImporter(old.db);
      for (const r of history) write({ ...r, fields: withNul(r) });
      const put = createLatestImporter(old.db);
      for (const r of latest) put({ ...r, fields: withNul(r) });
    });
    expect(old.version).toBe(9);
    old.close();
    return path;
  }

  it("keeps each entity's poll, answers its latest reading from history (or kept, where history has none), and loses none", () => {
    const store = openStore(v9Database());
    try {
      expect(store.version).toBe(migrations.at(-1)!.version);
      // m1's latest is history's newest: its values as the old latest had them, at the time they last changed.
      expect(store.readings.latest('market', 'm1')).toEqual(asReading(history[1]!));
      expect(store.readings.latest('market', 'm1')?.fields).toEqual(latest[0]!.fields);
      expect(store.readings.latest('market', 'm2')).toEqual(asReading(history[2]!));
      expect(store.readings.latest('position', 'p1')).toEqual(asReading(latest[2]!));
      expect(store.readings.latest('market', 'gone')).toBeUndefined();
      expect(store.readings.entitiesForPoll('markets')).toEqual([{ kind: 'market', entity: 'm1' }]);
      expect(store.readings.entitiesForPoll('markets-b')).toEqual([{ kind: 'market', entity: 'm2' }]);
      expect(store.readings.entitiesForPoll('positions')).toEqual([{ kind: 'position', entity: 'p1' }]);
      expect(store.readings.counts().latest).toEqual({ market: 2, position: 1 });
      // Only p1, whose history is gone, is kept, stamped with when it was written; its shape is not garbage.
      expect(store.db.prepare(`SELECT seen_at, at FROM latest_kept`).all()).toEqual([{ seen_at: 2500, at: 2000 }]);
      expect(store.readings.pruneShapes()).toBe(0);
      const tables = (store.db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).all() as Array<{ name: string }>).map((t) => t.name);
      expect(tables).not.toContain('latest_readings');
      // History is untouched.
      expect([...store.readings.iterateHistory(0, 10_000)]).toHaveLength(history.length);
    } finally {
      store.close();
    }
  });
});

describe('the packed form of a reading', () => {
  const value = fc.oneof(
    fc.double({ noNaN: true }),
    fc.integer(),
    fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 }),
    fc.double({ min: 0, max: 1, noNaN: true }).map((x) => Math.round(x * 1e6) / 1e6),
    fc.bigInt({ min: -(10n ** 45n), max: 10n ** 45n }).map((b) => b.toString()),
    fc.bigInt({ min: 0n, max: 10n ** 20n }).map((b) => `${b.toString()}000000000`),
    fc.boolean(),
    fc.constant(null),
    fc.string(),
    fc.constantFrom('007', '-0', '1e5', '0.50', ' 12'),
    fc.dictionary(fc.string({ maxLength: 4 }), fc.oneof(fc.integer(), fc.string())),
  );
  it('gives back every field exactly (a non-finite number as null, as JSON stored it)', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.oneof(fc.string({ maxLength: 6 }), fc.constant('__proto__')), value), fc.integer({ min: 0, max: 2e12 }), (fields, at) => {
        const w = new Writer();
        const { shape, vals } = packReading(w, { a: 'b' }, fields, undefined, at);
        const back = unpackFields(JSON.parse(shape) as Shape, new Reader(vals), at);
        expect(back).toEqual(JSON.parse(JSON.stringify(fields)));
        expect(Object.keys(back)).toEqual(Object.keys(fields));
        expect(Object.getPrototypeOf(back)).toBe(Object.prototype);
      }),
      { numRuns: 2000, seed: 20261125 },
    );
  });

  it("stores a fraction in the shortest decimal form JavaScript's own number formatting gives it", () => {
    // The oracle: String(x) is the shortest text that reads back as x; its digits and fraction length are the mantissa
    // and scale a decimal value is stored with (tag, then the zigzag varint of the mantissa), else 8 bytes of double.
    const varintLength = (n: number) => {
      let len = 1;
      for (let v = n; v >= 128; v = Math.floor(v / 128)) len++;
      return len;
    };
    const expected = (x: number): number => {
      const match = /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(Math.abs(x)))!;
      const frac = match[2] ?? '';
      const scale = frac.length - Number(match[3] ?? 0);
      const m = Number(match[1]! + frac);
      return scale >= 1 && scale <= 31 && Number.isSafeInteger(m) && m < 2 ** 52 ? 1 + varintLength(2 * m + (x < 0 ? -1 : 0)) : 9;
    };
    const shortDecimal = fc.tuple(fc.integer({ min: 1, max: 10 ** 9 }), fc.integer({ min: 1, max: 12 }), fc.boolean()).map(([m, k, neg]) => (neg ? -m : m) / 10 ** k);
    const fraction = fc.oneof(shortDecimal, fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e12, max: 1e12 }), fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e-3, max: 1e-3 }));
    fc.assert(
      fc.property(fraction.filter((x) => !Number.isInteger(x)), (x) => {
        const { vals } = packReading(new Writer(), {}, { x }, undefined, 0);
        expect([x, vals.length]).toEqual([x, expected(x)]);
      }),
      { numRuns: 20_000, seed: 20261125 },
    );
  });

  it('takes a few bytes per value where the service sends short decimals and amounts', () => {
    const { vals } = packReading(new Writer(), {}, marketFields(3, 0.644698), undefined, 1_795_619_844_003);
    // 11 packed values (utilization 4, borrow_apy 5, oracle_price 9, total_borrowed 10, usd 6, times 1–3, block 5, ...).
    expect(vals.length).toBeLessThan(60);
  });
});

describe('migration 12: full-resolution history of past hours in hourly chunks', () => {
  const H = Date.UTC(2025, 2, 3, 8);
  const MIN = 60_000;
  /** Three hours of two markets (m2 gone for an hour) and a position a minute, as lookout 11 kept them: every row in reading_history. */
  function stored(path: string) {
    const store = openStore(path);
    for (let t = H + 30_000; t < H + 3 * 3_600_000; t += MIN) {
      const u = (k: number) => Math.round((0.5 + 0.4 * Math.sin(t / 7e5 + k)) * 1e6) / 1e6;
      const m = (k: number) => ({ kind: 'market' as const, entity: `m${k}`, at: t, labels: { market_id: `m${k}` }, fields: { ...marketFields(k, u(k)), timestamp: t } });
      const gone = t > H + 3_600_000 && t < H + 2 * 3_600_000;
      store.readings.savePoll('markets', gone ? [m(1)] : [m(1), m(2)], t + 2_000);
      store.readings.savePoll('positions', [{ kind: 'position', entity: 'p1', at: t - 20_000, labels: { wallet: '0xw' }, fields: { value_usd: u(3) * 1000 } }], t + 3_000);
    }
    return store;
  }
  function answers(store: ReturnType<typeof openStore>) {
    const grid = Array.from({ length: 3 * 12 + 4 }, (_, i) => H - 10 * MIN + i * 5 * MIN + 17_000);
    const keys = [['market', 'm1'], ['market', 'm2'], ['position', 'p1']] as const;
    return {
      all: [...store.readings.iterateHistory(0, Number.MAX_SAFE_INTEGER, { vanished: true })],
      at: keys.flatMap(([k, e]) => grid.flatMap((t) => [store.readings.historyAt(k, e, t), store.readings.historyAt(k, e, t, H + 90 * MIN)])),
      range: keys.flatMap(([k, e]) => grid.map((t) => store.readings.historyRange(k, e, t, t + 40 * MIN))),
      latest: keys.map(([k, e]) => store.readings.latest(k, e)),
      counts: store.readings.counts(),
    };
  }

  it('leaves the rows of a database lookout 11 left answering as they did, and the background sealing loses none and gives the same answers', () => {
    const path = join(dirs.make(), 'v11.db');
    const old = stored(path);
    const before = answers(old);
    const rows = (old.db.prepare(`SELECT count(*) AS n FROM reading_history`).get() as { n: number }).n;
    expect(before.all.filter((r) => r.vanished)).toHaveLength(1);
    // Schema 11: no chunk table (the alerts' schema 13 stays applied: this is about history).
    old.db.exec(`DROP TABLE reading_history_chunks; DELETE FROM schema_migrations WHERE version = 12`);
    old.close();
    const store = openStore(path);
    try {
      expect(store.version).toBe(migrations.at(-1)!.version);
      const n = (sql: string) => (store.db.prepare(sql).get() as { n: number }).n;
      // The migration only adds the chunk table: the rows answer from the head as they did.
      expect(n(`SELECT count(*) AS n FROM reading_history_chunks`)).toBe(0);
      expect(answers(store)).toEqual(before);
      // The daemon's turns seal them in the background, a small batch a call: none lost, the same answers.
      while (store.readings.sealHistory(Number.MAX_SAFE_INTEGER, { batchSize: 10, maxRows: 10 }) > 0);
      expect(n(`SELECT count(*) AS n FROM reading_history`)).toBe(0);
      // An entity's hour a chunk (m2 has none in the hour it was gone but its vanished marker).
      expect(n(`SELECT count(*) AS n FROM reading_history_chunks`)).toBe(3 * 3);
      expect(answers(store)).toEqual(before);
      expect(before.all).toHaveLength(rows);
    } finally {
      store.close();
    }
  });
});
