/**
 * The Slack bot mode end to end: the real dispatcher, outbox and SQLite file, @slack/web-api pointed at a loopback
 * Web API (`api_url`) that records every call, a manual clock. One message per incident, edited in place, with a
 * thread; a restart keeps editing it; 429 + Retry-After honoured; a deleted parent posted again; the token nowhere.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { createLogger } from '../src/log.js';
import type { Alert, AlertEvent } from '../src/model.js';
import { createNotifications, renderNotification, type NotifyConfig } from '../src/notify/index.js';
import { buildMessage, type DeliveryProgress, type MessageAlert } from '../src/notify/message.js';
import { changeNote, incidentMessage, PARENT_MAX_ALERTS, parentContent } from '../src/notify/notifiers/slack-incident.js';
import { NotifierRegistry } from '../src/notify/registry.js';
import type { Store } from '../src/store/index.js';
import { alert, event, notifier, route, tempStores } from './notify-helpers.js';
import { SlackApiRecorder, type SlackApiCall } from './slack-api-recorder.js';

const T0 = 1_700_000_000_000;
const TOKEN = 'xoxb-1234-5678-lookoutSECRETtoken';
const stores = tempStores();
const servers: SlackApiRecorder[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
  stores.cleanup();
});

async function setup() {
  const clock = new ManualClock(T0);
  const api = await new SlackApiRecorder(clock, TOKEN).start();
  servers.push(api);
  const logs: string[] = [];
  // No secrets given to the logger: the token must not reach a log line at all, not merely be scrubbed from it.
  const log = createLogger({ level: 'debug', write: (l) => logs.push(l) });
  const firing = new Map<string, Alert>();
  const config: NotifyConfig = {
    notifiers: { incidents: notifier({ type: 'slack', token: TOKEN, channel: '#risk-alerts', api_url: api.url, rate_limit: 1 }) },
    routes: [route({ default: true, notify: ['incidents'], group_by: ['rule'], group_wait: '10s', group_interval: '1m', repeat_interval: '4h' })],
    delivery: { backoff: 1000, max_backoff: 60_000, give_up_after: 3_600_000 },
    watchdog: { enabled: false, severity: 'info' },
  };
  const build = (db: Store['db']) =>
    createNotifications({ db, config, clock, log, random: () => 0.5, alerts: { firing: () => [...firing.values()], markNotified: () => {} } });
  const store = stores.open();
  const s = {
    clock,
    api,
    logs,
    store,
    n: build(store.db),
    apply(events: AlertEvent[]) {
      s.store.transaction(() => {
        for (const e of events) {
          if (e.type === 'firing') firing.set(e.alert.fingerprint, e.alert);
          if (e.type === 'resolved') firing.delete(e.alert.fingerprint);
        }
        s.n.outbox.enqueue(events, clock.now());
      });
    },
    /** Advances the clock in 1 s steps, running the dispatcher at each. */
    async advance(ms: number) {
      for (let t = 0; t < ms; t += 1000) {
        clock.advance(Math.min(1000, ms - t));
        await s.n.dispatcher.runDue();
      }
    },
    /** A daemon restart: stop, close the database, reopen the same file, build the pipeline again. */
    async restart() {
      await s.n.close();
      s.store.close();
      s.store = stores.reopen(s.store.path);
      s.n = build(s.store.db);
    },
    threads: () => s.store.db.prepare(`SELECT incident, channel, ts FROM notify_slack_threads`).all() as Array<{ incident: string; channel: string; ts: string }>,
    messages: () => s.store.db.prepare(`SELECT status, parts_sent, attempts, error FROM notify_messages ORDER BY id`).all() as Array<Record<string, unknown>>,
  };
  return s;
}

const header = (c: SlackApiCall) => c.args.blocks?.[0]?.text?.text ?? '';
const fire = (e: string, at: number) => event('firing', alert('util', e), at);
const resolve = (e: string, at: number) => event('resolved', alert('util', e), at);

