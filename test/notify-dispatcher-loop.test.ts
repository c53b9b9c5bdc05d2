/**
 * The dispatcher as the daemon runs it: its own timer loop (start, wake, sleep until the next due time), stop with
 * deliveries in flight, a store that refuses writes, and the callbacks and notifiers that throw. The loop's timers are
 * {@link ManualTimers} on a manual clock, the store a real SQLite file, Slack a recorder on loopback.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { NotifyError } from '../src/errors.js';
import { createLogger } from '../src/log.js';
import { createNotifications, Dispatcher, type NotificationMessage, type Notifier, type NotifyConfig, type NotifyOutcome } from '../src/notify/index.js';
import type { Alert } from '../src/model.js';
import type { Store } from '../src/store/index.js';
import { activeTimers, alert, event, ManualTimers, notifier, route, SlackRecorder, tempStores } from './notify-helpers.js';
import { until } from './source-helpers.js';

const T0 = 1_700_000_000_000;
const stores = tempStores();
const servers: SlackRecorder[] = [];
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
  for (const s of servers.splice(0)) await s.stop();
  stores.cleanup();
});

type LogLine = { level: string; msg: string } & Record<string, unknown>;

/** The notify pipeline with manual timers, a recording log, and the results and store errors it reports. */
async function setup(opts: { groupWait?: string; rate?: number; maxAlerts?: number; giveUpAfter?: number; alerts?: boolean; secrets?: string[]; onResult?: (n: string, o: NotifyOutcome) => void; onStoreError?: (err: unknown) => void } = {}) {
  const clock = new ManualClock(T0);
  const timers = new ManualTimers(clock);
  const slack = await new SlackRecorder(clock).start();
  servers.push(slack);
  const store: Store = stores.open();
  const logs: LogLine[] = [];
  const results: Array<[string, NotifyOutcome]> = [];
  const storeErrors: unknown[] = [];
  const notified = new Map<string, number>();
  const firing = new Map<string, Alert>();
  const config: NotifyConfig = {
    notifiers: {
      slack: notifier({ type: 'slack', webhook_url: slack.url, max_alerts: opts.maxAlerts ?? 20, ...(opts.rate !== undefined ? { rate_limit: opts.rate } : {}) }),
    },
    routes: [route({ default: true, notify: ['slack'], group_by: ['rule'], group_wait: opts.groupWait ?? '0s', group_interval: '1h', repeat_interval: '4h' })],
    inhibit: undefined,
    delivery: { backoff: 1000, max_backoff: 2000, give_up_after: opts.giveUpAfter ?? 3_600_000 },
    watchdog: { enabled: false, severity: 'info' },
  };
  const n = createNotifications({
    db: store.db,
    config,
    clock,
    timers,
    random: () => 0.5,
    log: createLogger({ level: 'debug', write: (line) => logs.push(JSON.parse(line) as LogLine) }),
    onResult: opts.onResult ?? ((name, outcome) => results.push([name, outcome])),
    onStoreError: opts.onStoreError ?? ((err) => storeErrors.push(err)),
    ...(opts.secrets ? { secrets: () => opts.secrets! } : {}),
    ...(opts.alerts === false ? {} : { alerts: { firing: () => [...firing.values()], markNotified: (fp: string, at: number) => notified.set(fp, at) } }),
  });
  closers.push(async () => {
    const closing = n.close(0);
    timers.fireDue(); // the stop's grace period of 0 ms: a delivery still in flight is aborted
    await closing;
  });
  return {
    clock,
    timers,
    slack,
    store,
    n,
    d: n.dispatcher,
    config,
    logs,
    results,
    storeErrors,
    notified,
    /** Puts a firing alert into the outbox as the engine does. */
    fire(entity: string, over: Partial<Alert> = {}) {
      this.fireAll([alert('util', entity, over)]);
    },
    /** Puts firing alerts into the outbox in one transaction. */
    fireAll(alerts: Alert[]) {
      for (const a of alerts) firing.set(a.fingerprint, a);
      store.transaction(() => n.outbox.enqueue(alerts.map((a) => event('firing', a, clock.now())), clock.now()));
    },
    /** The log lines named `msg`. */
    logged: (msg: string) => logs.filter((l) => l.msg === msg),
  };
}

