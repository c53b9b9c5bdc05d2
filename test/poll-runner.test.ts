/**
 * The poll runner when the store cannot take the poll: another connection holds the database's write lock past the
 * busy timeout. The poll's transaction rolls back whole, so the alert it would have resolved stays firing; the run
 * is returned as failed with reason `store` and counted in lookout_poll_errors_total, while lookout_source_up (the
 * service answered) stays 1; once the lock is gone the next run applies normally.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { createMetrics } from '../src/metrics/index.js';
import type { AlertEvent } from '../src/model.js';
import { runPoll } from '../src/poll-runner.js';
import { pollSchema } from '../src/source/polls/schemas.js';
import { openStore } from '../src/store/index.js';
import { engineFor, market, MIN, pollStages, rule, T0, tempDirs } from './alerts-helpers.js';
import { samples } from './metrics-fixtures.js';

const dirs = tempDirs();

/** Runs `fn` while a second connection to the database file holds its write lock. */
async function whileLocked<T>(path: string, fn: () => Promise<T>): Promise<T> {
  const other = new Database(path);
  other.exec('BEGIN IMMEDIATE');
  try {
    return await fn();
  } finally {
    other.exec('ROLLBACK');
    other.close();
  }
}
afterEach(() => dirs.cleanup());

it('a poll the store cannot take changes no alert, is a failed run with reason store, counted, and the next run applies', async () => {
  const path = join(dirs.make(), 'lookout.db');
  const store = openStore(path, { busyTimeoutMs: 50 });
  const clock = new ManualClock(T0);
  const metrics = createMetrics({ processMetrics: false });
  const engine = engineFor(store, [rule({ name: 'util-high', kind: 'utilization_above', severity: 'critical', threshold: 0.9 })], { clock });
  const events: AlertEvent[] = [];
  const storeFailures: string[] = [];
  let utilization = 0.97;
  let serviceDown = false;
  const stages = pollStages(store, clock, engine, {
    fetch: async (_poll, _signal, now) => {
      if (serviceDown) throw new Error('POST /yields/graphql: 503');
      return { readings: [market('m1', now, { utilization })], rejected: [] };
    },
    enqueue: (evs) => void events.push(...(evs as AlertEvent[])),
    storeFailed: (poll) => {
      storeFailures.push(poll);
      metrics.pollStoreFailed(poll);
    },
    after: (o, seconds) => metrics.observePoll(o, seconds),
  });
  const poll = pollSchema.parse({ name: 'markets', kind: 'metrics', cron: '* * * * *' });
  const run = async () => {
    clock.advance(MIN);
    return runPoll(poll, new AbortController().signal, stages);
  };
  const state = () => engine.alerts().map((a) => `${a.rule}/${a.entity} ${a.state} value=${a.value}`);

  try {
    expect((await run()).ok).toBe(true);
    expect(state()).toEqual(['util-high/m1 firing value=0.97']);
    const runsBefore = store.polls.last('markets');

    // The service now says the market is fine, but another writer holds the lock.
    utilization = 0.5;
    const locked = await whileLocked(path, run);
    expect(locked).toMatchObject({ ok: false, errorReason: 'store', readings: [] });
    expect(locked.error).toMatch(/^could not store the poll: database is locked/);
    expect(storeFailures).toEqual(['markets']);
    expect(state()).toEqual(['util-high/m1 firing value=0.97']); // nothing resolved
    expect(events.map((e) => e.type)).toEqual(['firing']);
    expect(store.polls.last('markets')).toEqual(runsBefore); // the run itself rolled back too
    expect(store.readings.latest('market', 'm1')?.fields.utilization).toBe(0.97);
    const text = await metrics.scrape();
    expect(samples(text, 'lookout_poll_errors_total')).toEqual([{ name: 'lookout_poll_errors_total', labels: { poll: 'markets', reason: 'store' }, value: 1 }]);
    expect(samples(text, 'lookout_source_up').map((s) => s.value)).toEqual([1]);

    // A run that fails at the source while the store is locked says both.
    serviceDown = true;
    const both = await whileLocked(path, run);
    serviceDown = false;
    expect(both).toMatchObject({ ok: false, errorReason: 'store', error: 'POST /yields/graphql: 503; then could not store the poll: database is locked' });
    expect(storeFailures).toEqual(['markets', 'markets']);

    // The lock is gone: the next run stores and resolves.
    expect((await run()).ok).toBe(true);
    expect(events.map((e) => e.type)).toEqual(['firing', 'resolved']);
    expect(store.readings.latest('market', 'm1')?.fields.utilization).toBe(0.5);
  } finally {
    store.close();
  }
});

