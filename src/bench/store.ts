/**
 * Benchmark 3: the SQLite store. Saving one poll of 10,000 market readings (history + latest, one
 * transaction) against a bare one-table insert of the same readings as JSON; replaying 100,000 history rows
 * against a bare scan of a one-table DB. Also measures what history costs on disk per row.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { runBacktest } from '../backtest/run.js';
import type { Reading } from '../model.js';
import type { RuleBase } from '../rules/schema.js';
import { openStore, type Store } from '../store/index.js';
import { BUCKET_MS } from '../store/buckets.js';
import { chunkStart, CHUNK_MS } from '../store/chunk-form.js';
import { loadBenchConfig } from './config.js';
import { MARKETS, POLL_INTERVAL_MS, marketsPoll, type Bench, type BenchContext } from './context.js';
import { summarize, timePair } from './stats.js';

/**
 * The readings of one poll moved by `dt` ms, as a later poll of the same world where every value moved: numbers by a
 * relative step in their last digits, integers (blocks, times) and amounts by a small amount. What the store keeps
 * then is the worst case (nothing is left out as unchanged).
 */
export function shifted(readings: readonly Reading[], dt: number): Reading[] {
  const k = Math.round(dt / POLL_INTERVAL_MS);
  const move = (v: unknown): unknown => {
    if (typeof v === 'number') return Number.isInteger(v) ? v + (v > 1e12 ? dt : k) : Number((v * (1 + k / 1e5)).toPrecision(7));
    if (typeof v === 'string' && /^[1-9]\d*$/.test(v)) {
      const zeros = v.length - v.replace(/0+$/, '').length;
      return (BigInt(v) + BigInt(k) * 10n ** BigInt(zeros)).toString();
    }
    return v;
  };
  return readings.map((r) => ({ ...r, at: r.at + dt, fields: Object.fromEntries(Object.entries(r.fields).map(([f, v]) => [f, move(v)])) }));
}

/** A bare better-sqlite3 file with the store's pragmas and one table of readings as JSON. */
export function bareDb(path: string): { db: Database.Database; insert(rows: ReadonlyArray<Pick<Reading, 'kind' | 'entity' | 'at'>>): void } {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec('CREATE TABLE IF NOT EXISTS readings (kind TEXT NOT NULL, entity TEXT NOT NULL, at INTEGER NOT NULL, reading TEXT NOT NULL)');
  const stmt = db.prepare('INSERT INTO readings (kind, entity, at, reading) VALUES (?, ?, ?, ?)');
  const insert = db.transaction((rows: ReadonlyArray<Pick<Reading, 'kind' | 'entity' | 'at'>>) => {
    for (const r of rows) stmt.run(r.kind, r.entity, r.at, JSON.stringify(r));
  });
  return { db, insert };
}

/** Size of a SQLite file and its WAL after a checkpoint, bytes. */
export function fileBytes(db: Database.Database, path: string): number {
  db.pragma('wal_checkpoint(TRUNCATE)');
  const wal = (() => {
    try {
      return statSync(path + '-wal').size;
    } catch {
      return 0;
    }
  })();
  return statSync(path).size + wal;
}

/** Bytes per table and index (dbstat), largest first; empty when SQLite was built without dbstat. */
export function tableBytes(db: Database.Database): Array<{ name: string; bytes: number }> {
  try {
    return db.prepare<[], { name: string; bytes: number }>('SELECT name, SUM(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC').all();
  } catch {
    return [];
  }
}

const mb = (b: number) => `${(b / 1e6).toFixed(1)} MB`;