describe('slack bot mode: one message per incident, edited in place', () => {
  it('alerts join, one resolves, a restart, the group resolves: one parent, edited each time, the thread in order; 429 waits its Retry-After', async () => {
    const s = await setup();
    s.apply([fire('m1', T0)]);
    await s.advance(10_000);
    expect(s.api.parents()).toHaveLength(1);
    const parent = s.api.parents()[0]!;
    const ts = parent.ts!;
    expect(parent.args.channel).toBe('#risk-alerts');
    expect(header(parent)).toContain('FIRING:1 util');
    expect(s.threads()).toEqual([expect.objectContaining({ channel: s.api.channelId, ts })]);

    // m2 joins; Slack answers the edit with 429 once: the edit goes again when Retry-After says, not at the backoff's 750 ms.
    s.api.rateLimitOnce('chat.update', '7');
    s.apply([fire('m2', s.clock.now())]);
    await s.advance(70_000); // group_interval, then the Retry-After
    const [limited, edited] = s.api.updates();
    expect(limited!.status).toBe(429);
    expect(edited!.at - limited!.at).toBe(7000);
    expect(header(edited!)).toContain('FIRING:2 util');

    // A restart between two changes of the incident.
    await s.restart();
    s.apply([resolve('m1', s.clock.now())]);
    await s.advance(60_000);
    expect(header(s.api.updates().at(-1)!)).toMatch(/FIRING:1 util .*1 resolved/);

    s.apply([resolve('m2', s.clock.now())]);
    await s.advance(2_000); // a whole group resolved goes out at once

    expect(s.api.parents(), 'exactly one parent, none after the restart').toHaveLength(1);
    const updates = s.api.updates().filter((c) => c.status === 200);
    expect(updates).toHaveLength(3);
    for (const u of s.api.updates()) expect([u.args.channel, u.args.ts]).toEqual([s.api.channelId, ts]);
    const replies = s.api.replies();
    expect(replies.map((r) => r.args.thread_ts)).toEqual([ts, ts, ts]);
    expect(replies.map((r) => r.args.text)).toEqual([
      expect.stringMatching(/^:red_circle: \*1 firing\*: WETH\/USDC on base \(m2\)\nnow 2 firing$/),
      expect.stringMatching(/^:white_check_mark: \*1 resolved\*: WETH\/USDC on base \(m1\)\nnow 1 firing, 1 resolved$/),
      expect.stringMatching(/^:white_check_mark: \*1 resolved\*: WETH\/USDC on base \(m2\)\n:white_check_mark: \*RESOLVED\*: all 2 of util resolved$/),
    ]);
    // Every call in order: post, then per change an edit followed by its reply.
    expect(s.api.calls.map((c) => `${c.method}${c.args.thread_ts ? ' (reply)' : ''} ${c.status}`)).toEqual([
      'chat.postMessage 200',
      'chat.update 429',
      'chat.update 200',
      'chat.postMessage (reply) 200',
      'chat.update 200',
      'chat.postMessage (reply) 200',
      'chat.update 200',
      'chat.postMessage (reply) 200',
    ]);
    const shown = s.api.messages.get(ts)!;
    expect(shown.blocks[0]!.text!.text).toMatch(/^:white_check_mark: RESOLVED util/);
    expect(JSON.stringify(shown.blocks)).toMatch(/RESOLVED\* critical · \*util\* · WETH\/USDC on base \(m1\)/);
    expect(JSON.stringify(shown.blocks)).toMatch(/RESOLVED\* critical · \*util\* · WETH\/USDC on base \(m2\)/);
    expect(s.threads(), 'the resolved incident is closed').toEqual([]);
    expect(s.messages().map((m) => m.status)).toEqual(['sent', 'sent', 'sent', 'sent']);
    expect(s.api.calls.every((c) => c.authorization === `Bearer ${TOKEN}`)).toBe(true);

    // The group fires again: a new incident, a new parent.
    s.apply([fire('m3', s.clock.now())]);
    await s.advance(10_000);
    expect(s.api.parents()).toHaveLength(2);
    expect(s.threads()).toEqual([expect.objectContaining({ ts: s.api.parents()[1]!.ts })]);
  });

  it('a parent deleted by a person (message_not_found on the edit): a new parent is posted, its ts stored, and later edits go to it', async () => {
    const s = await setup();
    s.apply([fire('m1', T0)]);
    await s.advance(10_000);
    const first = s.api.parents()[0]!.ts!;
    s.api.delete(first);

    s.apply([fire('m2', s.clock.now())]);
    await s.advance(61_000); // group_interval; the reply waits a second for the rate limit's token (the new parent took one more call)
    expect(s.api.updates().map((u) => [u.args.ts, u.error])).toEqual([[first, 'message_not_found']]);
    expect(s.api.parents()).toHaveLength(2);
    const second = s.api.parents()[1]!;
    expect(header(second)).toContain('FIRING:2 util');
    expect(s.threads()).toEqual([expect.objectContaining({ ts: second.ts })]);
    expect(s.api.replies().map((r) => r.args.thread_ts)).toEqual([second.ts]);
    expect(s.logs.some((l) => l.includes('"msg":"slack_parent_reposted"') && l.includes('message_not_found'))).toBe(true);

    s.apply([fire('m3', s.clock.now())]);
    await s.advance(60_000);
    expect(s.api.parents()).toHaveLength(2);
    expect(s.api.updates().at(-1)!.args.ts).toBe(second.ts);
    expect(s.api.updates().at(-1)!.error).toBeUndefined();
    expect(s.api.replies().map((r) => r.args.thread_ts)).toEqual([second.ts, second.ts]);
    expect(s.messages().map((m) => m.status)).toEqual(['sent', 'sent', 'sent']);
  });

  it('the token never reaches the store, the logs or an error: a refused post (channel_not_found) and a 429 recorded, then every byte grepped', async () => {
    const s = await setup();
    s.api.failOnce('chat.postMessage', 'channel_not_found');
    s.apply([fire('m1', T0)]);
    await s.advance(10_000);
    expect(s.messages()).toEqual([expect.objectContaining({ status: 'failed', error: 'incidents: slack chat.postMessage answered channel_not_found (not retried)' })]);

    s.api.rateLimitOnce('chat.postMessage', '2');
    s.apply([fire('m2', s.clock.now())]);
    await s.advance(62_000); // group_interval, then the Retry-After
    expect(s.messages()[1]).toEqual(expect.objectContaining({ status: 'sent', attempts: 2, error: null }));
    expect(s.api.calls.filter((c) => c.status === 429)).toHaveLength(1);
    expect(s.logs.some((l) => l.includes('"msg":"notify_retry"') && l.includes('HTTP 429'))).toBe(true);
    expect(s.api.calls.every((c) => c.authorization === `Bearer ${TOKEN}`), 'the token was used').toBe(true);

    await s.n.close();
    s.store.close();
    const dir = dirname(s.store.path);
    const files = readdirSync(dir).map((f) => join(dir, f));
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) expect(readFileSync(f).includes(TOKEN), f).toBe(false);
    expect(s.logs.length).toBeGreaterThan(0);
    expect(s.logs.filter((l) => l.includes(TOKEN))).toEqual([]);
    expect(s.api.calls.filter((c) => JSON.stringify(c.args).includes(TOKEN)), 'no call carries the token in its body').toEqual([]);
  });
});

