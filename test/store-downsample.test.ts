/**
 * History past `storage.raw_retention` as 5-minute buckets: a week stored, the older five days folded, and what the
 * buckets answer — their extremes against the readings themselves, and a backtest over raw and bucketed parts against
 * a replay of every raw reading, wherever a rule's verdict does not depend on the order of readings inside a bucket.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBacktest, type BacktestRow } from '../src/backtest/index.js';
import type { Reading } from '../src/model.js';
import { bucketOf, BUCKET_MS, mergeBuckets, readBucketTail, writeBucketValues, type BucketInput } from '../src/store/buckets.js';
import { isPacked, packReading, Reader, unpackFields, Writer, type Shape } from '../src/store/codec.js';
import type { Store } from '../src/store/index.js';
import { defaults, HOUR, market, MIN, rule, tempDirs, tempStore } from './alerts-helpers.js';

const DAY = 86_400_000;
// Bucket-aligned start; polls at 30 s past each minute, so a raw reading never falls on a bucket boundary (a bucket is
// replayed at its end, which always does).
const T0 = Date.UTC(2025, 0, 6);
const END = T0 + 7 * DAY;
const CUTOFF = END - 2 * DAY; // raw_retention 2d, bucket-aligned
const ENTITIES = ['m1', 'm2', 'm3'];
/** The one bucket whose verdict depends on the order inside it: m3, calm but for one breaching reading. */
const SPIKE = { entity: 'm3', bucket: T0 + 2 * DAY + 37 * BUCKET_MS };

/** A deterministic pseudo-random number in [0, 1) from integers. */
function rand(...xs: number[]): number {
  let h = 2166136261;
  for (const x of xs) h = Math.imul(h ^ (x | 0), 16777619) ^ Math.imul(x / 4294967296, 2654435761);
  h = Math.imul(h ^ (h >>> 15), 2246822507);
  h = Math.imul(h ^ (h >>> 13), 3266489909);
  return ((h ^ (h >>> 16)) >>> 0) / 4294967296;
}

/** Each bucket of an entity is in one class for its whole five minutes, held for runs of a few buckets. */
function classOf(e: number, bucket: number): 'breach' | 'mid' | 'low' {
  const run = Math.floor(bucket / 6); // runs of 30 minutes
  const r = rand(e, run);
  return r < 0.15 ? 'breach' : r < 0.6 ? 'mid' : 'low';
}

function utilization(e: number, t: number): number {
  const bucket = Math.floor(t / BUCKET_MS);
  const noise = rand(e, t, 7);
  if (ENTITIES[e] === SPIKE.entity && bucket * BUCKET_MS === SPIKE.bucket) return t % BUCKET_MS < MIN ? 0.97 : 0.81 + 0.03 * noise;
  const c = classOf(e, bucket);
  const [lo, hi] = c === 'breach' ? [0.96, 0.99] : c === 'mid' ? [0.86, 0.94] : [0.8, 0.84];
  return Math.round((lo + (hi - lo) * noise) * 1e6) / 1e6;
}

function poll(t: number): Reading[] {
  return ENTITIES.map((id, e) =>
    market(id, t, {
      utilization: utilization(e, t),
      borrow_apy: Math.round(rand(e, t, 3) * 1e8) / 1e10,
      total_borrowed: `${Math.floor(rand(e, t, 5) * 1e9)}000000000000`,
      block: Math.floor(t / 2000),
      timestamp: t,
    }),
  );
}

const rules = () => [
  rule({ name: 'util-high', kind: 'utilization_above', severity: 'critical', threshold: 0.95 }),
  rule({ name: 'util-low', kind: 'threshold', severity: 'warning', field: 'utilization', op: '<', value: 0.85 }),
];
const alerting = { ...defaults.alerting, flap_threshold: 100_000, max_reading_age: DAY };

const dirs = tempDirs();
let raw: Store;
let folded: Store;
const readings: Reading[] = [];