/** Makes every write of `table` fail as a full disk does; returns the undo. */
function refuseWrites(store: Store, table: string, op: 'UPDATE' | 'DELETE'): () => void {
  store.db.exec(`CREATE TRIGGER refuse BEFORE ${op} ON ${table} BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END`);
  return () => store.db.exec('DROP TRIGGER refuse');
}

/** A notifier that throws `err` on each send, counting the calls. */
function throwing(err: unknown): Notifier & { calls: number } {
  const n = {
    name: 'slack',
    type: 'test',
    calls: 0,
    async send(_m: NotificationMessage): Promise<void> {
      n.calls += 1;
      throw err;
    },
  };
  return n;
}

describe('the timer loop', () => {
  it('sleeps until nothing: not before start; start runs at once; then the next due time, else the 30 s idle look', async () => {
    const s = await setup({ groupWait: '10s' });
    s.fire('m1');
    s.d.wake();
    expect(s.timers.delays()).toEqual([]); // not started: wake does nothing
    s.d.start();
    expect(s.timers.delays()).toEqual([0]);
    expect(s.timers.fireDue()).toBe(1); // folds the outbox into a group that waits group_wait
    expect(s.slack.posts).toEqual([]);
    expect(s.timers.delays()).toEqual([10_000]);
    s.clock.advance(9_999);
    expect(s.timers.fireDue()).toBe(0);
    s.clock.advance(1);
    expect(s.timers.fireDue()).toBe(1); // flushes the group and starts the delivery
    await until(() => s.d.deliveries.list({ status: 'sent' }).length === 1);
    expect(s.slack.posts.map((p) => p.at)).toEqual([T0 + 10_000]);
    // Next due is the group's interval (1 h): the loop looks again sooner, after the idle interval.
    expect(s.d.nextDueAt()).toBe(T0 + 10_000 + 3_600_000);
    expect(s.timers.delays()).toEqual([30_000]);
  });

  it('does not spin while a delivery is in flight: the worker looks again when it is done', async () => {
    const s = await setup();
    s.slack.respond(200, { hang: true });
    s.fire('m1');
    s.d.start();
    s.timers.fireDue();
    await s.slack.waitForCount(1);
    expect(s.timers.delays()).toEqual([30_000]); // not a look at once that would find the same message, in flight
  });

  it('does not spin while the rate limit holds a message: it sleeps until the next token', async () => {
    const s = await setup({ rate: 1 });
    s.fireAll([alert('util', 'm1'), alert('other', 'm2')]);
    s.d.start();
    s.timers.fireDue();
    await until(() => s.d.deliveries.list({ status: 'sent' }).length === 1);
    await until(() => s.timers.delays()[0] !== 30_000); // the worker's own look, once it is done
    expect(s.timers.delays()).toEqual([1_000]);
    expect(s.d.nextDueAt()).toBe(T0 + 1_000);
    s.clock.advance(1_000);
    s.timers.fireDue();
    await until(() => s.d.deliveries.list({ status: 'sent' }).length === 2);
  });

  it('does not spin while a retry pauses the notifier with other messages due: it sleeps until the pause ends', async () => {
    const s = await setup({ rate: 1000 });
    s.slack.respondInTurn(500);
    s.fireAll([alert('util', 'm1'), alert('other', 'm2')]);
    s.d.start();
    s.timers.fireDue();
    await until(() => s.results.length === 1);
    expect(s.results).toEqual([['slack', 'retry']]);
    await until(() => s.timers.delays()[0] !== 30_000);
    expect(s.timers.delays()).toEqual([750]); // backoff 1 s, jitter at its middle
    expect(s.d.nextDueAt()).toBe(T0 + 750);
    s.clock.advance(750);
    s.timers.fireDue();
    await until(() => s.d.deliveries.list({ status: 'sent' }).length === 2);
  });

  it('maxIdleMs bounds the sleep even when something is due later', async () => {
    const s = await setup({ groupWait: '1m' });
    // With an outbox but no watchdog setting, start() leaves the watchdog alone.
    const d = new Dispatcher({ db: s.store.db, outbox: s.n.outbox, notifiers: new Map(), delivery: s.config.delivery, clock: s.clock, timers: s.timers, maxIdleMs: 5_000 });
    closers.push(() => d.stop(0));
    s.fire('m1');
    d.start();
    s.timers.fireDue();
    expect(d.nextDueAt()).toBe(T0 + 60_000);
    expect(s.timers.delays()).toEqual([5_000]);
  });

  it('wake replaces a later timer by one now, and keeps a timer that is already as early', async () => {
    const s = await setup();
    s.d.start();
    s.timers.fireDue();
    expect(s.timers.delays()).toEqual([30_000]);
    s.d.wake();
    expect(s.timers.delays()).toEqual([0]); // the 30 s timer was cleared, not left to run as well
    s.d.wake();
    expect(s.timers.delays()).toEqual([0]);
  });

  it('a pass whose fold cannot write reports the store error and looks again after 1 s, then delivers', async () => {
    const s = await setup();
    const allow = refuseWrites(s.store, 'notify_outbox', 'DELETE');
    s.fire('m1');
    s.d.start();
    s.timers.fireDue();
    expect(s.storeErrors).toHaveLength(1);
    expect(String(s.storeErrors[0])).toContain('database or disk is full');
    expect(s.logged('notify_pump_failed').map((l) => [l.level, (l.err as { message: string }).message])).toEqual([['error', 'database or disk is full']]);
    expect(s.timers.delays()).toEqual([1_000]);
    allow();
    s.clock.advance(1_000);
    s.timers.fireDue();
    await until(() => s.d.deliveries.list({ status: 'sent' }).length === 1);
    expect(s.slack.posts).toHaveLength(1);
  });
});

