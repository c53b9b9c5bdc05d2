/** The notify pipeline end to end over a real SQLite file and a recording Slack server on loopback, with a manual clock. */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import type { Alert, AlertEvent } from '../src/model.js';
import { createNotifications, type NotifyConfig, type NotifyOutcome } from '../src/notify/index.js';
import { defaultInhibitRules, Inhibitor } from '../src/notify/inhibit.js';
import { effectiveTiming, pickGroupLabels, Routing } from '../src/notify/routing.js';
import type { InhibitConfig, RouteConfig } from '../src/notify/schema.js';
import type { Store } from '../src/store/index.js';
import { alert, event, notifier, route, SlackRecorder, tempStores, type SlackPost } from './notify-helpers.js';

const T0 = 1_700_000_000_000;
const stores = tempStores();
const servers: SlackRecorder[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
  stores.cleanup();
});

async function setup(
  opts: {
    routes?: RouteConfig[];
    inhibit?: InhibitConfig[];
    rate?: number;
    maxAlerts?: number;
    delivery?: Partial<NotifyConfig['delivery']>;
    /** A second Slack-like notifier named `pager` on its own recorder. */
    pager?: boolean;
    /** Rules' own `notify` lists (rule → notifier names). */
    ruleNotify?: ReadonlyMap<string, readonly string[]>;
    /** `server.external_url`: messages link each alert to its page. */
    externalUrl?: string;
  } = {},
) {
  const clock = new ManualClock(T0);
  const slack = await new SlackRecorder(clock).start();
  servers.push(slack);
  const pager = opts.pager ? await new SlackRecorder(clock).start() : undefined;
  if (pager) servers.push(pager);
  const store = stores.open();
  const firing = new Map<string, Alert>();
  const notified = new Map<string, number>();
  const results: Array<[string, NotifyOutcome]> = [];
  const config: NotifyConfig = {
    notifiers: {
      slack: notifier({ type: 'slack', webhook_url: slack.url, rate_limit: opts.rate ?? 1, max_alerts: opts.maxAlerts ?? 20 }),
      ...(pager ? { pager: notifier({ type: 'slack', webhook_url: pager.url, rate_limit: opts.rate ?? 1 }) } : {}),
    },
    routes: opts.routes ?? [route({ default: true, notify: ['slack'], group_by: ['rule'], group_wait: '10s', group_interval: '1m', repeat_interval: '4h' })],
    inhibit: opts.inhibit,
    delivery: { backoff: 1000, max_backoff: 60_000, give_up_after: 3_600_000, ...opts.delivery },
    watchdog: { enabled: false, severity: 'info' },
    ...(opts.externalUrl ? { server: { external_url: opts.externalUrl } } : {}),
  };
  const notifications = (db: Store['db']) =>
    createNotifications({
      db,
      config,
      clock,
      random: () => 0.5,
      ...(opts.ruleNotify ? { ruleNotify: opts.ruleNotify } : {}),
      alerts: { firing: () => [...firing.values()], markNotified: (fp, at) => notified.set(fp, at) },
      onResult: (name, outcome) => results.push([name, outcome]),
    });
  const s = {
    clock,
    slack,
    pager,
    store,
    n: notifications(store.db),
    results,
    notified,
    firing,
    /** What the alert engine does: change state and enqueue in one transaction. */
    apply(events: AlertEvent[]) {
      s.store.transaction(() => {
        for (const e of events) {
          if (e.type === 'firing') firing.set(e.alert.fingerprint, e.alert);
          if (e.type === 'resolved') firing.delete(e.alert.fingerprint);
        }
        s.n.outbox.enqueue(events, clock.now());
      });
    },
    /** Advances the clock in steps, running the dispatcher at each. */
    async advance(ms: number, step = 1000) {
      for (let t = 0; t < ms; t += step) {
        clock.advance(Math.min(step, ms - t));
        await s.n.dispatcher.runDue();
      }
    },
    /** A daemon restart: stops the dispatcher, closes the database, reopens the same file and builds the pipeline again. */
    async restart() {
      await s.n.close();
      s.store.close();
      s.store = stores.reopen(s.store.path);
      s.n = notifications(s.store.db);
    },
  };
  return s;
}

const count = (results: Array<[string, NotifyOutcome]>, o: NotifyOutcome) => results.filter(([, r]) => r === o).length;

/** 30 alerts of one group with long summaries, all listed (max_alerts 45): more blocks than one Slack message allows, so two posts. */
function longGroup(): { ids: string[]; events: AlertEvent[] } {
  const ids = Array.from({ length: 30 }, (_, i) => `m${i}`);
  return { ids, events: ids.map((id) => event('firing', alert('util', id, { annotations: { summary: `${id} ${'x'.repeat(4000)}` } }), T0)) };
}

/** The markets posts list: each alert's labels line names its market once. */
const listedMarkets = (posts: SlackPost[]) => posts.flatMap((p) => [...JSON.stringify(p.body.blocks).matchAll(/market_id=`(m\d+)`/g)].map((m) => m[1]!));

/** A post's "part i/n" and the status Slack answered. */
const partAndStatus = (p: SlackPost) => [/part (\d+\/\d+)/.exec(p.raw)?.[1], p.status];

const splitRoute = () => [route({ default: true, notify: ['slack'], group_by: ['rule'], group_wait: '0s' })];