describe('slack bot mode: the thread reply says what changed', () => {
  const ma = (entity: string, status: MessageAlert['status']): MessageAlert => ({ status, alert: alert('util', entity) });
  const msg = (alerts: MessageAlert[]) => buildMessage({ dedupKey: 'lk-x', notifier: 'n', groupKey: 'g', incident: 'i', groupLabels: { rule: 'util' }, alerts, createdAt: T0 });
  it.each([
    ['a repeat that changed nothing', [ma('m1', 'firing')], [ma('m1', 'firing')], ':repeat: still firing: 1'],
    ['an alert that starts flapping', [ma('m1', 'firing'), ma('m2', 'firing')], [ma('m1', 'flapping'), ma('m2', 'firing')], ':large_orange_circle: *1 flapping*: WETH/USDC on base (m1)\nnow 2 firing'],
    ['a flapping alert that settles firing', [ma('m1', 'flapping')], [ma('m1', 'firing')], ':red_circle: *1 settled firing*: WETH/USDC on base (m1)\nnow 1 firing'],
    ['a resolved alert firing again', [ma('m1', 'resolved'), ma('m2', 'firing')], [ma('m1', 'firing'), ma('m2', 'firing')], ':red_circle: *1 firing*: WETH/USDC on base (m1)\nnow 2 firing'],
    [
      'a repeat after one resolved earlier (the parent keeps it)',
      [ma('m1', 'resolved'), ma('m2', 'firing')],
      [ma('m2', 'firing')],
      ':repeat: still firing: 1, 1 resolved',
    ],
  ])('%s', (_name, shown, now, note) => {
    const m = msg(now);
    expect(changeNote(shown, m, incidentMessage(shown, m))).toBe(note);
  });
});