async function save(ctx: BenchContext): Promise<void> {
  const base = await ctx.readings(marketsPoll);
  const store = openStore(join(ctx.dir, 'save.db'));
  const bare = bareDb(join(ctx.dir, 'save-bare.db'));
  let k = 0;
  let batch: Reading[] = [];
  let bareBatch: Reading[] = [];
  try {
    const t = await timePair(
      { before: () => (batch = shifted(base, ++k * POLL_INTERVAL_MS)), run: () => store.readings.savePoll('markets', batch, Date.now()) },
      { before: () => (bareBatch = shifted(base, k * POLL_INTERVAL_MS)), run: () => bare.insert(bareBatch) },
      ctx.heavyReps,
    );
    ctx.row({ name: 'store.save', n: `${base.length.toLocaleString('en-US')} readings`, subject: summarize(t.subject), baseline: summarize(t.baseline), baselineName: 'one-table JSON insert' });
  } finally {
    store.close();
    bare.db.close();
  }
}

/**
 * Fills `store` with `polls` polls of `base`, 30 s apart, ending at `end`, and records each as a run of the poll (as
 * the poll runner does: a backtest rebuilds its polls from them). The first poll goes through
 * savePoll (into an empty store); the others copy its rows in SQL with the time columns moved (`at`, and `seen_at` where the schema
 * has it), which writes the same rows savePoll would in a fraction of the time.
 */
function fillHistory(store: Store, base: readonly Reading[], polls: number, end: number): void {
  const first = end - (polls - 1) * POLL_INTERVAL_MS;
  const at0 = Math.max(...base.map((r) => r.at));
  store.readings.savePoll('markets', shifted(base, first - at0), first);
  const cols = store.db
    .prepare<[], { name: string }>(`SELECT name FROM pragma_table_info('reading_history')`)
    .all()
    .map((c) => c.name)
    .filter((c) => c !== 'id'); // the rowid is the table's own
  const timeCols = new Set(['at', 'seen_at']);
  const select = cols.map((c) => (timeCols.has(c) ? `${c} + @dt` : c)).join(', ');
  store.db.exec('CREATE TEMP TABLE first_poll AS SELECT * FROM reading_history');
  const copy = store.db.prepare(`INSERT INTO reading_history (${cols.join(', ')}) SELECT ${select} FROM first_poll`);
  store.transaction(() => {
    for (let i = 1; i < polls; i++) copy.run({ dt: i * POLL_INTERVAL_MS });
    for (let i = 0; i < polls; i++) {
      const t = first + i * POLL_INTERVAL_MS;
      store.polls.record({ poll: 'markets', kind: 'metrics', ok: true, readings: base as Reading[], rejected: [], started_at: t - 1_000, finished_at: t });
    }
  });
  store.db.exec('DROP TABLE first_poll');
}

/** The starter rule B12 backtests: markets.yaml's utilization warning (`utilization_above`, with its annotations) as shipped. */
const REPLAY_RULE = 'market-utilization-warning';

/** The starter rules' config as the daemon loads it (nothing is polled: only the rules and alerting settings are used). */
function starterConfig() {
  return loadBenchConfig({ baseUrl: 'http://127.0.0.1:1', catalogUrl: 'http://127.0.0.1:1', apiKey: 'bench', dbPath: ':memory:', rules: 'starter' });
}