describe('grouping', () => {
  it('batches alerts of one group that arrive within group_wait into one message', async () => {
    const s = await setup();
    s.apply([event('firing', alert('util', 'm1'), T0)]);
    await s.n.dispatcher.runDue();
    expect(s.slack.posts).toHaveLength(0); // the first of a new group waits group_wait
    await s.advance(4000);
    s.apply([event('firing', alert('util', 'm2'), s.clock.now()), event('firing', alert('other', 'm3'), s.clock.now())]);
    await s.advance(6000);
    expect(s.slack.posts).toHaveLength(1);
    expect(s.slack.posts[0]!.raw).toContain('m1');
    expect(s.slack.posts[0]!.raw).toContain('m2');
    expect(s.slack.posts[0]!.body.text).toContain('FIRING:2 util');
    await s.advance(4000); // the `other` group waited its own group_wait
    expect(s.slack.posts).toHaveLength(2);
    expect(s.notified.get('util/m1')).toBe(T0 + 10_000); // when group_wait ran out, not when it fired
  });

  it('sends a new alert of an already-notified group after group_interval, listing the whole group', async () => {
    const s = await setup();
    s.apply([event('firing', alert('util', 'm1'), T0)]);
    await s.advance(10_000);
    expect(s.slack.posts).toHaveLength(1);
    s.apply([event('firing', alert('util', 'm2'), s.clock.now())]);
    await s.advance(30_000);
    expect(s.slack.posts).toHaveLength(1);
    await s.advance(31_000);
    expect(s.slack.posts).toHaveLength(2);
    expect(s.slack.posts[1]!.body.text).toContain('FIRING:2');
  });

  it('sends the resolved message at once when the whole group has resolved', async () => {
    const s = await setup();
    const a1 = alert('util', 'm1');
    const a2 = alert('util', 'm2');
    s.apply([event('firing', a1, T0), event('firing', a2, T0)]);
    await s.advance(10_000);
    s.apply([event('resolved', a1, s.clock.now())]);
    await s.n.dispatcher.runDue();
    expect(s.slack.posts).toHaveLength(1); // m2 still fires: no early flush
    s.apply([event('resolved', a2, s.clock.now())]);
    await s.n.dispatcher.runDue(); // no group_interval wait: the message is composed at once
    expect(s.n.dispatcher.deliveries.list({ status: 'pending' })).toHaveLength(1);
    await s.advance(1000); // the rate limit (1/s) lets it out
    expect(s.slack.posts).toHaveLength(2);
    const resolved = s.slack.posts[1]!;
    expect(resolved.body.text).toMatch(/^RESOLVED util/);
    expect(resolved.raw).toContain('lasted');
    expect(resolved.raw).toContain('peak');
  });

  it('lists firing alerts before resolved ones, each by entity, whatever order they came in', async () => {
    const s = await setup();
    // Fingerprints in the reverse of entity order, so the store's own order cannot pass for the sort.
    const [b, a, c] = [alert('util', 'mb', { fingerprint: 'fp-2' }), alert('util', 'ma', { fingerprint: 'fp-3' }), alert('util', 'mc', { fingerprint: 'fp-1' })];
    s.apply([event('firing', b, T0), event('firing', a, T0), event('firing', c, T0)]);
    await s.advance(10_000);
    const order = (raw: string) => {
      for (const m of ['(ma)', '(mb)', '(mc)']) expect(raw).toContain(m);
      return ['(ma)', '(mb)', '(mc)'].sort((x, y) => raw.indexOf(x) - raw.indexOf(y));
    };
    expect(order(s.slack.posts[0]!.raw)).toEqual(['(ma)', '(mb)', '(mc)']);
    s.apply([event('resolved', a, s.clock.now())]);
    await s.advance(61_000);
    expect(s.slack.posts).toHaveLength(2);
    expect(order(s.slack.posts[1]!.raw)).toEqual(['(mb)', '(mc)', '(ma)']);
  });

  it('the next due time is the group_wait of a new group; once its resolve is delivered nothing is due', async () => {
    const s = await setup();
    const a1 = alert('util', 'm1');
    s.apply([event('firing', a1, T0)]);
    await s.n.dispatcher.runDue(); // folds the outbox into its group
    expect(s.n.dispatcher.nextDueAt()).toBe(T0 + 10_000);
    await s.advance(10_000);
    s.apply([event('resolved', a1, s.clock.now())]);
    await s.advance(2000);
    expect(s.slack.posts.map((p) => p.body.text.split(' ')[0])).toEqual(['FIRING:1', 'RESOLVED']);
    expect(s.n.dispatcher.nextDueAt()).toBeUndefined();
  });

  it('with send_resolved: false sends no resolved message', async () => {
    const s = await setup({ routes: [route({ default: true, notify: ['slack'], group_wait: '0s', send_resolved: false })] });
    const a1 = alert('util', 'm1');
    s.apply([event('firing', a1, T0)]);
    await s.advance(1000);
    s.apply([event('resolved', a1, s.clock.now())]);
    await s.advance(5 * 60_000, 10_000);
    expect(s.slack.posts).toHaveLength(1);
    expect(s.n.dispatcher.pending()).toBe(0);
  });

  it('repeats a firing group every repeat_interval with the current values', async () => {
    const s = await setup({ routes: [route({ default: true, notify: ['slack'], group_wait: '0s', group_interval: '1m', repeat_interval: '10m' })] });
    s.apply([event('firing', alert('util', 'm1'), T0)]);
    await s.advance(1000);
    s.firing.set('util/m1', alert('util', 'm1', { value: 0.985 }));
    await s.advance(9 * 60_000, 30_000);
    expect(s.slack.posts).toHaveLength(1);
    await s.advance(2 * 60_000, 30_000);
    expect(s.slack.posts).toHaveLength(2);
    expect(s.slack.posts[1]!.raw).toContain('98.5%');
    expect(s.slack.posts[1]!.key).not.toBe(s.slack.posts[0]!.key);
    // The first message announced it; the second says it again, and the message says so (the console marks it).
    const said = [...s.n.dispatcher.deliveries.list()].sort((a, b) => a.id - b.id).map((d) => d.message.alerts.map((a) => a.repeat ?? false));
    expect(said).toEqual([[false], [true]]);
  });

  it('routes first match wins, and a rule’s notify list replaces its route’s notifiers', async () => {
    const s = await setup({
      routes: [
        route({ match: { severity: 'info' }, notify: ['nowhere'], group_wait: '0s' }),
        route({ match_re: { rule: 'ut.*' }, notify: ['slack'], group_wait: '0s', group_by: ['chain'] }),
      ],
      pager: true,
      // `ut-own` takes the `ut.*` route (its timing and grouping) but goes to `pager` instead of the route's `slack`.
      ruleNotify: new Map([['ut-own', ['pager']]]),
    });
    s.apply([
      event('firing', alert('util', 'm1', { severity: 'info' }), T0),
      event('firing', alert('util', 'm2'), T0),
      event('firing', alert('xyz', 'm3'), T0),
      event('firing', alert('ut-own', 'm4'), T0),
    ]);
    await s.advance(1000);
    expect(s.slack.posts).toHaveLength(1); // info → unknown notifier (skipped); xyz → no route; ut-own → its own list
    expect(s.slack.posts[0]!.raw).toContain('m2');
    expect(s.slack.posts[0]!.raw).not.toContain('m1');
    expect(s.slack.posts[0]!.raw).not.toContain('ut-own');
    expect(s.pager!.posts).toHaveLength(1);
    expect(s.pager!.posts[0]!.body.text).toMatch(/^FIRING:1 ut-own /);
    expect(s.pager!.posts[0]!.raw).toContain('market_id=`m4`');
    expect(s.pager!.posts[0]!.raw).not.toContain('market_id=`m2`');
    expect(s.notified.get('ut-own/m4')).toBe(T0 + 1000);
    // xyz/m3 matches no route and there is no default route: nobody hears of it, and it is not marked notified.
    for (const p of [...s.slack.posts, ...s.pager!.posts]) expect(p.raw).not.toContain('m3');
    expect(s.notified.has('xyz/m3')).toBe(false);
  });
});