describe('stop', () => {
  it('flushes and delivers what is due, clears the loop and its own deadline timer, and wake no longer schedules', async () => {
    const s = await setup();
    s.d.start();
    s.timers.fireDue();
    expect(s.timers.delays()).toEqual([30_000]);
    s.fire('m1'); // enqueued, not yet woken: stop's own pass takes it
    await s.d.stop(2_000);
    expect(s.slack.posts).toHaveLength(1);
    expect(s.d.deliveries.list({ status: 'sent' })).toHaveLength(1);
    expect(s.timers.delays()).toEqual([]);
    s.d.wake();
    expect(s.timers.delays()).toEqual([]);
    expect(s.logged('stop_aborting_deliveries')).toEqual([]);
  });

  it('with a delivery in flight: waits, aborts it at the deadline, the message stays pending, and goes out after', async () => {
    const s = await setup();
    s.slack.respond(200, { hang: true });
    s.fire('m1');
    s.d.start();
    s.timers.fireDue();
    await s.slack.waitForCount(1);
    let stopped = false;
    const stopping = s.d.stop(2_000).then(() => (stopped = true));
    expect(s.timers.delays()).toEqual([2_000]); // the loop timer is gone; the grace period is the one timer left
    await new Promise((r) => setImmediate(r));
    expect(stopped).toBe(false);
    s.clock.advance(2_000);
    s.timers.fireDue();
    await stopping;
    expect(s.logged('stop_aborting_deliveries').map(({ level, notifiers, grace_ms }) => ({ level, notifiers, grace_ms }))).toEqual([
      { level: 'warn', notifiers: ['slack'], grace_ms: 2_000 },
    ]);
    // Aborted, not failed: no retry recorded, no error, nothing reported.
    const [row] = s.d.deliveries.list();
    expect(row).toMatchObject({ status: 'pending', attempts: 0, error: null, next_attempt_at: T0 });
    expect(s.results).toEqual([]);
    expect(s.timers.delays()).toEqual([]);
    // The same dispatcher driven by hand afterwards is not left aborted.
    s.slack.respond(200);
    await s.d.runDue();
    expect(s.slack.delivered().map((p) => p.key)).toEqual([s.slack.posts[0]!.key]);
    expect(s.d.deliveries.list({ status: 'sent' })).toHaveLength(1);
  });

  it('a stop whose own pass cannot write logs it and still resolves', async () => {
    const s = await setup();
    refuseWrites(s.store, 'notify_outbox', 'DELETE');
    s.fire('m1');
    await s.d.stop(0);
    expect(s.logged('notify_pump_failed').map((l) => [l.level, (l.err as { message: string }).message])).toEqual([['error', 'database or disk is full']]);
    expect(s.slack.posts).toEqual([]);
  });
});