it('lookout render of a bot-mode notifier shows the parent as chat.postMessage gets it, without the token', () => {
  const out = renderNotification(notifier({ type: 'slack', token: TOKEN, channel: 'C0123456789' }), [alert('util', 'm1')], { now: T0 });
  const r = JSON.parse(out) as { method: string; channel: string; blocks: Array<{ text?: { text: string } }> };
  expect([r.method, r.channel, r.blocks[0]!.text!.text]).toEqual(['chat.postMessage', 'C0123456789', ':red_circle: FIRING:1 util [critical]']);
  expect(out).not.toContain(TOKEN);
});

describe('slack bot mode: a send without the dispatcher’s progress, and a first message that is already RESOLVED', () => {
  async function direct() {
    const clock = new ManualClock(T0);
    const api = await new SlackApiRecorder(clock, TOKEN).start();
    servers.push(api);
    const store = stores.open();
    const bot = new NotifierRegistry()
      .createAll({ incidents: notifier({ type: 'slack', token: TOKEN, channel: '#risk-alerts', api_url: api.url }) }, { clock, log: createLogger({ write: () => {} }), db: store.db })
      .get('incidents')!;
    let n = 0;
    const send = (alerts: MessageAlert[]) =>
      bot.send(buildMessage({ dedupKey: `lk-${++n}`, notifier: 'incidents', groupKey: 'g', incident: 'inc-1', groupLabels: { rule: 'util' }, alerts, createdAt: clock.now() }), new AbortController().signal);
    const calls = () => api.calls.map((c) => `${c.method}${c.args.thread_ts ? ' reply' : ''} ${(c.args.text ?? '').split(' ')[0]}`);
    return { api, send, calls };
  }
  const ma = (entity: string, status: MessageAlert['status']): MessageAlert => ({ status, alert: alert('util', entity) });

  it('without a progress object every message does all its parts: post, then edit and reply; the resolve closes the incident', async () => {
    const s = await direct();
    await s.send([ma('m1', 'firing')]);
    await s.send([ma('m1', 'firing'), ma('m2', 'firing')]);
    await s.send([ma('m1', 'resolved'), ma('m2', 'resolved')]);
    await s.send([ma('m3', 'firing')]); // a new incident of the group: a new parent
    expect(s.calls()).toEqual([
      'chat.postMessage FIRING:1',
      'chat.update FIRING:2',
      'chat.postMessage reply :red_circle:',
      'chat.update RESOLVED',
      'chat.postMessage reply :white_check_mark:',
      'chat.postMessage FIRING:1',
    ]);
    expect(s.api.parents().map((c) => c.ts)).toEqual(['1700000000.000001', '1700000000.000004']);
  });

  it('a first message that already says RESOLVED is posted and keeps no incident: the next firing posts its own parent', async () => {
    const s = await direct();
    await s.send([ma('m1', 'resolved')]);
    await s.send([ma('m1', 'firing')]);
    expect(s.calls()).toEqual(['chat.postMessage RESOLVED', 'chat.postMessage FIRING:1']);
    expect(s.api.updates()).toEqual([]);
  });
});

