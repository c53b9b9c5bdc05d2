/**
 * The notifier registry's refusals (src/notify/registry.ts) and what createNotifications wires (src/notify/index.ts):
 * the alert page links of `server.external_url`, and a reload that gives no rule `notify` lists keeping the earlier ones.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { LookoutError } from '../src/errors.js';
import { silentLogger } from '../src/log.js';
import { alertLinks, createNotifications, type NotifyConfig } from '../src/notify/index.js';
import { buildMessage } from '../src/notify/message.js';
import { consoleNotifier } from '../src/notify/notifiers/console.js';
import { slackNotifier } from '../src/notify/notifiers/slack.js';
import { NotifierRegistry } from '../src/notify/registry.js';
import type { NotifierConfig } from '../src/notify/schema.js';
import { alert, event, notifier, route, tempStores } from './notify-helpers.js';

const T0 = 1_700_000_000_000;
const deps = { clock: new ManualClock(T0), log: silentLogger };
const stores = tempStores();
afterEach(() => stores.cleanup());

/** The error `fn` throws: its code and message. */
function refusal(fn: () => unknown): [string, string] {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(LookoutError);
    return [(e as LookoutError).code, (e as Error).message];
  }
  throw new Error('did not throw');
}

describe('notifier registry', () => {
  it('refuses a notifier type registered twice, by name', () => {
    expect(refusal(() => new NotifierRegistry([slackNotifier, consoleNotifier, slackNotifier]))).toEqual(['E_NOTIFIER_DUPLICATE', "notifier type 'slack' is registered twice"]);
    const r = new NotifierRegistry([consoleNotifier]);
    expect(refusal(() => r.register(consoleNotifier))).toEqual(['E_NOTIFIER_DUPLICATE', "notifier type 'console' is registered twice"]);
  });

  it('refuses a type it has no module for, when building and when rendering', () => {
    const r = new NotifierRegistry([consoleNotifier]);
    const slack = notifier({ type: 'slack', webhook_url: 'http://127.0.0.1:1/s' });
    expect(refusal(() => r.createAll({ out: notifier({ type: 'console' }), s: slack }, deps))).toEqual(['E_NOTIFIER_UNKNOWN', "unknown notifier type 'slack'"]);
    const message = buildMessage({ dedupKey: 'lk-1', notifier: 's', groupKey: 'g', groupLabels: { rule: 'util' }, alerts: [{ status: 'firing', alert: alert('util', 'm1') }], createdAt: T0 });
    expect(refusal(() => r.render('s', slack, message, deps))).toEqual(['E_NOTIFIER_UNKNOWN', "unknown notifier type 'slack'"]);
    expect(refusal(() => r.module('pagerduty' as NotifierConfig['type']))).toEqual(['E_NOTIFIER_UNKNOWN', "unknown notifier type 'pagerduty'"]);
    // The shipped registry knows every type the schema allows.
    expect(new NotifierRegistry().render('s', slack, message, deps)).toContain('FIRING:1 util');
  });
});

describe('createNotifications', () => {
  it('links an alert to its page under server.external_url: trailing slashes dropped, the fingerprint escaped; no url, no link', () => {
    expect(alertLinks('https://ops.example/lookout//')!({ fingerprint: 'util/0xab cd' })).toBe('https://ops.example/lookout/alerts/util%2F0xab%20cd');
    expect(alertLinks('http://127.0.0.1:9000')!({ fingerprint: 'f' })).toBe('http://127.0.0.1:9000/alerts/f');
    expect(alertLinks(undefined)).toBeUndefined();
    expect(alertLinks('')).toBeUndefined();
  });

  it('a reload that gives no rule notify lists keeps the ones given at the start; one that gives them replaces them', () => {
    const store = stores.open();
    const config = (): NotifyConfig => ({
      notifiers: { team: notifier({ type: 'console' }), pager: notifier({ type: 'console' }) },
      routes: [route({ default: true, notify: ['team'] })],
      delivery: { backoff: 1000, max_backoff: 60_000, give_up_after: 3_600_000 },
      watchdog: { enabled: false, severity: 'info' },
    });
    const n = createNotifications({ db: store.db, config: config(), clock: deps.clock, stdout: { write: () => true }, ruleNotify: new Map([['util', ['pager']]]) });
    const sentTo = () => {
      const rows = store.db.prepare(`SELECT notifier FROM notify_outbox ORDER BY id`).all() as Array<{ notifier: string }>;
      store.db.prepare(`DELETE FROM notify_outbox`).run();
      return rows.map((r) => r.notifier);
    };
    n.outbox.enqueue([event('firing', alert('util', 'm1'), T0), event('firing', alert('other', 'm1'), T0)], T0);
    expect(sentTo()).toEqual(['pager', 'team']);
    n.reload(config());
    n.outbox.enqueue([event('firing', alert('util', 'm2'), T0), event('firing', alert('other', 'm2'), T0)], T0);
    expect(sentTo()).toEqual(['pager', 'team']);
    n.reload(config(), new Map([['other', ['pager']]]));
    n.outbox.enqueue([event('firing', alert('util', 'm3'), T0), event('firing', alert('other', 'm3'), T0)], T0);
    expect(sentTo()).toEqual(['team', 'pager']);
  });
});