beforeAll(() => {
  raw = tempStore(dirs, 'raw.db');
  folded = tempStore(dirs, 'folded.db');
  for (let t = T0 + 30_000; t <= END; t += MIN) {
    const batch = poll(t);
    readings.push(...batch);
    raw.readings.savePoll('markets', batch, t);
    folded.readings.savePoll('markets', batch, t);
  }
  // As the daemon keeps it: full-resolution rows of the hours that are over sealed in hourly chunks, then folded from them.
  expect(folded.readings.sealHistory(END, { batchSize: 1_000 })).toBe(((END - HOUR - T0) / MIN) * ENTITIES.length);
  const done = folded.readings.downsample(CUTOFF, { batchSize: 3_000 });
  expect(done.rows).toBe(((CUTOFF - T0) / MIN) * ENTITIES.length);
}, 120_000);

afterAll(() => {
  raw.close();
  folded.close();
  dirs.cleanup();
});

describe('a week stored, the five days past raw_retention folded into buckets', () => {
  it('keeps every reading of the last two days and one bucket per entity and 5 minutes before', () => {
    const counts = folded.readings.counts();
    expect(counts.history).toBe(((END - CUTOFF) / MIN) * ENTITIES.length);
    expect(counts.buckets).toBe(((CUTOFF - T0) / BUCKET_MS) * ENTITIES.length);
    expect(folded.readings.rawSince()).toBe(CUTOFF + 30_000);
    // Sealed: one chunk per entity and hour, but for the last hour (its rows stored late could still come).
    const n = (sql: string) => (folded.db.prepare(sql).get() as { n: number }).n;
    // Full-resolution rows: the last hour's one by one, the others' an entity's hour a chunk.
    expect(n(`SELECT count(*) AS n FROM reading_history`)).toBe((HOUR / MIN) * ENTITIES.length);
    expect(n(`SELECT count(*) AS n FROM reading_history_chunks`)).toBe(((END - HOUR - CUTOFF) / HOUR) * ENTITIES.length);
    expect(n(`SELECT count(*) AS n FROM reading_bucket_chunks`)).toBe(((CUTOFF - HOUR - T0) / HOUR) * ENTITIES.length);
    expect(n(`SELECT count(*) AS n FROM reading_buckets`)).toBe((HOUR / BUCKET_MS) * ENTITIES.length);
    expect(n(`SELECT min(start) AS n FROM reading_buckets`)).toBe(CUTOFF - HOUR);
  });

  it("each bucket holds its last reading and the lowest and highest of every numeric field, exactly as sent", () => {
    const byBucket = new Map<string, Reading[]>();
    for (const r of readings) {
      if (r.at >= CUTOFF) continue;
      const k = `${r.entity} ${Math.floor(r.at / BUCKET_MS) * BUCKET_MS}`;
      byBucket.set(k, [...(byBucket.get(k) ?? []), r]);
    }
    let checked = 0;
    for (const b of folded.readings.iterateBuckets(T0, CUTOFF)) {
      const inside = byBucket.get(`${b.entity} ${b.bucket!.start}`)!;
      const last = inside.at(-1)!;
      expect(b.at).toBe(last.at);
      expect(b.fields).toEqual(last.fields);
      expect(b.bucket!.n).toBe(inside.length);
      for (const field of ['utilization', 'borrow_apy', 'block', 'timestamp']) {
        const vs = inside.map((r) => r.fields[field] as number);
        expect(b.bucket!.min[field], field).toBe(Math.min(...vs));
        expect(b.bucket!.max[field], field).toBe(Math.max(...vs));
      }
      // A token amount stays the exact string it was; it is compared by value.
      const amounts = inside.map((r) => r.fields.total_borrowed as string);
      const byValue = [...amounts].sort((a, b) => Number(a) - Number(b));
      expect(b.bucket!.min.total_borrowed).toBe(byValue[0]);
      expect(b.bucket!.max.total_borrowed).toBe(byValue.at(-1));
      checked++;
    }
    expect(checked).toBe(byBucket.size);
  });

  it('history reads answer from buckets before the cutoff and from every reading after it', () => {
    const t = T0 + 3 * DAY + 12 * MIN + 45_000; // inside a bucket
    const at = folded.readings.historyAt('market', 'm1', t)!;
    // The newest bucket whose last reading is at or before t: the one before t's own.
    const before = Math.floor(t / BUCKET_MS) * BUCKET_MS;
    expect(at.bucket?.start).toBe(before - BUCKET_MS);
    expect(at.at).toBe(before - 30_000);
    const range = folded.readings.historyRange('market', 'm1', CUTOFF - 15 * MIN, CUTOFF + 5 * MIN);
    expect(range.map((r) => [r.at - CUTOFF, r.bucket ? 'bucket' : 'raw'])).toEqual([
      [-10 * MIN - 30_000, 'bucket'],
      [-5 * MIN - 30_000, 'bucket'],
      [-30_000, 'bucket'],
      ...[0, 1, 2, 3, 4].map((m) => [m * MIN + 30_000, 'raw']),
    ]);
    // Past the cutoff, both stores give the same.
    expect(folded.readings.historyAt('market', 'm2', END - 7 * MIN)).toEqual(raw.readings.historyAt('market', 'm2', END - 7 * MIN));
  });
});