describe('slack bot mode: a long incident', () => {
  const many = (n: number, status: MessageAlert['status']): MessageAlert[] => Array.from({ length: n }, (_, i) => ({ status, alert: alert('util', `m${i + 10}`) }));
  const msg = (alerts: MessageAlert[]) => buildMessage({ dedupKey: 'lk-l', notifier: 'n', groupKey: 'g', incident: 'i', groupLabels: { rule: 'util' }, alerts, createdAt: T0 });

  it('the parent of 30 alerts stays one message of at most 50 blocks: 23 listed, the rest counted', () => {
    const parent = parentContent(incidentMessage([], msg(many(30, 'firing'))), 50);
    expect(parent.blocks).toHaveLength(50);
    const listed = JSON.stringify(parent.blocks).match(/market_id=`m\d+`/g) ?? [];
    expect(listed).toHaveLength(PARENT_MAX_ALERTS);
    expect(PARENT_MAX_ALERTS).toBe(23);
    expect(JSON.stringify(parent.blocks!.at(-2))).toContain('…and *7* more not shown');
    // A smaller max_alerts of the notifier wins.
    expect(JSON.stringify(parentContent(incidentMessage([], msg(many(30, 'firing'))), 3).blocks).match(/market_id=`m\d+`/g)).toHaveLength(3);
  });

  it('the thread reply names five alerts of a long list and counts the rest', () => {
    const m = msg(many(7, 'firing'));
    const note = changeNote([], m, incidentMessage([], m));
    expect(note).toBe(
      ':red_circle: *7 firing*: WETH/USDC on base (m10), WETH/USDC on base (m11), WETH/USDC on base (m12), WETH/USDC on base (m13), WETH/USDC on base (m14) +2 more\nnow 7 firing',
    );
    const five = msg(many(5, 'resolved'));
    expect(changeNote(many(5, 'firing'), five, incidentMessage(many(5, 'firing'), five))).not.toContain('more');
  });
});

describe('slack bot mode: stored state and resends', () => {
  async function direct() {
    const clock = new ManualClock(T0);
    const api = await new SlackApiRecorder(clock, TOKEN).start();
    servers.push(api);
    return { clock, api, store: stores.open() };
  }
  const bot = (d: { clock: ManualClock; api: SlackApiRecorder; store: Store }) =>
    new NotifierRegistry()
      .createAll({ incidents: notifier({ type: 'slack', token: TOKEN, channel: '#risk-alerts', api_url: d.api.url }) }, { clock: d.clock, log: createLogger({ write: () => {} }), db: d.store.db })
      .get('incidents')!;
  const msg = (alerts: MessageAlert[], over: Partial<Parameters<typeof buildMessage>[0]> = {}) =>
    buildMessage({ dedupKey: 'lk-s', notifier: 'incidents', groupKey: 'g', groupLabels: { rule: 'util' }, alerts, createdAt: T0, ...over });
  const ma = (entity: string, status: MessageAlert['status']): MessageAlert => ({ status, alert: alert('util', entity) });

  it('refuses to start without the store it keeps its parents in', () => {
    const make = () => new NotifierRegistry().createAll({ incidents: notifier({ type: 'slack', token: TOKEN, channel: '#c' }) }, { clock: new ManualClock(T0), log: createLogger({ write: () => {} }) });
    expect(make).toThrow(expect.objectContaining({ code: 'E_NOTIFIER_STORE', message: 'incidents: slack bot mode keeps its messages in the store, and none was given' }));
  });

  it('a message stored before incidents existed (schema 7) keeps its group’s parent: edited, not posted again', async () => {
    const d = await direct();
    const b = bot(d);
    await b.send(msg([ma('m1', 'firing')]), new AbortController().signal);
    await b.send(msg([ma('m1', 'firing'), ma('m2', 'firing')]), new AbortController().signal);
    expect(d.api.parents()).toHaveLength(1);
    expect(d.api.updates().map((c) => c.status)).toEqual([200]);
    expect(d.store.db.prepare(`SELECT incident FROM notify_slack_threads`).all()).toEqual([{ incident: 'group:g' }]);
  });

  it('a resend after every part went (a restart before the delivery was recorded) posts nothing again', async () => {
    const d = await direct();
    const b = bot(d);
    const done: DeliveryProgress = { partsSent: 2, beforePart: async () => {}, partSent: () => {} };
    // A first message already RESOLVED keeps no parent: its resend finds none and must not post another.
    const first = msg([ma('m1', 'resolved')], { incident: 'inc-r' });
    await b.send(first, new AbortController().signal);
    await b.send(first, new AbortController().signal, done);
    expect(d.api.calls.map((c) => c.method)).toEqual(['chat.postMessage']);
  });

  it('the parent drops a firing alert the new message leaves out (muted or gone); it keeps the resolved ones it showed', () => {
    const m = msg([ma('m3', 'firing')], { incident: 'i' });
    const shown = [ma('m1', 'firing'), ma('m2', 'resolved'), ma('m3', 'firing')];
    expect(incidentMessage(shown, m).alerts.map((a) => `${a.status} ${a.alert.entity}`)).toEqual(['firing m3', 'resolved m2']);
  });
});