describe('delivery', () => {
  it('delivers every notification once after a Slack outage of several minutes', async () => {
    const s = await setup({ routes: [route({ default: true, notify: ['slack'], group_by: ['market_id'], group_wait: '0s' })], rate: 5 });
    s.slack.respond(500);
    s.apply(Array.from({ length: 12 }, (_, i) => event('firing', alert('util', `m${i}`), T0)));
    await s.advance(8 * 60_000, 5000); // eight minutes of 500s
    const during = s.slack.posts.length;
    expect(during).toBeGreaterThan(3);
    expect(during).toBeLessThan(40); // backoff: one request per pause, not one per message per tick
    expect(s.slack.delivered()).toHaveLength(0);
    s.slack.respond(200);
    await s.advance(3 * 60_000, 5000);
    const keys = s.slack.delivered().map((p) => p.key);
    expect(keys).toHaveLength(12);
    expect(new Set(keys).size).toBe(12);
    expect(s.n.dispatcher.pending()).toBe(0);
    expect(count(s.results, 'retry')).toBe(during);
    expect(count(s.results, 'sent')).toBe(12);
  });

  it('honours Retry-After on 429', async () => {
    const s = await setup({ routes: [route({ default: true, notify: ['slack'], group_wait: '0s' })], delivery: { backoff: 1000 } });
    s.slack.respond(429, { retryAfter: '30' });
    s.apply([event('firing', alert('util', 'm1'), T0)]);
    await s.n.dispatcher.runDue();
    expect(s.slack.posts).toHaveLength(1);
    s.slack.respond(200);
    await s.advance(29_000);
    expect(s.slack.posts).toHaveLength(1);
    await s.advance(2000);
    expect(s.slack.delivered()).toHaveLength(1);
    expect(s.slack.posts[0]!.key).toBe(s.slack.posts[1]!.key);
  });

  it('gives up after give_up_after, keeps the row with its error, and reports failed', async () => {
    const s = await setup({ routes: [route({ default: true, notify: ['slack'], group_wait: '0s' })], delivery: { give_up_after: 60_000, max_backoff: 10_000 } });
    s.slack.respond(503);
    s.apply([event('firing', alert('util', 'm1'), T0)]);
    await s.advance(90_000, 2000);
    const failed = s.n.dispatcher.deliveries.list({ status: 'failed' });
    expect(failed).toHaveLength(1);
    expect(failed[0]!.error).toContain('HTTP 503');
    expect(failed[0]!.error).not.toContain('secret-token');
    expect(count(s.results, 'failed')).toBe(1);
    expect(s.n.dispatcher.pending()).toBe(0);
  });

  it('fails at once on a 4xx that retrying cannot fix', async () => {
    const s = await setup({ routes: [route({ default: true, notify: ['slack'], group_wait: '0s' })] });
    s.slack.respond(404);
    s.apply([event('firing', alert('util', 'm1'), T0)]);
    await s.n.dispatcher.runDue();
    expect(s.slack.posts).toHaveLength(1);
    expect(count(s.results, 'failed')).toBe(1);
  });

  it('200 markets crossing at once: one grouped message per group, within the rate limit', async () => {
    const s = await setup({ routes: [route({ default: true, notify: ['slack'], group_by: ['rule', 'chain'], group_wait: '10s' })], rate: 1 });
    const chains = ['base', 'mainnet', 'arbitrum', 'optimism'];
    s.apply(Array.from({ length: 200 }, (_, i) => event('firing', alert('util', `m${i}`, {}, { chain: chains[i % 4]! }), T0)));
    await s.advance(20_000, 250);
    const posts = s.slack.delivered();
    expect(posts).toHaveLength(4); // one per chain; each lists 20 and says how many more
    for (const p of posts) {
      expect(p.body.text).toContain('FIRING:50');
      expect(p.raw).toContain('and *30* more not shown');
      expect(p.body.blocks.length).toBeLessThanOrEqual(50);
    }
    const times = posts.map((p) => p.at).sort((a, b) => a - b);
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(1000);
  });

  it('a group longer than one Slack message fits reaches Slack as several posts, every alert in exactly one of them', async () => {
    const s = await setup({ routes: splitRoute(), maxAlerts: 45 });
    const { ids, events } = longGroup();
    s.apply(events);
    await s.advance(3000); // the parts go one token apart (rate_limit 1/s)
    const posts = s.slack.delivered();
    expect(posts.length, 'one message in several posts').toBeGreaterThan(1);
    expect(posts).toHaveLength(s.slack.posts.length);
    // One message (one dedup key, delivered once), split in numbered parts.
    expect(s.n.dispatcher.deliveries.list()).toHaveLength(1);
    expect(new Set(posts.map((p) => p.key))).toEqual(new Set([s.n.dispatcher.deliveries.list()[0]!.dedup_key]));
    posts.forEach((p, i) => {
      expect(p.raw).toContain(`part ${i + 1}/${posts.length}`);
      expect(p.body.text).toMatch(/^FIRING:30 util/);
      expect(p.body.blocks.length).toBeLessThanOrEqual(50);
      for (const b of p.body.blocks) expect((b.text?.text ?? '').length).toBeLessThanOrEqual(3000);
    });
    // Across all posts, every alert exactly once, none left out.
    expect(listedMarkets(posts).sort()).toEqual([...ids].sort());
    expect(posts.map((p) => p.raw).join('')).not.toContain('more not shown');
    expect(count(s.results, 'sent')).toBe(1);
    for (const id of ids) expect(s.notified.get(`util/${id}`), 'when the last part was accepted').toBe(T0 + 2000);
  });

  it.each([
    ['1 a second', 1, 1000],
    ['1 every 2 seconds', 0.5, 2000],
  ])('the parts of one split message are paced by the notifier’s rate_limit (%s)', async (_name, rate, gap) => {
    const s = await setup({ routes: splitRoute(), maxAlerts: 45, rate });
    const { ids, events } = longGroup();
    s.apply(events);
    await s.advance(10_000, 250);
    const posts = s.slack.delivered();
    expect(posts.map(partAndStatus)).toEqual([
      ['1/2', 200],
      ['2/2', 200],
    ]);
    // One token per post: part 2 waits for the next token, and goes as soon as it is there (the next 250 ms step).
    expect(posts[1]!.at - posts[0]!.at).toBeGreaterThanOrEqual(gap);
    expect(posts[1]!.at - posts[0]!.at).toBeLessThanOrEqual(gap + 250);
    expect(listedMarkets(posts).sort()).toEqual([...ids].sort());
    expect(s.n.dispatcher.deliveries.list()).toMatchObject([{ status: 'sent', parts_sent: 2, attempts: 1 }]);
    expect(count(s.results, 'sent')).toBe(1);
    expect(count(s.results, 'retry')).toBe(0);
  });

  it('a part Slack refuses is retried alone: part 1 is not posted again, every alert reaches the channel exactly once', async () => {
    const s = await setup({ routes: splitRoute(), maxAlerts: 45 });
    const { ids, events } = longGroup();
    s.slack.respondInTurn(200, 500);
    s.apply(events);
    await s.advance(10_000, 250);
    expect(s.slack.posts.map(partAndStatus)).toEqual([
      ['1/2', 200],
      ['2/2', 500],
      ['2/2', 200],
    ]);
    expect(listedMarkets(s.slack.delivered()).sort()).toEqual([...ids].sort());
    const rows = s.n.dispatcher.deliveries.list();
    expect(rows).toMatchObject([{ status: 'sent', parts_sent: 2, attempts: 2, error: null }]);
    expect(new Set(s.slack.posts.map((p) => p.key))).toEqual(new Set([rows[0]!.dedup_key]));
    expect(count(s.results, 'retry')).toBe(1);
    expect(count(s.results, 'sent')).toBe(1);
  });

  it('after a restart on the same database file, a split message resumes after the last part Slack accepted', async () => {
    const s = await setup({ routes: splitRoute(), maxAlerts: 45 });
    const { ids, events } = longGroup();
    s.slack.respondInTurn(200, 500);
    s.apply(events);
    await s.advance(1500, 250); // part 1 accepted, part 2 refused; its retry is not due yet
    expect(s.slack.posts.map(partAndStatus)).toEqual([
      ['1/2', 200],
      ['2/2', 500],
    ]);
    await s.restart();
    expect(s.store.db.prepare(`SELECT status, parts_sent FROM notify_messages`).all()).toEqual([{ status: 'pending', parts_sent: 1 }]);
    await s.advance(10_000, 250);
    expect(s.slack.posts.map(partAndStatus)).toEqual([
      ['1/2', 200],
      ['2/2', 500],
      ['2/2', 200],
    ]);
    expect(listedMarkets(s.slack.delivered()).sort()).toEqual([...ids].sort());
    const rows = s.n.dispatcher.deliveries.list();
    expect(rows).toMatchObject([{ status: 'sent', parts_sent: 2 }]);
    expect(new Set(s.slack.posts.map((p) => p.key))).toEqual(new Set([rows[0]!.dedup_key]));
  });
});