describe('the backtest over raw and bucketed history', () => {
  /** A time as the bucket it speaks for: a bucket is replayed at its end (a multiple of 5 minutes), a raw reading inside it. */
  const bucketOf = (t: number) => (t % BUCKET_MS === 0 ? t - BUCKET_MS : Math.floor(t / BUCKET_MS) * BUCKET_MS);
  const episodes = (rows: BacktestRow[], skip: (r: BacktestRow) => boolean) =>
    rows
      .filter((r) => !skip(r))
      .map((r) => `${r.rule}/${r.entity} ${new Date(bucketOf(r.fired_at)).toISOString()} → ${r.resolved_at === null ? 'open' : new Date(bucketOf(r.resolved_at)).toISOString()}`)
      .sort();
  const run = (store: Store) => runBacktest({ store, rules: rules(), alerting, from: T0, to: END });
  const spiked = (r: BacktestRow) => r.entity === SPIKE.entity && bucketOf(r.fired_at) === SPIKE.bucket;

  it('fires and resolves in the same buckets as a replay of every reading, and says which part used which resolution', () => {
    const full = run(raw);
    const mixed = run(folded);
    expect(full.resolution).toEqual([{ from: T0, to: END, resolution: 'raw' }]);
    expect(mixed.resolution).toEqual([
      { from: T0, to: CUTOFF + 30_000, resolution: '5m buckets' },
      { from: CUTOFF + 30_000, to: END, resolution: 'raw' },
    ]);
    const want = episodes(full.current.rows, spiked);
    expect(want.length).toBeGreaterThan(50);
    expect(want.some((e) => e.startsWith('util-low'))).toBe(true);
    expect(episodes(mixed.current.rows, spiked)).toEqual(want);
    // After the cutoff, the very same times.
    const late = (rows: BacktestRow[]) => rows.filter((r) => r.fired_at > CUTOFF).map((r) => `${r.rule}/${r.entity} ${r.fired_at} ${r.resolved_at}`);
    expect(late(mixed.current.rows)).toEqual(late(full.current.rows));
  });

  it('judges a bucket by its worst reading: a one-minute spike fires for the whole bucket', () => {
    const spike = (store: Store) => run(store).current.rows.filter((r) => r.rule === 'util-high' && spiked(r));
    // Every reading: fired at the spike, resolved at the next reading a minute later.
    expect(spike(raw).map((r) => [r.fired_at - SPIKE.bucket, r.resolved_at! - SPIKE.bucket, r.peak])).toEqual([[30_000, 90_000, 0.97]]);
    // Buckets: fired at the bucket's end on its maximum, resolved at the next bucket's end.
    expect(spike(folded).map((r) => [r.fired_at - SPIKE.bucket, r.resolved_at! - SPIKE.bucket, r.peak])).toEqual([[BUCKET_MS, 2 * BUCKET_MS, 0.97]]);
  });
});