async function replay(ctx: BenchContext): Promise<void> {
  // History as a backtest reads it past its first hour: an hour of polls (sealed, an entity's hour a chunk), of as
  // many markets as make 100,000 readings.
  // The quick run (CI, so the bench never rots) replays a fifth of it: the same paths, a quarter of the bench's time.
  const polls = HOUR_POLLS;
  const base = (await ctx.readings(marketsPoll)).slice(0, Math.round((MARKETS * 10 * (ctx.quick ? 0.2 : 1)) / polls));
  const path = join(ctx.dir, 'replay.db');
  const store = openStore(path);
  const barePath = join(ctx.dir, 'replay-bare.db');
  const bare = bareDb(barePath);
  const end = chunkStart(Date.now()) - 15_000; // the polls of one clock hour
  try {
    fillHistory(store, base, polls, end);
    for (let i = 0; i < polls; i++) bare.insert(shifted(base, (i + 1) * POLL_INTERVAL_MS));
    // What the head (the current hour's rows, one row each) costs on disk, before it is sealed.
    const headBytes = tableBytes(store.db).filter((t) => t.name.startsWith('reading_history')).reduce((sum, t) => sum + t.bytes, 0);
    const history = (store.db.prepare('SELECT count(*) AS n FROM reading_history').get() as { n: number }).n;
    const perHeadRow = headBytes / history;
    // A backtest reads history past its first hour: sealed in hourly chunks.
    store.readings.sealHistory(Number.MAX_SAFE_INTEGER);
    const scan = bare.db.prepare<[], { reading: string }>('SELECT reading FROM readings ORDER BY rowid');
    let rows = 0;
    let bareRows = 0;
    // The baseline of store.replay, backtest.replay and backtest.buckets: every row of the one-table DB, parsed.
    const bareScan = {
      run: () => {
        bareRows = 0;
        for (const r of scan.iterate()) if (JSON.parse(r.reading)) bareRows++;
      },
    };
    const t = await timePair(
      {
        run: () => {
          rows = 0;
          for (const r of store.readings.iterateHistory(0, Number.MAX_SAFE_INTEGER)) if (r.entity) rows++;
        },
      },
      bareScan,
      { warmup: 1, runs: 3 }, // a replay reads 500 MB: three runs keep the bench near its 3 minutes
    );
    if (rows !== bareRows) throw new Error(`replay read ${rows} rows, the bare scan ${bareRows}`);
    ctx.row({ name: 'store.replay', n: `${rows.toLocaleString('en-US')} history rows`, subject: summarize(t.subject), baseline: summarize(t.baseline), baselineName: 'one-table scan + JSON.parse' });

    // B12: a backtest of one rule over the same history, as `lookout backtest --rule` runs it (its polls rebuilt from
    // the recorded runs, every reading judged by the engine), against the same bare scan.
    const config = starterConfig();
    const rules = config.rules.map((l) => l.rule as RuleBase);
    let replayed = 0;
    const b = await timePair(
      {
        run: () => {
          const report = runBacktest({ store, rules, alerting: config.alerting, sourceDown: config.source_down, from: end - CHUNK_MS, to: end + 60_000, rule: REPLAY_RULE });
          replayed = report.readings;
        },
      },
      bareScan,
      // Nine pairs in a full run: a backtest takes a fifth of a second, and three of them moved B12's median by up to
      // 40% from one run to the next on a shared VM.
      { warmup: 1, runs: ctx.quick ? 3 : 9 },
    );
    if (replayed !== rows) throw new Error(`the backtest replayed ${replayed} readings, history holds ${rows}`);
    ctx.row({ name: 'backtest.replay', n: `${replayed.toLocaleString('en-US')} readings, 1 rule`, subject: summarize(b.subject), baseline: summarize(b.baseline), baselineName: 'one-table scan + JSON.parse' });

    // What history costs on disk: measured on an hour of polls whose every value moves, sealed, extrapolated to a day.
    const bytes = fileBytes(store.db, path);
    const bareBytes = fileBytes(bare.db, barePath);
    const perDay = MARKETS * (86_400_000 / POLL_INTERVAL_MS);
    const byTable = tableBytes(store.db);
    // Past raw_retention (default 2 days) history is 5-minute buckets: measured on the same hours of polls, of values
    // moving by even steps and walking at random (which leaves compression less to find); the larger counts.
    const evenSteps = hourBytes(ctx.dir, base, 'hour', shifted);
    const walk = hourBytes(ctx.dir, base, 'hour-walk', randomWalk(42));
    const perRow = Math.max(evenSteps.perRow, walk.perRow);
    const perBucket = Math.max(evenSteps.perBucket, walk.perBucket);
    ctx.figure('bytes_per_history_row', perRow);
    ctx.figure('bytes_per_head_row', perHeadRow);
    const bucketsPerDay = MARKETS * (86_400_000 / BUCKET_MS);
    const gb30 = (RAW_DAYS * perDay * perRow + (30 - RAW_DAYS) * bucketsPerDay * perBucket) / 1e9;
    ctx.figure('bytes_per_bucket', perBucket);
    ctx.figure('gb_30d', gb30);
    ctx.figure('replay_rows', rows);
    const tables = byTable
      .slice(0, 4)
      .map((t) => `${t.name} ${mb(t.bytes)}`)
      .join(', ');
    ctx.note(
      `store.replay: after ${polls} polls of ${base.length.toLocaleString('en-US')} markets (an hour), sealed, the DB file is ${mb(bytes)} (${tables}) for ${history.toLocaleString('en-US')} history rows; ` +
        `the bare one-table DB of the same readings is ${mb(bareBytes)}. Before sealing, in the head (one row each, with its indexes): ${perHeadRow.toFixed(0)} bytes a row. ` +
        `As history keeps a reading past its first hour (sealed in hourly chunks, with their indexes; measured on an hour (${HOUR_POLLS} polls) of ${Math.min(HOUR_MARKETS, base.length).toLocaleString('en-US')} markets whose every value moves): ${evenSteps.perRow.toFixed(1)} bytes a reading when the values move by even steps, ${walk.perRow.toFixed(1)} when they walk at random; the larger counts. ` +
        `Extrapolated, not measured (×${(perDay / history).toFixed(0)}): ${(perDay / 1e6).toFixed(1)} M rows and ${((perDay * perRow) / 1e9).toFixed(0)} GB a day at 10,000 markets every 30 s ` +
        `when every market's row changes every poll (the simulator's case). With the defaults (raw_retention 2d, then 5-minute buckets of ` +
        `${perBucket.toFixed(0)} bytes each with their index, measured on the same hour, folded and sealed in hourly chunks: ` +
        `${evenSteps.perBucket.toFixed(0)} bytes when every value moves by even steps, ${walk.perBucket.toFixed(0)} when they walk at random; the larger counts): ` +
        `${gb30.toFixed(1)} GB for 30 days (all raw it would be ${((30 * perDay * perRow) / 1e9).toFixed(0)} GB).`,
    );

    // The same backtest once the hour is past raw_retention: folded into 5-minute buckets (sealed, as 28 of 30 days
    // are by default), each bucket judged at its worst. Not a target of its own; B12's readings are raw ones.
    store.readings.downsample(Number.MAX_SAFE_INTEGER);
    let bucketed = 0;
    let resolution = '';
    const k = await timePair(
      {
        run: () => {
          const report = runBacktest({ store, rules, alerting: config.alerting, sourceDown: config.source_down, from: end - CHUNK_MS, to: end + 60_000, rule: REPLAY_RULE });
          bucketed = report.readings;
          resolution = report.resolution.map((p) => p.resolution).join(', ');
        },
      },
      bareScan,
      { warmup: 1, runs: ctx.quick ? 2 : 5 },
    );
    if (resolution !== '5m buckets') throw new Error(`the bucketed backtest read ${resolution || 'nothing'}`);
    ctx.row({ name: 'backtest.buckets', n: `${bucketed.toLocaleString('en-US')} buckets, 1 rule`, subject: summarize(k.subject), baseline: summarize(k.baseline), baselineName: 'one-table scan + JSON.parse' });
    const perRaw = summarize(b.subject).median / replayed;
    const kMedian = summarize(k.subject).median;
    const perBucketRead = kMedian / bucketed;
    const bucketReads30d = (30 - RAW_DAYS) * MARKETS * (86_400_000 / BUCKET_MS);
    ctx.note(
      `backtest.buckets: the same rule over the same hour folded into 5-minute buckets (${bucketed.toLocaleString('en-US')} bucket readings): ` +
        `${Math.round(bucketed / (kMedian / 1000)).toLocaleString('en-US')} readings/s, ${(perBucketRead / perRaw).toFixed(1)}× a raw reading's time in backtest.replay. ` +
        `A 30-day backtest at SPEC §8 scale reads ${RAW_DAYS} days raw and ${30 - RAW_DAYS} days of buckets (~${(bucketReads30d / 1e6).toFixed(0)} M bucket readings): ` +
        `~${((bucketReads30d * perBucketRead) / 60_000).toFixed(0)} minutes of them at this rate. Not a target (B12 is raw readings).`,
    );
  } finally {
    store.close();
    bare.db.close();
  }
}

