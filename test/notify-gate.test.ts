/**
 * The dispatcher while a poll's transaction is open on the same database (issue 14, B9; src/store/gate.ts): its timer,
 * its delivery worker after a send, and a message's part records all wait at the store's gate and run once the
 * transaction closes, instead of running a statement inside it (which the store refuses, E_STORE_BUSY). Real SQLite file,
 * real yielding transaction; the dispatcher's timers on a manual clock.
 */
import { afterEach, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { createLogger } from '../src/log.js';
import { createNotifications, type NotificationMessage, type Notifier, type NotifyConfig } from '../src/notify/index.js';
import type { DeliveryProgress } from '../src/notify/message.js';
import type { Store } from '../src/store/index.js';
import { nextTurn } from '../src/yielding.js';
import { alert, event, ManualTimers, notifier, route, SlackRecorder, tempStores } from './notify-helpers.js';
import { SlackApiRecorder } from './slack-api-recorder.js';
import { until } from './source-helpers.js';

const T0 = 1_700_000_000_000;
const stores = tempStores();
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
  stores.cleanup();
});

/** Opens a yielding transaction that writes a row and then pauses turn after turn until released. */
async function holdOpen(store: Store): Promise<{ release(): void; done: Promise<void> }> {
  let released = false;
  store.db.exec('CREATE TABLE IF NOT EXISTS poll_rows (v TEXT)');
  const done = store.transactionYielding(
    function* () {
      store.db.prepare('INSERT INTO poll_rows (v) VALUES (?)').run('poll');
      while (!released) yield;
    },
    { sliceMs: 0 },
  );
  while (!store.gate.busy) await nextTurn();
  return { release: () => void (released = true), done };
}

async function setup(notifiers?: Map<string, Notifier>) {
  const clock = new ManualClock(T0);
  const timers = new ManualTimers(clock);
  const slack = await new SlackRecorder(clock).start();
  const store: Store = stores.open();
  const logs: Array<Record<string, unknown>> = [];
  const storeErrors: unknown[] = [];
  const config: NotifyConfig = {
    notifiers: { slack: notifier({ type: 'slack', webhook_url: slack.url, max_alerts: 2 }) },
    routes: [route({ default: true, notify: ['slack'], group_by: ['rule'], group_wait: '0s', group_interval: '1h', repeat_interval: '4h' })],
    inhibit: undefined,
    delivery: { backoff: 1000, max_backoff: 2000, give_up_after: 3_600_000 },
    watchdog: { enabled: false, severity: 'info' },
  };
  const n = createNotifications({
    db: store.db,
    gate: store.gate,
    config,
    clock,
    timers,
    random: () => 0.5,
    log: createLogger({ level: 'debug', write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) }),
    onStoreError: (err) => storeErrors.push(err),
  });
  if (notifiers) n.dispatcher.configure({ notifiers, delivery: config.delivery });
  closers.push(async () => {
    const closing = n.close(0);
    timers.fireDue();
    await closing;
    await slack.stop();
  });
  const fire = (...entities: string[]) =>
    store.transaction(() => n.outbox.enqueue(entities.map((e) => event('firing', alert('util', e), clock.now())), clock.now()));
  return { clock, timers, slack, store, n, d: n.dispatcher, logs, storeErrors, fire };
}

/** Fires the dispatcher's due timers (the manual clock's fire only when told) until `n` messages are recorded sent. */
async function sentOnTimers(s: Awaited<ReturnType<typeof setup>>, n: number): Promise<void> {
  await until(() => {
    s.timers.fireDue();
    return s.d.deliveries.list({ status: 'sent' }).length === n;
  });
}

it('a due message waits for the open transaction and goes out once it commits, with no store error', async () => {
  const s = await setup();
  s.fire('m1');
  s.d.start();
  const held = await holdOpen(s.store);
  s.timers.fireDue();
  // Many turns with the transaction open: the dispatcher must not have touched the database, nor posted.
  for (let i = 0; i < 50; i++) await nextTurn();
  expect(s.slack.posts).toHaveLength(0);
  expect(s.storeErrors).toEqual([]);
  held.release();
  await held.done;
  // The timer it set again once the transaction closed (the manual clock's timers fire when the test says).
  await sentOnTimers(s, 1);
  expect(s.slack.posts).toHaveLength(1);
  expect(s.storeErrors).toEqual([]);
  expect(s.logs.filter((l) => l.level === 'error')).toEqual([]);
});

/**
 * A notifier whose post comes back when the test says, then runs `then` (its part records, if any); the answer comes
 * while a transaction is open, and the event loop has turned 50 times since.
 */
async function answeredDuringTransaction(then: (progress: DeliveryProgress | undefined) => Promise<void>) {
  let answer: (() => void) | undefined;
  const slow: Notifier = {
    name: 'slack',
    type: 'test',
    async send(_m: NotificationMessage, _signal, progress) {
      await new Promise<void>((resolve) => (answer = resolve));
      await then(progress);
    },
  };
  const s = await setup(new Map([['slack', slow]]));
  s.fire('m1');
  s.d.start();
  s.timers.fireDue();
  await until(() => answer !== undefined);
  const held = await holdOpen(s.store);
  answer!();
  for (let i = 0; i < 50; i++) await nextTurn();
  return { s, held };
}