describe('silences and inhibition stages', () => {
  it('a silence mutes matching alerts; when it expires a still-firing alert notifies at the next flush', async () => {
    const s = await setup({ routes: [route({ default: true, notify: ['slack'], group_wait: '0s', group_interval: '1m' })] });
    const sil = s.n.silences.add({ matchers: [{ name: 'market_id', op: '=~', value: 'm[12]' }], endsAt: T0 + 5 * 60_000, author: 't', comment: 'maintenance' });
    s.apply([event('firing', alert('util', 'm1'), T0), event('firing', alert('util', 'm2'), T0), event('firing', alert('util', 'm3'), T0)]);
    await s.advance(1000);
    expect(s.slack.posts).toHaveLength(1);
    expect(s.slack.posts[0]!.raw).toContain('m3');
    expect(s.slack.posts[0]!.raw).not.toMatch(/\(m1\)|\(m2\)/);
    expect(count(s.results, 'silenced')).toBe(2);
    await s.advance(2 * 60_000, 10_000);
    expect(s.slack.posts).toHaveLength(1);
    s.n.silences.expire(sil.id);
    await s.advance(61_000, 10_000);
    expect(s.slack.posts).toHaveLength(2);
    expect(s.slack.posts[1]!.raw).toContain('(m1)');
    expect(count(s.results, 'silenced')).toBe(2); // counted once per alert, not per flush
  });

  it('default inhibition: source_down of a poll mutes alerts of that poll; oracle_lag mutes price_deviation on the same market', async () => {
    const s = await setup({ routes: [route({ default: true, notify: ['slack'], group_by: ['rule'], group_wait: '0s' })] });
    const down = alert('source_down', 'markets', { kind: 'source_down' }, { poll: 'markets', market_id: '' });
    const lag = alert('lag', 'mA', { kind: 'oracle_lag' }, { poll: 'other' });
    s.apply([event('firing', down, T0), event('firing', lag, T0)]);
    s.apply([
      event('firing', alert('util', 'm1'), T0), // poll=markets → inhibited
      event('firing', alert('util', 'm2', {}, { poll: 'positions' }), T0), // other poll → sent
      event('firing', alert('dev', 'mA', { kind: 'price_deviation' }, { poll: 'other' }), T0), // inhibited by lag
      event('firing', alert('dev', 'mB', { kind: 'price_deviation' }, { poll: 'other' }), T0), // sent
    ]);
    await s.advance(10_000);
    const raw = s.slack.posts.map((p) => p.raw).join('\n');
    expect(raw).toContain('(m2)');
    expect(raw).not.toContain('(m1)');
    const dev = s.slack.posts.find((p) => p.body.text.includes(' dev '))!;
    expect(dev.raw).toContain('(mB)');
    expect(dev.raw).not.toContain('(mA)');
    expect(raw).toContain('*source_down*'); // source_down itself is not inhibited // source_down itself is not inhibited
    expect(count(s.results, 'inhibited')).toBe(2);
  });

  it('configured inhibit rules replace the defaults', async () => {
    const s = await setup({
      routes: [route({ default: true, notify: ['slack'], group_by: ['rule'], group_wait: '0s' })],
      inhibit: [{ source_match: { severity: 'critical' }, source_match_re: {}, target_match: { severity: 'warning' }, target_match_re: {}, equal: ['market_id'] }],
    });
    // A source_down of the markets poll and an oracle_lag on m3 fire too: the shipped defaults would mute every
    // markets alert and m3's price_deviation; replaced, only the configured rule mutes anything.
    s.apply([
      event('firing', alert('crit', 'm1'), T0),
      event('firing', alert('warn', 'm1', { severity: 'warning' }), T0),
      event('firing', alert('warn', 'm2', { severity: 'warning' }), T0),
      event('firing', alert('down', 'markets', { kind: 'source_down', severity: 'info' }), T0),
      event('firing', alert('lag', 'm3', { kind: 'oracle_lag', severity: 'info' }), T0),
      event('firing', alert('dev', 'm3', { kind: 'price_deviation', severity: 'info' }), T0),
    ]);
    await s.advance(5000);
    const post = (rule: string) => s.slack.posts.find((p) => p.body.text.includes(` ${rule} `));
    const warn = post('warn')!;
    expect(warn.raw).toContain('(m2)');
    expect(warn.raw).not.toContain('(m1)');
    expect(post('crit'), 'not muted by the source_down of its poll').toBeDefined();
    expect(post('dev'), 'not muted by the oracle_lag of its market').toBeDefined();
    expect(s.slack.posts.map((p) => p.body.text.split(' ')[1]).sort()).toEqual(['crit', 'dev', 'down', 'lag', 'warn']);
  });
});

