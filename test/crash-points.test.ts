/**
 * kill -9 at four points of the real daemon, each reached for certain (the daemon is SIGSTOPped and the point proven
 * from outside: its write lock on the DB, the WAL it is writing, the answer handed to its socket) rather than by timing:
 * inside a poll's transaction, between a Slack 2xx and the outbox update, between the parts of a split Slack message,
 * and during a schema migration. After each restart: `PRAGMA integrity_check` is ok, no transition is lost, at most the
 * one message in flight goes again (under the same dedup key), and nothing the daemon produced holds a secret.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, expect, it } from 'vitest';
import { migrations, openStore } from '../src/store/index.js';
import { afterCrash, dbBytes, freeze, freezeWhen, integrity, secretHits, walBytes, writeLockHeld } from './fixtures/daemon/crash.js';
import { apiAlerts, DaemonProcess, until } from './fixtures/daemon/harness.js';
import { daemonScope } from './fixtures/daemon/scope.js';
import { configObject, utilRule, writeConfig, type SimHandle, type SlackRecorder } from './fixtures/daemon/world.js';

const API_KEY = 'crash-api-key-7f3c9a';
const HOOK_PATH = '/services/T0CRASH/B0CRASH/hook-secret-5d2e81';
const { dirs, spikingSim, startSlack } = daemonScope();
const daemons: DaemonProcess[] = [];
afterEach(() => {
  daemons.length = 0;
});

/** A world and a config: the simulator (with its own key), a Slack recorder at a secret path, `rules` sent to Slack. */
async function setup(opts: { markets?: number; rules?: (s: SimHandle) => Array<Record<string, unknown>>; maxAlerts?: number } = {}) {
  const sim = await spikingSim({ apiKey: API_KEY, ...(opts.markets ? { markets: opts.markets } : {}) });
  const slack = await startSlack({ path: HOOK_PATH });
  const dir = dirs.make();
  const db = join(dir, 'lookout.db');
  const cfg = configObject({
    sim,
    db,
    apiKey: API_KEY,
    rules: opts.rules ? opts.rules(sim) : [utilRule('util-high', sim.market(0))],
    notifiers: { slack: { type: 'slack', webhook_url: slack.url, rate_limit: 10, ...(opts.maxAlerts ? { max_alerts: opts.maxAlerts } : {}) } },
    sourceDownAfter: 50,
    extra: opts.markets ? { polls: [{ name: 'markets', kind: 'metrics', cron: '*/1 * * * * *', limit: 100_000 }] } : {},
  }) as { source: Record<string, unknown> };
  // Thousands of markets on a loaded CI machine: the first poll must not time out (a failed run is recorded, and a
  // test that freezes the daemon inside its first poll's transaction needs that run to be the first).
  if (opts.markets) cfg.source.timeout = '60s';
  const file = writeConfig(join(dir, 'lookout.yaml'), cfg);
  return { db, file, sim, slack };
}

function spawn(file: string): DaemonProcess {
  const d = DaemonProcess.spawn(file);
  daemons.push(d);
  return d;
}

/** Nothing any daemon of the test wrote (stdout, stderr, the DB and its WAL) nor any Slack body holds the API key or the webhook's secret part. */
function expectNoSecrets(db: string, slack: SlackRecorder): void {
  const outputs: Record<string, string | Buffer> = { ...dbBytes(db), slack: slack.posts.map((p) => p.raw).join('\n') };
  daemons.forEach((d, i) => Object.assign(outputs, { [`daemon ${i} stdout`]: d.stdout, [`daemon ${i} stderr`]: d.stderr }));
  expect(secretHits(outputs, { 'API key': API_KEY, 'webhook URL': HOOK_PATH })).toEqual([]);
}

const messages = (db: string) =>
  afterCrash(db, (d) => d.prepare(`SELECT dedup_key, status, parts_sent FROM notify_messages ORDER BY id`).all() as Array<{ dedup_key: string; status: string; parts_sent: number }>);
