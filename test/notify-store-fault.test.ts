/**
 * The dispatcher when the DB refuses writes (a full disk, a read-only file): it neither crashes nor sends what it could
 * not record as sent, keeps the message, and delivers it once when writes work again. The refusal is a trigger that
 * aborts every update of `notify_messages`: the DB says no at the moment of the write, as a full disk does.
 */
import { afterEach, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { createNotifications } from '../src/notify/index.js';
import { slackRecorders } from './fixtures/slack-recorder.js';
import { alert, event, notifier, route, tempStores } from './notify-helpers.js';

const T0 = 1_700_000_000_000;
const stores = tempStores();
const startSlack = slackRecorders();
afterEach(() => stores.cleanup());

it('a delivery record that cannot be written: nothing is sent meanwhile, the message stays pending, and goes out once after', async () => {
  const clock = new ManualClock(T0);
  const slack = await startSlack({ clock });
  const store = stores.open();
  const storeErrors: unknown[] = [];
  const n = createNotifications({
    db: store.db,
    config: {
      notifiers: { slack: notifier({ type: 'slack', webhook_url: slack.url }) },
      routes: [route({ default: true, notify: ['slack'], group_by: ['rule'], group_wait: '0s', group_interval: '1h', repeat_interval: '4h' })],
      inhibit: undefined,
      delivery: { backoff: 1000, max_backoff: 2000, give_up_after: 3_600_000 },
      watchdog: { enabled: false, severity: 'info' },
    },
    clock,
    random: () => 0.5,
    onStoreError: (err) => storeErrors.push(err),
  });
  try {
    const a = alert('util', 'm1');
    store.transaction(() => n.outbox.enqueue([event('firing', a, T0)], T0));
    // Slack is down for the first attempt: the message is stored, pending.
    slack.respond(500);
    await n.dispatcher.runDue();
    expect(slack.posts.map((p) => p.status)).toEqual([500]);
    expect(n.dispatcher.deliveries.list({ status: 'pending' })).toHaveLength(1);

    // The DB refuses writes to the delivery records; Slack is back.
    store.db.exec(`CREATE TRIGGER refuse BEFORE UPDATE ON notify_messages BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END`);
    slack.respond(200);
    for (let i = 0; i < 5; i++) {
      clock.advance(2_500);
      await n.dispatcher.runDue();
    }
    expect(storeErrors.length).toBeGreaterThanOrEqual(1);
    // Nothing went out that could not be recorded as sent.
    expect(slack.posts.map((p) => p.status)).toEqual([500]);

    // Writes work again: the message goes out, once, under its one dedup key.
    store.db.exec('DROP TRIGGER refuse');
    for (let i = 0; i < 5; i++) {
      clock.advance(2_500);
      await n.dispatcher.runDue();
    }
    expect(slack.posts.map((p) => p.status)).toEqual([500, 200]);
    expect(new Set(slack.posts.map((p) => p.key)).size).toBe(1);
    expect(n.dispatcher.deliveries.list({ status: 'sent' })).toHaveLength(1);
    expect(n.dispatcher.deliveries.list({ status: 'pending' })).toEqual([]);
  } finally {
    await n.close(0);
    store.close();
  }
});