describe('flapping and watchdog', () => {
  it('a flapping alert is announced once, then stays quiet until it settles', async () => {
    const s = await setup({ routes: [route({ default: true, notify: ['slack'], group_wait: '0s', repeat_interval: '5m' })] });
    const a = alert('util', 'm1', { flapping: true });
    s.apply([event('flapping', a, T0)]);
    await s.advance(1000);
    expect(s.slack.posts).toHaveLength(1);
    expect(s.slack.posts[0]!.raw).toContain('*FLAPPING*');
    await s.advance(20 * 60_000, 60_000);
    expect(s.slack.posts).toHaveLength(1); // no repeats while flapping
    s.apply([{ type: 'settled', at: s.clock.now(), alert: { ...a, flapping: false, state: 'resolved', resolved_at: s.clock.now() } }]);
    await s.advance(1000);
    expect(s.slack.posts).toHaveLength(2);
    expect(s.slack.posts[1]!.body.text).toMatch(/^RESOLVED/);
  });

  it('the watchdog fires forever: it repeats every repeat_interval', async () => {
    const s = await setup({ routes: [route({ default: true, notify: ['slack'], group_wait: '0s', repeat_interval: '10m' })] });
    s.n.reload({
      notifiers: { slack: notifier({ type: 'slack', webhook_url: s.slack.url }) },
      routes: [route({ default: true, notify: ['slack'], group_wait: '0s', repeat_interval: '10m' })],
      delivery: { backoff: 1000, max_backoff: 60_000, give_up_after: 3_600_000 },
      watchdog: { enabled: true, severity: 'info' },
    });
    await s.advance(31 * 60_000, 60_000);
    expect(s.slack.posts.length).toBe(4);
    expect(s.slack.posts.every((p) => p.raw.includes('watchdog'))).toBe(true);
  });
});

describe('mutes and the notification log (as Alertmanager decides; docs/alertmanager-parity.md)', () => {
  const markets = (p: SlackPost) => [...new Set([...p.raw.matchAll(/\((m\d+)\)/g)].map((m) => m[1]))].sort();
  const down = () => alert('source_down', 'markets', { kind: 'source_down' }, { poll: 'markets', market_id: '' });
  const utilRoute = (over: Record<string, unknown> = {}) => [
    route({ default: true, notify: ['slack'], group_by: ['rule'], group_wait: '0s', group_interval: '10s', repeat_interval: '1h', ...over }),
  ];
  const utilPosts = (s: { slack: SlackRecorder }) => s.slack.posts.filter((p) => !p.raw.includes('source_down'));

  it('an announced alert is not announced again when an inhibition lifts before repeat_interval', async () => {
    const s = await setup({ routes: utilRoute() });
    s.apply([event('firing', alert('util', 'm1'), T0)]);
    await s.advance(1000);
    expect(utilPosts(s).map(markets)).toEqual([['m1']]);
    s.apply([event('firing', down(), s.clock.now())]);
    await s.advance(30_000);
    s.apply([event('resolved', down(), s.clock.now())]);
    await s.advance(10 * 60_000, 10_000);
    expect(utilPosts(s).map(markets)).toEqual([['m1']]);
    // the repeat comes when repeat_interval says, not earlier
    await s.advance(60 * 60_000, 60_000);
    expect(utilPosts(s).map(markets)).toEqual([['m1'], ['m1']]);
  });

  it('an alert that began firing during the mute is announced once after it (with its group)', async () => {
    const s = await setup({ routes: utilRoute() });
    s.apply([event('firing', alert('util', 'm1'), T0)]);
    await s.advance(1000);
    s.apply([event('firing', down(), s.clock.now())]);
    await s.advance(10_000);
    s.apply([event('firing', alert('util', 'm2'), s.clock.now())]);
    await s.advance(30_000);
    expect(utilPosts(s)).toHaveLength(1);
    s.apply([event('resolved', down(), s.clock.now())]);
    await s.advance(5 * 60_000, 10_000);
    expect(utilPosts(s).map(markets)).toEqual([['m1'], ['m1', 'm2']]);
  });

  it('a muted alert a message left out is announced again when unmuted: the last message no longer told it', async () => {
    const s = await setup({ routes: utilRoute() });
    s.apply([event('firing', alert('util', 'm1'), T0), event('firing', alert('util', 'm3'), T0)]);
    await s.advance(1000);
    const sil = s.n.silences.add({ matchers: [{ name: 'market_id', op: '=', value: 'm1' }], endsAt: T0 + 3_600_000, author: 't', comment: 'c' });
    s.apply([event('firing', alert('util', 'm4'), s.clock.now())]);
    await s.advance(20_000);
    s.n.silences.expire(sil.id);
    await s.advance(20_000);
    expect(utilPosts(s).map(markets)).toEqual([['m1', 'm3'], ['m3', 'm4'], ['m1', 'm3', 'm4']]);
  });

  it.each([
    [true, 'gets its RESOLVED (send_resolved_when_muted, the default)'],
    [false, 'is dropped, as Alertmanager does (send_resolved_when_muted: false)'],
  ])('an announced alert that resolves while inhibited %s', async (whenMuted, _name) => {
    const s = await setup({ routes: utilRoute({ send_resolved_when_muted: whenMuted }) });
    s.apply([event('firing', alert('util', 'm1'), T0)]);
    await s.advance(1000);
    s.apply([event('firing', down(), s.clock.now())]);
    await s.advance(10_000);
    s.apply([event('resolved', alert('util', 'm1', { state: 'resolved' }), s.clock.now())]);
    await s.advance(30_000, 5000);
    const util = utilPosts(s);
    if (whenMuted) {
      expect(util.map((p) => /\*(FIRING|RESOLVED)\b/.exec(p.raw)?.[1])).toEqual(['FIRING', 'RESOLVED']);
      expect(markets(util[1]!)).toEqual(['m1']);
    } else {
      expect(util).toHaveLength(1);
    }
    // either way nothing more about it once the mute lifts
    s.apply([event('resolved', down(), s.clock.now())]);
    await s.advance(5 * 60_000, 10_000);
    expect(utilPosts(s)).toHaveLength(whenMuted ? 2 : 1);
  });
});