describe('delivery edges', () => {
  it('a notifier that does not heed the abort is waited for: stop resolves only once it returns, and its message counts as sent', async () => {
    const s = await setup();
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let sends = 0;
    const stubborn: Notifier = {
      name: 'slack',
      type: 'test',
      async send() {
        sends += 1;
        await released;
      },
    };
    s.d.configure({ notifiers: new Map([['slack', stubborn]]), delivery: s.config.delivery });
    s.fire('m1');
    s.d.start();
    s.timers.fireDue();
    await until(() => sends === 1);
    let stopped = false;
    const stopping = s.d.stop(1_000).then(() => (stopped = true));
    s.clock.advance(1_000);
    s.timers.fireDue(); // the grace period is over: abort
    await new Promise((r) => setImmediate(r));
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(s.d.deliveries.list()).toMatchObject([{ status: 'sent', attempts: 1 }]);
  });

  it('with the real timers the loop runs by itself', async () => {
    const s = await setup();
    const d = new Dispatcher({ db: s.store.db, notifiers: s.n.notifiers, delivery: s.config.delivery, clock: s.clock, silences: s.n.silences });
    closers.push(() => d.stop(0));
    s.fire('m1');
    d.start(); // nothing else drives it: no runDue, no manual timers

    await until(() => s.slack.posts.length === 1);
    await until(() => d.deliveries.list({ status: 'sent' }).length === 1);
  });

  it.each([
    ['1000 a second', 1000, 0],
    ['1 a second', 1, 1],
  ])('a message in several posts defers a part only when the rate limit holds it (%s)', async (_name, rate, deferred) => {
    const s = await setup({ maxAlerts: 45, rate });
    s.fireAll(Array.from({ length: 30 }, (_, i) => alert('util', `m${i}`, { annotations: { summary: `m${i} ${'x'.repeat(4000)}` } })));
    await s.d.runDue();
    const [row] = s.d.deliveries.list();
    expect(s.logged('notify_part_deferred').map((l) => [l.level, l.notifier, l.dedup_key])).toEqual(deferred ? [['debug', 'slack', row!.dedup_key]] : []);
    expect(s.slack.posts).toHaveLength(2 - deferred);
  });

  it('the attempt due exactly when give_up_after runs out is the last', async () => {
    const s = await setup({ giveUpAfter: 3_000, rate: 1000 });
    s.slack.respond(500);
    s.fire('m1');
    for (let t = 0; t <= 5_000; t += 250) {
      await s.d.runDue();
      s.clock.advance(250);
    }
    // Backoff 1 s doubling to at most 2 s, jitter at its middle: T0, +750, +2250, then the give-up time itself.
    expect(s.slack.posts.map((p) => p.at - T0)).toEqual([0, 750, 2_250, 3_000]);
    expect(s.d.deliveries.list()).toMatchObject([{ status: 'failed', attempts: 4 }]);
    expect(s.results.map(([, o]) => o)).toEqual(['retry', 'retry', 'retry', 'failed']);
    expect(s.logged('notify_failed')[0]!.gave_up).toBe(true);
  });

  it('a delivery record that cannot be written pauses the notifier 1 s, logs it, and reports the store error', async () => {
    const s = await setup();
    s.fire('m1');
    await s.d.runDue();
    expect(s.slack.posts).toHaveLength(1);
    s.fire('m2');
    s.clock.advance(3_600_000);
    const allow = refuseWrites(s.store, 'notify_messages', 'UPDATE');
    await s.d.runDue();
    expect(s.logged('notify_store_failed').map((l) => [l.level, l.notifier])).toEqual([['error', 'slack']]);
    expect(s.storeErrors).toHaveLength(1);
    expect(s.d.nextDueAt()).toBe(s.clock.now() + 1_000);
    allow();
    await s.d.runDue();
    expect(s.slack.posts).toHaveLength(1); // paused: nothing tried within the second
    s.clock.advance(1_000);
    await s.d.runDue();
    expect(s.slack.posts).toHaveLength(2);
    // The pause is over (it ended exactly now): it no longer counts as something due.
    expect(s.d.nextDueAt()).toBeGreaterThan(s.clock.now());
  });

  it('callbacks that throw are logged and change nothing', async () => {
    const s = await setup({
      onResult: () => {
        throw new Error('metrics broke');
      },
      onStoreError: () => {
        throw new Error('alerting broke');
      },
    });
    s.fire('m1');
    await s.d.runDue();
    expect(s.d.deliveries.list({ status: 'sent' })).toHaveLength(1);
    expect(s.logged('notify_callback_failed').map((l) => [l.level, (l.err as { message: string }).message])).toEqual([['warn', 'metrics broke']]);
    s.fire('m2');
    s.clock.advance(3_600_000);
    refuseWrites(s.store, 'notify_messages', 'UPDATE');
    await s.d.runDue();
    expect(s.logged('notify_callback_failed').map((l) => (l.err as { message: string }).message)).toEqual(['metrics broke', 'alerting broke']);
  });

  it('an alert that cannot be marked notified does not undo the delivery', async () => {
    const s = await setup({ alerts: false });
    const d = new Dispatcher({
      db: s.store.db,
      notifiers: s.n.notifiers,
      delivery: s.config.delivery,
      clock: s.clock,
      log: createLogger({ write: (line) => s.logs.push(JSON.parse(line) as LogLine) }),
      alerts: {
        firing: () => [alert('util', 'm1'), alert('util', 'm2')],
        markNotified: () => {
          throw new Error('alerts table locked');
        },
      },
    });
    // A watchdog setting without an outbox to put it in: nothing to do.
    d.configure({ notifiers: s.n.notifiers, delivery: s.config.delivery, watchdog: { enabled: true, severity: 'info' } });
    s.fire('m1');
    await d.runDue();
    expect(d.deliveries.list({ status: 'sent' })).toHaveLength(1);
    expect(s.logged('notify_mark_notified_failed').map((l) => [l.level, l.fingerprint])).toEqual([['warn', 'util/m1']]);
    expect(s.logged('notify_sent').map(({ notifier, status, alerts, attempts }) => ({ notifier, status, alerts, attempts }))).toEqual([
      { notifier: 'slack', status: 'firing', alerts: 1, attempts: 1 },
    ]);
    // No onResult and no onStoreError given: nothing to call, nothing fails.
    s.fire('m2');
    s.clock.advance(3_600_000);
    refuseWrites(s.store, 'notify_messages', 'UPDATE');
    await d.runDue();
    expect(s.logged('notify_store_failed')).toHaveLength(1);
    expect(s.logged('notify_callback_failed')).toEqual([]);
  });

  it('messages of a notifier no longer configured are dropped, each reported, and the rest still go out', async () => {
    const s = await setup();
    s.fire('m1');
    s.d.configure({ notifiers: new Map(), delivery: s.config.delivery });
    await s.d.runDue();
    const [row] = s.d.deliveries.list();
    expect(row).toMatchObject({ status: 'dropped', error: "notifier 'slack' is no longer configured", attempts: 1, last_attempt_at: T0 });
    expect(s.results).toEqual([['slack', 'dropped']]);
    expect(s.logged('notify_dropped').map((l) => [l.level, l.notifier, l.reason])).toEqual([['warn', 'slack', 'notifier not configured']]);
    expect(s.slack.posts).toEqual([]);
    expect(s.timers.delays()).toEqual([]); // driven by hand: runDue never sets the loop going
  });

  it('an unexpected error from a notifier is retried with its name and message, secrets scrubbed; a NotifyError that retrying cannot fix fails at once', async () => {
    const s = await setup({ secrets: ['hunter22'] });
    const boom = throwing(new TypeError('socket hunter22 closed'));
    s.d.configure({ notifiers: new Map([['slack', boom]]), delivery: s.config.delivery });
    s.fire('m1');
    await s.d.runDue();
    const [row] = s.d.deliveries.list();
    expect(row).toMatchObject({ status: 'pending', attempts: 1, error: 'slack: unexpected TypeError: socket [redacted] closed', next_attempt_at: T0 + 750 }); // backoff 1 s with the jitter at 0.5
    expect(s.results).toEqual([['slack', 'retry']]);
    const retry = s.logged('notify_retry')[0]!;
    expect([retry.level, retry.attempts, retry.retry_in_ms, retry.error]).toEqual(['warn', 1, 750, 'slack: unexpected TypeError: socket [redacted] closed']);

    const refused = throwing(new NotifyError('slack: 403 invalid_token', { notifier: 'slack', retryable: false }));
    s.d.configure({ notifiers: new Map([['slack', refused]]), delivery: s.config.delivery });
    s.clock.advance(1_000);
    await s.d.runDue();
    expect(s.d.deliveries.list()[0]).toMatchObject({ status: 'failed', attempts: 2, error: 'slack: 403 invalid_token' });
    expect(s.results).toEqual([['slack', 'retry'], ['slack', 'failed']]);
    const failed = s.logged('notify_failed')[0]!;
    expect([failed.level, failed.attempts, failed.gave_up, failed.error]).toEqual(['error', 2, false, 'slack: 403 invalid_token']);
    expect(refused.calls).toBe(1);
  });

  it('a thrown non-Error is recorded by its text', async () => {
    const s = await setup();
    s.d.configure({ notifiers: new Map([['slack', throwing('plain string')]]), delivery: s.config.delivery });
    s.fire('m1');
    await s.d.runDue();
    expect(s.d.deliveries.list()[0]!.error).toBe('slack: unexpected error: plain string');
    s.d.configure({ notifiers: new Map([['slack', throwing(undefined)]]), delivery: s.config.delivery });
    s.clock.advance(60_000);
    await s.d.runDue();
    expect(s.d.deliveries.list()[0]!.error).toBe('slack: unexpected error: undefined');
  });

  it('a look already set for sooner is kept when a worker finishes and asks for a later one', async () => {
    const s = await setup();
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const slow: Notifier = { name: 'slack', type: 'test', send: () => released };
    s.d.configure({ notifiers: new Map([['slack', slow]]), delivery: s.config.delivery });
    s.fire('m1');
    s.d.start();
    s.timers.fireDue();
    expect(s.timers.delays()).toEqual([30_000]); // in flight
    s.d.wake();
    expect(s.timers.delays()).toEqual([0]);
    release();
    await until(() => s.d.deliveries.list({ status: 'sent' }).length === 1);
    await new Promise((r) => setImmediate(r));
    expect(s.timers.delays()).toEqual([0]); // the worker's own look (30 s) did not push it back
  });
});