it('a send that finishes while a transaction is open records its delivery (and each part) after the commit, not inside it', async () => {
  const parts: number[] = [];
  const { s, held } = await answeredDuringTransaction(async (progress) => {
    for (const i of [0, 1]) {
      await progress?.partSent(i);
      parts.push(i);
    }
  });
  // The part record waits at the gate: the notifier is still inside its first partSent.
  expect(parts).toEqual([]);
  held.release();
  await held.done;
  await until(() => s.d.deliveries.list({ status: 'sent' }).length === 1);
  expect(parts).toEqual([0, 1]);
  expect(s.d.deliveries.list({ status: 'sent' })[0]).toMatchObject({ parts_sent: 2 });
  expect(s.storeErrors).toEqual([]);
  expect(s.logs.filter((l) => l.level === 'error' || l.level === 'warn')).toEqual([]);
});

it('a one-part send that finishes while a transaction is open is recorded as sent after the commit', async () => {
  let returned = false;
  const { s, held } = await answeredDuringTransaction(async () => {
    returned = true;
  });
  expect(returned).toBe(true);
  held.release();
  await held.done;
  await until(() => s.d.deliveries.list({ status: 'sent' }).length === 1);
  expect(s.storeErrors).toEqual([]);
  expect(s.logs.filter((l) => l.level === 'error' || l.level === 'warn')).toEqual([]);
});

it('the Slack bot records its parent message after an open transaction closes when Slack answers during it', async () => {
  const clock = new ManualClock(T0);
  const api = await new SlackApiRecorder(clock, 'xoxb-gate-test').start();
  const store: Store = stores.open();
  const logs: Array<Record<string, unknown>> = [];
  const storeErrors: unknown[] = [];
  const n = createNotifications({
    db: store.db,
    gate: store.gate,
    config: {
      notifiers: { incidents: notifier({ type: 'slack', token: 'xoxb-gate-test', channel: '#risk', api_url: api.url }) },
      routes: [route({ default: true, notify: ['incidents'], group_by: ['rule'], group_wait: '0s', group_interval: '1m', repeat_interval: '4h' })],
      delivery: { backoff: 1000, max_backoff: 60_000, give_up_after: 3_600_000 },
      watchdog: { enabled: false, severity: 'info' },
    },
    clock,
    log: createLogger({ level: 'debug', write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) }),
    random: () => 0.5,
    onStoreError: (err) => storeErrors.push(err),
  });
  closers.push(async () => {
    await n.close(0);
    await api.stop();
  });
  store.transaction(() => n.outbox.enqueue([event('firing', alert('util', 'm1'), clock.now())], clock.now()));
  const post = api.holdNext('chat.postMessage');
  const delivering = n.dispatcher.runDue();
  await post.reached;
  const held = await holdOpen(store);
  post.release();
  for (let i = 0; i < 50; i++) await nextTurn();
  expect(storeErrors).toEqual([]);
  held.release();
  await held.done;
  await delivering;
  await until(() => n.dispatcher.deliveries.list({ status: 'sent' }).length === 1);
  const threads = store.db.prepare('SELECT channel, ts FROM notify_slack_threads').all();
  expect(threads).toEqual([{ channel: api.channelId, ts: api.parents()[0]!.ts }]);
  expect(storeErrors).toEqual([]);
  expect(logs.filter((l) => l.level === 'error' || l.level === 'warn')).toEqual([]);
});

it('a send that fails while a transaction is open records its retry after the commit, not inside it', async () => {
  const { s, held } = await answeredDuringTransaction(async () => {
    throw new Error('connection reset');
  });
  // The retry record waits at the gate: no statement inside the transaction, so no store error.
  expect(s.storeErrors).toEqual([]);
  held.release();
  await held.done;
  await until(() => (s.d.deliveries.list({ status: 'pending' })[0]?.error ?? null) !== null);
  expect(s.d.deliveries.list({ status: 'pending' })[0]).toMatchObject({ attempts: 1, error: expect.stringContaining('connection reset') });
  expect(s.storeErrors).toEqual([]);
  expect(s.logs.filter((l) => l.level === 'error')).toEqual([]);
});

it('with the gate idle, a pass that finds nothing due sets its timer for the idle look (30 s), not for at once', async () => {
  const s = await setup();
  s.d.start();
  expect(s.timers.delays()).toEqual([0]);
  s.timers.fireDue();
  for (let i = 0; i < 10; i++) await nextTurn();
  // Had it waited for the (idle) gate instead, it would look again at once, and again: a loop that spins.
  expect(s.timers.delays()).toEqual([30_000]);
});

it('a pass held back by one transaction, then another held back by a second: each runs once its transaction commits', async () => {
  const s = await setup();
  s.fire('m1');
  s.d.start();
  const first = await holdOpen(s.store);
  s.timers.fireDue();
  first.release();
  await first.done;
  await sentOnTimers(s, 1);
  // A second alert, and its pass comes due while a second transaction is open.
  s.clock.advance(3_600_000);
  s.fire('m2');
  s.d.wake();
  const second = await holdOpen(s.store);
  s.timers.fireDue();
  for (let i = 0; i < 20; i++) await nextTurn();
  expect(s.slack.posts).toHaveLength(1);
  second.release();
  await second.done;
  await sentOnTimers(s, 2);
  expect(s.storeErrors).toEqual([]);
});