describe('Inhibitor on its own', () => {
  const lagOn = (m: string) => alert('lag', m, { kind: 'oracle_lag' });
  it('default rules: a source_down does not mute another source_down of its poll; oracle_lag mutes only price_deviation; only an oracle_lag mutes it', () => {
    const down = alert('source_down', 'markets', { kind: 'source_down' });
    const inh = new Inhibitor(defaultInhibitRules, [down, lagOn('mA'), alert('util', 'mB')]);
    expect(inh.isInhibited(alert('source_down', 'markets-2', { kind: 'source_down' }))).toBe(false);
    expect(inh.isInhibited(alert('util', 'mA', {}, { poll: 'other' }))).toBe(false); // same market as the oracle_lag, not price_deviation
    expect(inh.isInhibited(alert('dev', 'mA', { kind: 'price_deviation' }, { poll: 'other' }))).toBe(true);
    expect(inh.isInhibited(alert('dev', 'mB', { kind: 'price_deviation' }, { poll: 'other' }))).toBe(false); // mB's firing alert is no oracle_lag
  });

  it('an alert never inhibits itself; every equal label must agree (absent on both counts as equal); one matching source is enough', () => {
    const rule = (equal: string[]): InhibitConfig => ({ source_match: { severity: 'critical' }, source_match_re: {}, target_match: {}, target_match_re: {}, equal });
    const crit = alert('crit', 'm1');
    expect(new Inhibitor([rule(['market_id'])], [crit]).isInhibited(crit)).toBe(false);
    const other = alert('util', 'm1', { severity: 'warning' }, { chain: 'mainnet', severity: 'warning' });
    expect(new Inhibitor([rule(['market_id', 'chain'])], [crit]).isInhibited(other)).toBe(false);
    expect(new Inhibitor([rule(['market_id', 'absent_label'])], [crit]).isInhibited(alert('util', 'm1', { severity: 'warning' }, { severity: 'warning' }))).toBe(true);
    expect(new Inhibitor([rule(['market_id'])], [alert('crit', 'm9'), crit]).isInhibited(alert('util', 'm1', { severity: 'warning' }, { severity: 'warning' }))).toBe(true);
  });
});

describe('Routing on its own', () => {
  const slack = notifier({ type: 'slack', webhook_url: 'http://127.0.0.1:9/hook' });
  const am = notifier({ type: 'alertmanager', urls: ['http://127.0.0.1:9'], resend_interval: '30s' });

  it('without routes every alert goes to every notifier with the default timing, grouped by rule', () => {
    const r = new Routing({ routes: [], notifiers: { a: slack, b: slack } });
    expect(r.notifierNames()).toEqual(['a', 'b']);
    const { destinations, unknown } = r.destinations(alert('util', 'm1'));
    expect(unknown).toEqual([]);
    expect(destinations.map((d) => [d.routeId, d.notifier, d.groupLabels])).toEqual([
      ['default', 'a', { rule: 'util' }],
      ['default', 'b', { rule: 'util' }],
    ]);
    expect(destinations[0]!.timing).toEqual({ group_wait: 10_000, group_interval: 60_000, repeat_interval: 4 * 3_600_000, send_resolved: true, send_resolved_when_muted: true });
  });

  it('a default route written first is still tried last; routes get distinct ids; no route and no default: nowhere, nothing unknown', () => {
    const r = new Routing({
      routes: [route({ default: true, notify: ['a'] }), route({ match: { rule: 'x' }, notify: ['a'] }), route({ match: { rule: 'y' }, notify: ['a'] })],
      notifiers: { a: slack },
    });
    const x = r.route(alert('x', 'm1'))!;
    const y = r.route(alert('y', 'm1'))!;
    expect(x.id).not.toBe('default');
    expect(y.id).not.toBe(x.id);
    expect(r.route(alert('z', 'm1'))!.id).toBe('default');
    const none = new Routing({ routes: [route({ match: { rule: 'x' }, notify: ['a'] })], notifiers: { a: slack } });
    expect(none.destinations(alert('z', 'm1'))).toEqual({ destinations: [], unknown: [] });
  });

  it('group labels: `...` takes every label, a missing one reads as empty', () => {
    expect(pickGroupLabels({ rule: 'r', chain: 'base' }, ['...'])).toEqual({ rule: 'r', chain: 'base' });
    expect(pickGroupLabels({ rule: 'r' }, ['rule', 'chain'])).toEqual({ rule: 'r', chain: '' });
  });

  it('timing: Alertmanager gets no group_wait, a short interval, its resend_interval as repeat, and every resolve; others keep the route’s', () => {
    const t = { group_wait: 10_000, group_interval: 60_000, repeat_interval: 3_600_000, send_resolved: false, send_resolved_when_muted: false };
    expect(effectiveTiming(t, am)).toEqual({ group_wait: 0, group_interval: 5000, repeat_interval: 30_000, send_resolved: true, send_resolved_when_muted: true });
    expect(effectiveTiming({ ...t, group_interval: 2000 }, am).group_interval).toBe(2000);
    expect(effectiveTiming(t, slack)).toEqual(t);
    const { send_resolved_when_muted: _, ...old } = t; // a group persisted before the setting existed
    expect(effectiveTiming(old, slack).send_resolved_when_muted).toBe(true);
  });
});