const RAW_DAYS = 2;
/** One hour of polls: history past its first hour is sealed an hour of an entity to a chunk, as 30 days of it are. */
const HOUR_POLLS = CHUNK_MS / POLL_INTERVAL_MS;
const HOUR_MARKETS = 500;

/**
 * A poll function whose every value takes a pseudo-random step from where the previous poll left it (a random walk
 * per market and field, seeded): unlike {@link shifted}'s even steps, it leaves compression little to find.
 */
function randomWalk(seed: number): (readings: readonly Reading[], dt: number) => Reading[] {
  let x = seed >>> 0;
  const rand = () => {
    x = (x + 0x6d2b79f5) >>> 0;
    let t = Math.imul(x ^ (x >>> 15), x | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const last = new Map<string, Record<string, unknown>>();
  const step = (v: unknown): unknown => {
    if (typeof v === 'number') return Number.isInteger(v) ? v + (v > 1e12 ? POLL_INTERVAL_MS : 1 + Math.floor(rand() * 20)) : Number((v * (1 + (rand() - 0.5) / 1e3)).toPrecision(7));
    if (typeof v === 'string' && /^[1-9]\d*$/.test(v)) {
      const zeros = v.length - v.replace(/0+$/, '').length;
      return (BigInt(v) + BigInt(Math.floor(rand() * 1000)) * 10n ** BigInt(zeros)).toString();
    }
    return v;
  };
  return (readings, dt) =>
    readings.map((r) => {
      const fields = Object.fromEntries(Object.entries(last.get(r.entity) ?? r.fields).map(([f, v]) => [f, step(v)]));
      last.set(r.entity, fields);
      return { ...r, at: r.at + dt, fields };
    });
}

/**
 * Bytes on disk of an hour of polls of moving values through savePoll (`move` makes each poll from the first): per
 * reading once sealed (chunks and their indexes), then per 5-minute bucket once folded and sealed (the same hour).
 */
function hourBytes(dir: string, base: readonly Reading[], name: string, move: (readings: readonly Reading[], dt: number) => Reading[]): { perRow: number; perBucket: number } {
  const store = openStore(join(dir, `${name}.db`));
  const bytesOf = (prefix: string) => tableBytes(store.db).filter((t) => t.name.startsWith(prefix)).reduce((sum, t) => sum + t.bytes, 0);
  try {
    const some = base.slice(0, HOUR_MARKETS);
    // The polls of one clock hour (15 s past each half minute), each stored 5 s after its readings' time.
    const at0 = Math.max(...some.map((r) => r.at));
    const first = chunkStart(at0) + CHUNK_MS + 15_000;
    for (let i = 0; i < HOUR_POLLS; i++) {
      const t = first + i * POLL_INTERVAL_MS;
      store.readings.savePoll('markets', move(some, t - at0), t + 5_000);
    }
    const readings = store.readings.counts().history;
    store.readings.sealHistory(Number.MAX_SAFE_INTEGER);
    // Sealed chunks and their indexes (the head is empty once all are sealed).
    const perRow = bytesOf('reading_history') / readings;
    store.readings.downsample(Number.MAX_SAFE_INTEGER);
    const perBucket = bytesOf('reading_bucket') / store.readings.counts().buckets;
    return { perRow, perBucket };
  } finally {
    store.close();
  }
}

/** The store benchmarks. */
export const storeBenches: Bench[] = [
  { name: 'store.save', about: 'savePoll of 10,000 market readings in one transaction vs a bare one-table JSON insert', run: save },
  {
    name: 'store.replay',
    about: 'iterateHistory over 100,000 rows (an hour of polls of 833 markets, sealed), and a backtest of one starter rule over them (backtest.replay, B12) and over the same hour folded into 5-minute buckets (backtest.buckets), vs a bare one-table scan + JSON.parse; DB bytes per reading, in the head and sealed',
    run: replay,
  },
];