describe('buckets sealed in hourly chunks, a bucket folded in two parts', () => {
  // Three hours of two markets and a position, a reading a minute; rows with times in the first hour's buckets stored
  // late (after that hour was sealed: a second chunk); a shape change in the third hour (two chunks of that hour).
  const H = Date.UTC(2025, 2, 3, 8);
  const LATE_AT = H + 2 * HOUR + 30 * MIN;
  const SHAPE_AT = H + 2 * HOUR + 47 * MIN;
  const late = [H + 7 * MIN + 10_000, H + 20 * MIN + 50_000, H + 59 * MIN + 10_000]; // none the last of its bucket
  const position = (t: number): Reading => ({ kind: 'position', entity: 'p1', at: t, labels: { wallet: '0xw' }, fields: { value_usd: Math.round(rand(9, t) * 1e6) / 100, balance: `${Math.floor(rand(8, t) * 1e9)}00000` } });
  function fill(store: Store): void {
    for (let t = H + 30_000; t < H + 3 * HOUR; t += MIN) {
      if (t > LATE_AT && t - MIN <= LATE_AT) store.readings.savePoll('late', late.map((at) => market('m1', at, { utilization: 0.999, note: 'late' })), LATE_AT);
      const note = t >= SHAPE_AT ? 'changed' : null;
      store.readings.savePoll('markets', [market('m1', t, { utilization: utilization(0, t), note }), market('m2', t, { utilization: utilization(1, t), note }), position(t)], t + 5_000);
    }
  }
  let stepped: Store;
  let once: Store;
  beforeAll(() => {
    stepped = tempStore(dirs, 'stepped.db');
    once = tempStore(dirs, 'once.db');
    fill(stepped);
    fill(once);
    // The first hour sealed before its late rows are stored; they are folded and sealed later, into a second chunk.
    expect(stepped.readings.downsample(H + HOUR + 30 * MIN).sealed).toBe(12 * 3);
    expect(stepped.readings.downsample(H + 3 * HOUR + 30 * MIN, { batchSize: 12 }).sealed).toBe(24 * 3 + late.length);
    once.readings.downsample(H + 3 * HOUR + 30 * MIN);
  });
  afterAll(() => {
    stepped.close();
    once.close();
  });
  const chunks = (store: Store, from: number) =>
    (store.db.prepare(`SELECT count(*) AS n FROM reading_bucket_chunks WHERE entity = ? AND start >= ? AND start < ?`).get(store.readings.entityId('market', 'm1'), from, from + HOUR) as { n: number }).n;

  it('writes a chunk per entity and hour, another for the late rows, another where the shape changed', () => {
    expect([chunks(once, H), chunks(once, H + HOUR), chunks(once, H + 2 * HOUR)]).toEqual([1, 1, 2]);
    expect([chunks(stepped, H), chunks(stepped, H + HOUR), chunks(stepped, H + 2 * HOUR)]).toEqual([2, 1, 2]);
    expect((stepped.db.prepare(`SELECT count(*) AS n FROM reading_buckets`).get() as { n: number }).n).toBe(0);
    // A bucket in two chunks counts once.
    expect(stepped.readings.counts()).toEqual(once.readings.counts());
    expect(stepped.readings.counts().buckets).toBe(36 * 3);
  });

  it('answers every read as if each bucket had been folded at once: the parts merged', () => {
    const all = (store: Store, pageSize?: number) => [...store.readings.iterateBuckets(0, Number.MAX_SAFE_INTEGER, { pageSize })];
    const want = all(once);
    expect(want).toHaveLength(36 * 3);
    // The late rows are in: the first hour's buckets of m1 hold their extreme.
    expect(want.filter((r) => r.entity === 'm1' && r.bucket!.max.utilization === 0.999).map((r) => r.bucket!.start - H)).toEqual([5 * MIN, 20 * MIN, 55 * MIN]);
    expect(all(stepped)).toEqual(want);
    expect(all(stepped, 1)).toEqual(want);
    expect(all(stepped, 2)).toEqual(want);
    expect([...stepped.readings.iterateBuckets(H + 20 * MIN, H + HOUR + 4 * MIN, { kinds: ['position'] })].map((r) => (r.bucket!.start - H) / MIN)).toEqual([20, 25, 30, 35, 40, 45, 50, 55, 60]);
    expect([...stepped.readings.iterateBuckets(H + 20 * MIN + 1, H + HOUR - 1)].map((r) => r.bucket!.start)).toEqual(want.filter((r) => r.bucket!.start > H + 20 * MIN && r.bucket!.start < H + HOUR).map((r) => r.bucket!.start));
    const [a, b] = [stepped.readings.historyChanges(), once.readings.historyChanges()];
    // What a point read must say, from the buckets as listed (another path through the chunks).
    const plain = (r: (typeof want)[number]) => {
      const { poll: _poll, seen_at: _seen, ...rest } = r;
      return rest;
    };
    const newest = (entity: string, t: number, asOf = Number.MAX_SAFE_INTEGER) => want.filter((r) => r.entity === entity && r.bucket!.start <= t && r.at <= t && r.seen_at <= asOf).at(-1);
    const nextAt = (entity: string, t: number) => want.find((r) => r.entity === entity && r.bucket!.start > t - BUCKET_MS && r.at > t)?.at;
    for (let t = H - 6 * MIN; t <= H + 3 * HOUR + 6 * MIN; t += 10_000) {
      for (const [kind, entity] of [['market', 'm1'], ['market', 'm2'], ['position', 'p1']] as const) {
        for (const asOf of [undefined, LATE_AT - 1, LATE_AT, H + 40 * MIN]) {
          expect(stepped.readings.historyAt(kind, entity, t, asOf), `${entity} ${t - H} ${asOf}`).toEqual(once.readings.historyAt(kind, entity, t, asOf));
        }
        expect(a.nextAt(kind, entity, t), `${entity} ${t - H}`).toBe(b.nextAt(kind, entity, t));
        expect(a.nextAt(kind, entity, t), `${entity} ${t - H}`).toBe(nextAt(entity, t));
        for (const asOf of [undefined, LATE_AT - 1]) {
          const n = newest(entity, t, asOf);
          expect(stepped.readings.historyAt(kind, entity, t, asOf), `${entity} ${t - H} ${asOf}`).toEqual(n && plain(n));
        }
        expect(stepped.readings.historyRange(kind, entity, t, t + 47 * MIN)).toEqual(once.readings.historyRange(kind, entity, t, t + 47 * MIN));
        expect(stepped.readings.historyRange(kind, entity, t, t + 47 * MIN, LATE_AT - 1)).toEqual(once.readings.historyRange(kind, entity, t, t + 47 * MIN, LATE_AT - 1));
      }
    }
    // A bucket's time is its last reading's, whichever part holds it.
    expect(a.nextAt('market', 'm1', H + 7 * MIN + 9_000)).toBe(H + 9 * MIN + 30_000);
    expect(a.nextAt('market', 'm1', H + 3 * HOUR)).toBeUndefined();
    expect(stepped.readings.historyAt('market', 'm1', H + 25 * MIN)?.bucket?.max.utilization).toBe(0.999);
  }, 120_000); // every read of every entity, bucket and time, twice: 10–15 s on a quiet 2-core VM, 50 s when it is loaded

  it('seals an hour only once every row of it is folded, however few rows a call folds', () => {
    const store = tempStore(dirs, 'paced.db');
    try {
      for (let t = H + 30_000; t < H + 2 * HOUR; t += MIN) store.readings.savePoll('markets', [market('m1', t, { utilization: utilization(0, t) }), market('m2', t, { utilization: utilization(1, t) })], t + 5_000);
      // As the daemon calls it: a few rows a call, the whole range long past.
      let calls = 0;
      for (let r = { rows: 1, sealed: 0 }; r.rows > 0 || r.sealed > 0; calls++) r = store.readings.downsample(H + 3 * HOUR, { batchSize: 25, maxRows: 25 });
      expect(calls).toBeGreaterThan(2 * 120 / 25);
      const rows = store.db.prepare(`SELECT start, n FROM reading_bucket_chunks ORDER BY start, entity`).all();
      expect(rows).toEqual([H, H, H + HOUR, H + HOUR].map((start) => ({ start, n: 12 })));
    } finally {
      store.close();
    }
  });

  it('keeps the shapes only chunks point to, and prunes sealed buckets by whole hours', () => {
    // No raw row is left: the markets' shapes before their note changed, and the late rows' own, are only in chunks.
    expect(stepped.readings.pruneShapes()).toBe(0);
    expect(stepped.readings.historyAt('market', 'm1', H + 25 * MIN)?.bucket?.max.utilization).toBe(0.999);
    expect(stepped.readings.historyAt('market', 'm1', H + 2 * HOUR + 40 * MIN)?.fields.note).toBeNull();
    expect(stepped.readings.prune(H + HOUR + 30 * MIN)).toBe(2 + 1 + 1); // hour one: m1's two chunks, m2's, p1's
    expect(stepped.readings.counts().oldestAt).toBe(H + HOUR);
    expect(stepped.readings.historyAt('market', 'm1', H + HOUR - 1)).toBeUndefined();
    expect(stepped.readings.historyAt('market', 'm1', H + HOUR + 6 * MIN)?.bucket?.start).toBe(H + HOUR);
    expect(stepped.readings.counts().buckets).toBe(24 * 3);
  });
});