describe('grouping edges: what a group says after settles, moves, removals and mutes', () => {
  /** Each post's first word (FIRING:n or RESOLVED) and the markets it lists. */
  const said = (posts: SlackPost[]) => posts.map((p) => [p.body.text.split(' ')[0], [...new Set([...p.raw.matchAll(/\((m\d+)\)/g)].map((m) => m[1]))].sort()]);
  const quick = (over: Record<string, unknown> = {}) => [
    route({ default: true, notify: ['slack'], group_by: ['rule'], group_wait: '0s', group_interval: '1m', repeat_interval: '10m', ...over }),
  ];

  it('a flapping alert that settles firing is announced FIRING and repeats again; one that settles resolved gets its RESOLVED', async () => {
    const s = await setup({ routes: quick() });
    const a = alert('util', 'm1', { flapping: true });
    const b = alert('other', 'm2', { flapping: true });
    s.apply([event('flapping', a, T0), event('flapping', b, T0)]);
    await s.advance(1000);
    s.firing.set(a.fingerprint, { ...a, flapping: false }); // the engine has it firing (apply() tracks only firing events)
    s.apply([
      { type: 'settled', at: s.clock.now(), alert: { ...a, flapping: false } },
      { type: 'settled', at: s.clock.now(), alert: { ...b, flapping: false, state: 'resolved', resolved_at: s.clock.now() } },
    ]);
    await s.advance(60_000);
    const util = (p: SlackPost) => p.body.text.includes(' util ');
    expect(said(s.slack.posts.filter(util))).toEqual([['FIRING:1', ['m1']], ['FIRING:1', ['m1']]]);
    expect(s.slack.posts.filter(util)[1]!.raw).not.toContain('FLAPPING');
    expect(said(s.slack.posts.filter((p) => !util(p)))).toEqual([['FIRING:1', ['m2']], ['RESOLVED', ['m2']]]);
    await s.advance(10 * 60_000, 60_000); // settled firing: it repeats again (a flapping one would not)
    expect(said(s.slack.posts.filter(util))).toHaveLength(3);
  });

  it('a watchdog turned off leaves its group quietly: no RESOLVED, no more repeats', async () => {
    const s = await setup({ routes: quick() });
    const cfg = (enabled: boolean): NotifyConfig => ({
      notifiers: { slack: notifier({ type: 'slack', webhook_url: s.slack.url }) },
      routes: quick(),
      delivery: { backoff: 1000, max_backoff: 60_000, give_up_after: 3_600_000 },
      watchdog: { enabled, severity: 'info' },
    });
    s.n.reload(cfg(true));
    await s.advance(1000);
    expect(s.slack.posts.map((p) => p.body.text.split(' ').slice(0, 2).join(' '))).toEqual(['FIRING:1 watchdog']);
    s.n.reload(cfg(false));
    await s.advance(30 * 60_000, 60_000);
    expect(s.slack.posts).toHaveLength(1);
    expect(s.n.dispatcher.pending()).toBe(0);
  });

  it('an alert whose group label changed moves to its new group: listed there, never again in the old one', async () => {
    const s = await setup({ routes: quick({ group_by: ['severity'] }) });
    s.apply([event('firing', alert('util', 'm1', { severity: 'warning' }), T0), event('firing', alert('util', 'm2', { severity: 'warning' }), T0)]);
    await s.advance(1000);
    s.apply([event('firing', alert('util', 'm1', { severity: 'critical' }), s.clock.now())]);
    await s.advance(25 * 60_000, 60_000);
    const posts = s.slack.posts.map((p) => [/\((severity=)?(warning|critical)\)/.exec(p.body.text)?.[2] ?? p.body.text, said([p])[0]![1]]);
    expect(posts.filter(([g]) => g === 'warning').map(([, m]) => m)).toEqual([['m1', 'm2'], ['m2'], ['m2']]);
    expect(posts.filter(([g]) => g === 'critical').map(([, m]) => m)).toEqual([['m1'], ['m1'], ['m1']]);
  });

  it('an alert that resolves and fires again within one group_interval is not announced again: the last message still says it fires', async () => {
    const s = await setup({ routes: quick() });
    const m1 = alert('util', 'm1');
    s.apply([event('firing', m1, T0), event('firing', alert('util', 'm2'), T0)]);
    await s.advance(1000);
    s.apply([event('resolved', m1, s.clock.now())]);
    await s.advance(20_000);
    s.apply([event('firing', m1, s.clock.now())]);
    await s.advance(9 * 60_000, 10_000);
    expect(said(s.slack.posts)).toEqual([['FIRING:2', ['m1', 'm2']]]);
    await s.advance(60_000, 10_000); // repeat_interval: both again
    expect(said(s.slack.posts)).toEqual([['FIRING:2', ['m1', 'm2']], ['FIRING:2', ['m1', 'm2']]]);
  });

  it('a reload’s new repeat_interval applies to a group from its next event', async () => {
    const s = await setup({ routes: quick({ repeat_interval: '4h' }) });
    s.apply([event('firing', alert('util', 'm1'), T0)]);
    await s.advance(1000);
    s.n.reload({
      notifiers: { slack: notifier({ type: 'slack', webhook_url: s.slack.url, rate_limit: 1 }) },
      routes: quick({ repeat_interval: '10m' }),
      delivery: { backoff: 1000, max_backoff: 60_000, give_up_after: 3_600_000 },
      watchdog: { enabled: false, severity: 'info' },
    });
    s.apply([event('firing', alert('util', 'm2'), s.clock.now())]);
    await s.advance(60_000, 10_000);
    expect(said(s.slack.posts)).toEqual([['FIRING:1', ['m1']], ['FIRING:2', ['m1', 'm2']]]);
    await s.advance(10 * 60_000, 10_000);
    expect(said(s.slack.posts)).toHaveLength(3);
  });

  it('an alert the engine no longer has firing (its rule removed) leaves its group quietly: the repeat lists the others, no RESOLVED', async () => {
    const s = await setup({ routes: quick() });
    s.apply([event('firing', alert('util', 'm1'), T0), event('firing', alert('util', 'm2'), T0)]);
    await s.advance(1000);
    s.firing.delete('util/m1');
    await s.advance(30 * 60_000, 60_000);
    expect(said(s.slack.posts)).toEqual([['FIRING:2', ['m1', 'm2']], ['FIRING:1', ['m2']], ['FIRING:1', ['m2']], ['FIRING:1', ['m2']]]);
  });

  it('an alert that fires and resolves within group_wait is never heard of', async () => {
    const s = await setup(); // group_wait 10s, send_resolved
    const m1 = alert('util', 'm1');
    s.apply([event('firing', m1, T0)]);
    await s.advance(5000);
    s.apply([event('resolved', m1, s.clock.now())]);
    await s.advance(5 * 60_000, 5000);
    expect(s.slack.posts).toHaveLength(0);
    expect(s.n.dispatcher.pending()).toBe(0);
  });

  it('when the whole group resolves, its RESOLVED goes out even if some of its alerts were never announced', async () => {
    const s = await setup({ routes: quick() });
    const [m1, m2] = [alert('util', 'm1'), alert('util', 'm2')];
    s.apply([event('firing', m1, T0)]);
    await s.advance(1000);
    s.apply([event('firing', m2, s.clock.now())]);
    await s.advance(10_000);
    s.apply([event('resolved', m2, s.clock.now())]);
    await s.advance(10_000);
    s.apply([event('resolved', m1, s.clock.now())]);
    await s.advance(2000);
    expect(said(s.slack.posts)).toEqual([['FIRING:1', ['m1']], ['RESOLVED', ['m1', 'm2']]]);
  });

  it('silenced outcomes count only alerts that had something to say: a new firing, or the resolve of an announced one', async () => {
    // m1 and m2 announced; then m1 resolves and m2 keeps firing, both silenced; m3 fires and resolves within its
    // group_wait, silenced. Only m1's resolve was held back (send_resolved_when_muted: false): one `silenced`.
    const s = await setup({ routes: quick({ group_by: ['market_id'], group_wait: '10s', group_interval: '10s', repeat_interval: '1h', send_resolved_when_muted: false }) });
    s.apply([event('firing', alert('util', 'm1'), T0), event('firing', alert('util', 'm2'), T0)]);
    await s.advance(12_000);
    expect(said(s.slack.posts)).toEqual([['FIRING:1', ['m1']], ['FIRING:1', ['m2']]]);
    s.n.silences.add({ matchers: [{ name: 'market_id', op: '=~', value: 'm1|m2|m3' }], endsAt: T0 + 3_600_000, author: 't', comment: 'c' });
    s.apply([event('resolved', alert('util', 'm1'), s.clock.now())]);
    await s.advance(30_000, 5000);
    expect(count(s.results, 'silenced')).toBe(1); // m1's resolve; m2 had nothing new to say
    const m3 = alert('util', 'm3');
    s.apply([event('firing', m3, s.clock.now())]);
    await s.advance(5000);
    s.apply([event('resolved', m3, s.clock.now())]);
    await s.advance(60_000, 5000);
    expect(s.slack.posts).toHaveLength(2);
    expect(count(s.results, 'silenced')).toBe(1); // m3 never had anything to say
  });

  it('an alert that fired and resolved inside a silence is never heard of, even in a group that was notified', async () => {
    const s = await setup({ routes: quick({ group_interval: '10s' }) });
    s.apply([event('firing', alert('util', 'm1'), T0)]);
    await s.advance(1000);
    s.n.silences.add({ matchers: [{ name: 'market_id', op: '=', value: 'm2' }], endsAt: T0 + 3_600_000, author: 't', comment: 'c' });
    const m2 = alert('util', 'm2');
    s.apply([event('firing', m2, s.clock.now())]);
    await s.advance(20_000);
    s.apply([event('resolved', m2, s.clock.now())]);
    await s.advance(5 * 60_000, 10_000);
    expect(said(s.slack.posts)).toEqual([['FIRING:1', ['m1']]]);
    expect(count(s.results, 'silenced')).toBe(1); // m2's firing, once
  });

  it('a message lists firing alerts before flapping ones, each group by entity', async () => {
    const s = await setup({ routes: quick() });
    const flap = (e: string) => event('flapping', alert('util', e, { flapping: true }), T0);
    s.apply([flap('ma'), event('firing', alert('util', 'md'), T0), flap('mc'), event('firing', alert('util', 'mb'), T0)]);
    await s.advance(1000);
    const [d] = s.n.dispatcher.deliveries.list();
    expect(d!.message.alerts.map((a) => `${a.status} ${a.alert.entity}`)).toEqual(['firing mb', 'firing md', 'flapping ma', 'flapping mc']);
  });

  it('with server.external_url each alert of a message links to its page', async () => {
    const s = await setup({ routes: quick(), externalUrl: 'https://lookout.example/' });
    s.apply([event('firing', alert('util', 'm1'), T0)]);
    await s.advance(1000);
    expect(s.slack.posts[0]!.raw).toContain('<https://lookout.example/alerts/util%2Fm1|chart and history>');
  });

  it('a group stored before send_resolved_when_muted existed still sends the RESOLVED of an announced alert muted by then', async () => {
    const s = await setup({ routes: quick() });
    const m1 = alert('util', 'm1');
    const old = () => s.store.db.prepare(`UPDATE notify_outbox SET timing = json_remove(timing, '$.send_resolved_when_muted')`).run();
    s.apply([event('firing', m1, T0)]);
    old();
    await s.advance(1000);
    s.n.silences.add({ matchers: [{ name: 'market_id', op: '=', value: 'm1' }], endsAt: T0 + 3_600_000, author: 't', comment: 'c' });
    s.apply([event('resolved', m1, s.clock.now())]);
    old();
    await s.advance(2000);
    expect(said(s.slack.posts)).toEqual([['FIRING:1', ['m1']], ['RESOLVED', ['m1']]]);
  });

  it('an alert that fires and resolves between two flushes of a group whose other alerts are all muted is never heard of', async () => {
    const s = await setup({ routes: quick({ group_interval: '10s' }) });
    s.apply([event('firing', alert('util', 'm0'), T0), event('firing', alert('util', 'm1'), T0)]);
    await s.advance(1000);
    s.n.silences.add({ matchers: [{ name: 'market_id', op: '=', value: 'm1' }], endsAt: T0 + 3_600_000, author: 't', comment: 'c' });
    s.apply([event('resolved', alert('util', 'm0'), s.clock.now())]);
    await s.advance(20_000);
    const m2 = alert('util', 'm2');
    s.apply([event('firing', m2, s.clock.now())]);
    await s.advance(5000);
    s.apply([event('resolved', m2, s.clock.now())]);
    await s.advance(60_000, 5000);
    expect(said(s.slack.posts)).toEqual([['FIRING:2', ['m0', 'm1']], ['RESOLVED', ['m0']]]);
  });
});