it('a storm is stored in slices of the one transaction: every notification in order, and none seen before the commit', async () => {
  const store = openStore(join(dirs.make(), 'lookout.db'));
  const clock = new ManualClock(T0);
  const engine = engineFor(store, [rule({ name: 'util-high', kind: 'utilization_above', severity: 'critical', threshold: 0.9 })], { clock });
  const batches: number[] = [];
  const enqueued: string[] = [];
  const seenAtGate: number[] = [];
  // Turns of the event loop so far, counted by a callback that queues itself again on each turn.
  let turns = 0;
  let counting = true;
  const count = () => {
    turns++;
    if (counting) setImmediate(count);
  };
  setImmediate(count);
  const turnAtBatch: number[] = [];
  const stages = pollStages(store, clock, engine, {
    sliceMs: 0,
    fetch: async (_poll, _signal, now) => ({ readings: Array.from({ length: 250 }, (_, i) => market(`m${i}`, now, { utilization: 0.97 })), rejected: [] }),
    enqueue: (evs) => {
      batches.push(evs.length);
      turnAtBatch.push(turns);
      enqueued.push(...(evs as AlertEvent[]).map((e) => e.alert.entity));
      // A reader at the gate meanwhile runs after the commit: it sees all 250 firing alerts, never part of them.
      if (batches.length === 1) void store.gate.exclusive(() => seenAtGate.push(engine.repo.active().length));
    },
  });
  try {
    clock.advance(MIN);
    const out = await runPoll(pollSchema.parse({ name: 'markets', kind: 'metrics', cron: '* * * * *' }), new AbortController().signal, stages);
    expect(out.ok).toBe(true);
    counting = false;
    expect(batches).toEqual([100, 100, 50]);
    // The event loop turned between the slices.
    expect(turnAtBatch[1]!).toBeGreaterThan(turnAtBatch[0]!);
    expect(turnAtBatch[2]!).toBeGreaterThan(turnAtBatch[1]!);
    expect(enqueued).toEqual(Array.from({ length: 250 }, (_, i) => `m${i}`));
    await store.gate.exclusive(() => undefined);
    expect(seenAtGate).toEqual([250]);
  } finally {
    store.close();
  }
});

it('a market the service no longer returns loses its latest reading; one whose row was rejected keeps it', async () => {
  const store = openStore(join(dirs.make(), 'lookout.db'));
  const clock = new ManualClock(T0);
  const engine = engineFor(store, [rule({ name: 'util-high', kind: 'utilization_above', severity: 'critical', threshold: 0.9 })], { clock });
  let returned = ['m1', 'm2', 'm3'];
  let rejected: string[] = [];
  const stages = pollStages(store, clock, engine, {
    fetch: async (_poll, _signal, now) => ({
      readings: returned.map((m) => market(m, now, { utilization: 0.5 })),
      rejected: rejected.map((entity) => ({ reason: 'missing_field', entity, detail: 'no utilization' })),
    }),
  });
  const poll = pollSchema.parse({ name: 'markets', kind: 'metrics', cron: '* * * * *' });
  const run = async () => {
    clock.advance(MIN);
    expect((await runPoll(poll, new AbortController().signal, stages)).ok).toBe(true);
  };
  const latest = () => store.readings.entitiesForPoll('markets').map((e) => e.entity);
  try {
    await run();
    expect(latest()).toEqual(['m1', 'm2', 'm3']);
    // m2 gone from the answer, m3's row there but rejected: neither present nor absent.
    returned = ['m1'];
    rejected = ['m3'];
    await run();
    expect(latest()).toEqual(['m1', 'm3']);
    expect(store.readings.latest('market', 'm2')).toBeUndefined();
    expect(store.readings.latest('market', 'm3')?.at).toBe(T0 + MIN);
    rejected = [];
    await run();
    expect(latest()).toEqual(['m1']);
  } finally {
    store.close();
  }
});