describe('a bucket packed and read back', () => {
  const value = fc.oneof(
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.integer({ min: -1e9, max: 1e9 }).map((i) => i / 1e6),
    fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 }),
    fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }).map((b) => b.toString()),
    fc.bigInt({ min: 0n, max: 10n ** 12n }).map((b) => `${b}0000000000`),
    fc.boolean(),
    fc.constant(null),
  );
  /** Folds readings into one bucket, packs it as the store does and reads it back: its last fields and its tail. */
  function foldAndReadBack(inputs: BucketInput[]) {
    const folded = inputs.map(bucketOf).reduce(mergeBuckets);
    const shape = JSON.parse(packReading(new Writer(), {}, folded.fields, undefined, folded.at).shape) as Shape;
    const w = new Writer();
    writeBucketValues(w, shape, folded);
    const r = new Reader(w.take());
    const fields = unpackFields(shape, r, folded.at);
    return { fields, tail: readBucketTail(r, shape, fields, folded.at) };
  }

  it('a field named like a member of every object (constructor, toString, __proto__) is folded and read back as any other', () => {
    const names = ['constructor', 'toString', '__proto__', 'valueOf'];
    const fieldsOf = (vals: unknown[]) => JSON.parse(`{${names.map((k, i) => `${JSON.stringify(k)}:${JSON.stringify(vals[i])}`).join(',')}}`) as Record<string, unknown>;
    const inputs = [fieldsOf([1.5, null, 7, true]), fieldsOf([0.5, null, 9, false]), fieldsOf([1, null, 8, true])].map((fields, i) => ({ at: T0 + i, seenAt: T0 + i, poll: 1, shape: 1, fields }));
    const { fields, tail } = foldAndReadBack(inputs);
    expect(Object.entries(fields)).toEqual(Object.entries(inputs[2]!.fields));
    expect(Object.entries(tail.min)).toEqual([['constructor', 0.5], ['__proto__', 7]]);
    expect(Object.entries(tail.max)).toEqual([['constructor', 1.5], ['__proto__', 9]]);
    expect(tail.n).toBe(3);
  });

  it('keeps the last reading and the exact extremes of every numeric field, however they are written', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(value, value, value), { minLength: 1, maxLength: 8 }), fc.integer({ min: 0, max: 2e12 }), (rows, at0) => {
        // As JSON would keep them (-0 is 0): the store's contract for every value.
        const inputs = rows.map(([a, b, c], i) => ({ at: at0 + i, seenAt: at0 + i, poll: 1, shape: 1, fields: JSON.parse(JSON.stringify({ a, b, c })) as Record<string, unknown> }));
        const { fields, tail } = foldAndReadBack(inputs);
        expect(fields).toEqual(inputs.at(-1)!.fields);
        expect(tail.n).toBe(rows.length);
        for (const k of ['a', 'b', 'c']) {
          const nums = inputs.map((x) => x.fields[k]).filter((v) => typeof v === 'number' || (typeof v === 'string' && /^-?(?:0|[1-9]\d*)$/.test(v)));
          const last = inputs.at(-1)!.fields[k];
          // Extremes are kept for the fields the last reading packs (numbers, amounts, booleans, null).
          if (nums.length === 0 || !isPacked(last)) continue;
          const sorted = [...nums].sort((x, y) => Number(x) - Number(y));
          expect(Number(tail.min[k])).toBe(Number(sorted[0]));
          expect(Number(tail.max[k])).toBe(Number(sorted.at(-1)));
          expect([...nums]).toContain(tail.min[k]);
          expect([...nums]).toContain(tail.max[k]);
        }
      }),
      { numRuns: 3000, seed: 42 },
    );
  });
});