const count = (db: string, table: string) => afterCrash(db, (d) => (d.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n);

it('kill -9 inside the poll transaction: none of that poll is kept, the DB is sound, and the restart fires and announces the alert once', async () => {
  const { db, file, sim, slack } = await setup({ markets: 4_000 });
  const first = spawn(file);
  const polled = () => sim.sim.requests.count('/yields/graphql') > 0;
  // Frozen while its write lock is held and the WAL has grown by megabytes before any poll was committed: only the
  // first poll's transaction writes that much (the migrations of a fresh DB and the start-up write a few KB).
  await freezeWhen(first, 'the daemon inside its first poll transaction', () => polled() && first.count((l) => l.msg === 'poll') === 0 && walBytes(db) > 2_000_000 && writeLockHeld(db), 60_000);
  expect(await first.kill9()).toEqual({ code: null, signal: 'SIGKILL' });

  expect(integrity(db)).toBe('ok');
  // Rolled back whole: no run, no reading, no alert, no notification.
  for (const t of ['poll_runs', 'reading_history', 'latest_entities', 'alerts', 'notify_outbox', 'notify_messages']) expect(count(db, t), t).toBe(0);
  expect(slack.posts).toEqual([]);

  const second = spawn(file);
  await second.waitForPolls(2, 90_000);
  await slack.waitFor('the FIRING message', (p) => p.some((x) => x.status === 200 && x.text.startsWith('FIRING')), 20_000, () => second.diag());
  await second.waitForPolls(1, 30_000);
  expect(slack.about('FIRING', sim.market(0)), slack.summary()).toHaveLength(1);
  expect(integrity(db)).toBe('ok');
  expectNoSecrets(db, slack);
}, 180_000);

it('kill -9 between a Slack 2xx and the outbox update: after the restart that one message goes again, under the same dedup key, and nothing else', async () => {
  const { db, file, sim, slack } = await setup();
  let daemon: DaemonProcess | undefined;
  // Slack has taken the message: the daemon is frozen before it reads the 200 we then write to its socket.
  slack.beforeAnswer = async () => {
    if (slack.posts.length === 1) await freeze(daemon!);
  };
  daemon = spawn(file);
  await until('the 200 handed to the frozen daemon', () => (slack.answered.length === 1 ? true : undefined), 30_000, () => `${slack.summary()}\n${daemon!.diag()}`);
  await daemon.kill9();
  slack.beforeAnswer = undefined;
  const key = slack.posts[0]!.key;
  expect(key).toMatch(/^lk-/);

  expect(integrity(db)).toBe('ok');
  // The outbox never heard of the 2xx: the message is still due, the transition that made it is kept.
  expect(messages(db)).toEqual([expect.objectContaining({ dedup_key: key, status: 'pending' })]);
  expect(afterCrash(db, (d) => d.prepare(`SELECT state FROM alerts WHERE rule = 'util-high'`).all())).toEqual([{ state: 'firing' }]);

  const second = spawn(file);
  await slack.waitFor('the message again', (p) => p.length >= 2, 30_000, () => second.diag());
  await second.waitForLog((l) => l.msg === 'notify_sent', 10_000, 'notify_sent');
  await second.waitForPolls(3, 20_000);
  // Exactly the one in-flight message repeated, with its key; the alert stays firing and is not announced again.
  expect(slack.posts.map((p) => [p.status, p.key]), slack.summary()).toEqual([
    [200, key],
    [200, key],
  ]);
  expect(messages(db)).toEqual([expect.objectContaining({ dedup_key: key, status: 'sent' })]);
  const { url } = (await second.waitForLog((l) => l.msg === 'started', 5_000, 'started')) as { url: string };
  expect((await apiAlerts(url)).find((a) => a.rule === 'util-high')).toMatchObject({ entity: sim.market(0), state: 'firing', last_notified: expect.any(String) });
  expectNoSecrets(db, slack);
}, 90_000);

it('kill -9 between the parts of a split Slack message: after the restart only the part not yet accepted goes, under the same key', async () => {
  // Every market crosses a low threshold at once: one group of ~40 alerts, too many blocks for one Slack post.
  const { db, file, slack } = await setup({ rules: () => [{ name: 'util-any', kind: 'utilization_above', severity: 'warning', threshold: 0.01, clear_below: 0.005 }], maxAlerts: 45 });
  let daemon: DaemonProcess | undefined;
  // Part 1 is answered 200; when part 2 arrives, the daemon is killed with it in flight.
  slack.beforeAnswer = async (post) => {
    if (post.raw.includes('part 2/')) {
      await freeze(daemon!);
      await daemon!.kill9();
    }
  };
  daemon = spawn(file);
  await until('the daemon killed with part 2 in flight', () => (daemon!.running ? undefined : true), 30_000, () => `${slack.summary()}\n${daemon!.diag()}`);
  slack.beforeAnswer = undefined;
  expect(slack.posts.map((p) => /part (\d)\/2/.exec(p.raw)?.[1]), slack.summary()).toEqual(['1', '2']);
  const key = slack.posts[0]!.key;
  expect(slack.posts[1]!.key).toBe(key);

  expect(integrity(db)).toBe('ok');
  // The 2xx of part 1 was recorded before part 2 went out.
  expect(messages(db)).toEqual([expect.objectContaining({ dedup_key: key, status: 'pending', parts_sent: 1 })]);

  const second = spawn(file);
  await second.waitForLog((l) => l.msg === 'notify_sent', 30_000, 'notify_sent');
  await second.waitForPolls(2, 20_000);
  // Part 1 once; part 2 twice (the one in flight at the kill, then its delivery), all under the one key.
  expect(slack.posts.map((p) => [/part (\d)\/2/.exec(p.raw)?.[1], p.key]), slack.summary()).toEqual([
    ['1', key],
    ['2', key],
    ['2', key],
  ]);
  expect(messages(db)).toEqual([expect.objectContaining({ dedup_key: key, status: 'sent', parts_sent: 2 })]);
  expectNoSecrets(db, slack);
}, 90_000);

it('kill -9 during a schema migration: the DB stays at the old version, sound and whole; the restart migrates it with every row', async () => {
  const { db, file, slack } = await setup();
  // A version-4 DB (before the readings became rowid tables) with enough history that migration 5 takes a while.
  const old = openStore(db, { migrations: migrations.slice(0, 4) });
  old.close();
  const rows = 60_000;
  // Recent enough (the last ~17 h) that the start-up prune (retention 1d) keeps them all.
  const t0 = Date.now() - rows * 1000;
  const d = new Database(db);
  d.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${rows})
    INSERT INTO reading_history (kind, entity, at, seen_at, fields, labelset, poll)
    SELECT 'market', printf('0x%064x', i % 400), ${t0} + i * 1000, ${t0} + i * 1000, '{"utilization":0.5,"pad":"' || hex(randomblob(300)) || '"}', 'ls', 'markets' FROM n`);
  d.pragma('wal_checkpoint(TRUNCATE)');
  d.close();
  const version = () => afterCrash(db, (x) => (x.prepare(`SELECT max(version) AS v FROM schema_migrations`).get() as { v: number }).v);

  const first = spawn(file);
  // Frozen while migration 5 copies the history: its write lock held and megabytes in the WAL, version 4 still committed.
  await freezeWhen(first, 'the daemon inside migration 5', () => walBytes(db) > 4_000_000 && writeLockHeld(db), 60_000);
  expect(version()).toBe(4);
  await first.kill9();

  expect(integrity(db)).toBe('ok');
  expect(version()).toBe(4);
  expect(count(db, 'reading_history')).toBe(rows);

  const second = spawn(file);
  await second.waitForPolls(1, 60_000);
  const latest = migrations.at(-1)!.version;
  expect(second.logs().filter((l) => l.msg === 'store_migrated').map((l) => l.version)).toEqual(migrations.filter((m) => m.version >= 5).map((m) => m.version));
  expect(version()).toBe(latest);
  expect(integrity(db)).toBe('ok');
  // Every old row kept (the poll since may have added its own).
  // (Since schema 8 rows are compact: the fixture's are the ones stored at their own time, at or before its last;
  // since schema 12 the hours that are over are sealed into chunks, so they are counted through the store's reads.)
  const reader = openStore(db, { readonly: true });
  try {
    let kept = 0;
    for (const r of reader.readings.iterateHistory(0, t0 + rows * 1000)) if (r.seen_at === r.at) kept++;
    expect(kept).toBe(rows);
  } finally {
    reader.close();
  }
  expectNoSecrets(db, slack);
}, 120_000);