describe('inhibition without an engine view', () => {
  it('the firing alerts of the groups are the sources: a source_down mutes the alerts of its poll', async () => {
    const s = await setup({ alerts: false });
    const down = alert('source-down', 'markets', { kind: 'source_down' }, { alertname: 'source_down', poll: 'markets' });
    const util = alert('util', 'm1');
    s.store.transaction(() => s.n.outbox.enqueue([event('firing', down, T0), event('firing', util, T0)], T0));
    await s.d.runDue();
    expect(s.results).toContainEqual(['slack', 'inhibited']);
    const sent = s.d.deliveries.list().flatMap((r) => r.message.alerts.map((a) => a.alert.fingerprint));
    expect(sent).toEqual(['source-down/markets']);
    expect(s.logged('notify_sent')).toHaveLength(1);
    expect(s.logged('notify_mark_notified_failed')).toEqual([]); // no engine view: nothing to mark
  });
});

describe('the real timers (none injected)', () => {
  it('stop() clears the loop’s timer and its own grace timer: none is left to run after it returned', async () => {
    const store = stores.open();
    const d = new Dispatcher({ db: store.db, notifiers: new Map(), delivery: { backoff: 1000, max_backoff: 2000, give_up_after: 3_600_000 } });
    const before = activeTimers();
    d.start(); // the loop's first look, at once
    expect(activeTimers()).toBe(before + 1);
    await d.stop(60_000);
    // Left behind, the look would run on a stopped dispatcher, and the grace timer would abort the next run's deliveries.
    expect(activeTimers()).toBe(before);
  });
});
