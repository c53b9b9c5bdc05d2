/**
 * The notifier, route and inhibit schemas (src/notify/schema.ts): what a config's `notifiers:`, `routes:` and
 * `inhibit_rules:` mean when a key is left out (SPEC §4's defaults), the forms a matcher takes, a notifier told apart
 * by its `type`; and the names the notify tables' migrations are recorded under in every existing database.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { inhibitSchema, notifierSchema, routeSchema } from '../src/notify/schema.js';
import { appliedMigrations } from '../src/store/index.js';
import { tempStores } from './notify-helpers.js';

const stores = tempStores();
afterEach(() => stores.cleanup());

describe('a route', () => {
  it("left at its defaults: SPEC §4's (group by rule, wait 10 s, interval 1 m, repeat 4 h, resolved sent, also when muted)", () => {
    expect(routeSchema.parse({ notify: ['slack'] })).toEqual({
      default: false,
      match: {},
      match_re: {},
      notify: ['slack'],
      group_by: ['rule'],
      group_wait: 10_000,
      group_interval: 60_000,
      repeat_interval: 4 * 3_600_000,
      send_resolved: true,
      send_resolved_when_muted: true,
    });
  });

  it('matches a label to one value (text, number, boolean) or a list of them; anything else is refused', () => {
    const match = { chain: ['base', 'arbitrum'], decimals: [6, 18], severity: 'critical', block: 100, verified: false };
    expect(routeSchema.parse({ notify: ['slack'], match }).match).toEqual(match);
    expect(routeSchema.safeParse({ notify: ['slack'], match: { chain: { any: 'base' } } }).success).toBe(false);
    expect(routeSchema.safeParse({ notify: [] }).success).toBe(false);
    expect(routeSchema.safeParse({ notify: ['slack'], mach: {} }).success).toBe(false);
  });
});

describe('an inhibit rule', () => {
  it('left at its defaults matches every source and target and requires no equal labels', () => {
    expect(inhibitSchema.parse({})).toEqual({ source_match: {}, source_match_re: {}, target_match: {}, target_match_re: {}, equal: [] });
    expect(inhibitSchema.parse({ source_match: { severity: 'critical' }, target_match: { severity: ['warning', 'info'] }, equal: ['market_id'] })).toMatchObject({
      source_match: { severity: 'critical' },
      target_match: { severity: ['warning', 'info'] },
      equal: ['market_id'],
    });
  });
});

describe('a notifier', () => {
  it('is read by its type, each with its own defaults', () => {
    expect(notifierSchema.parse({ type: 'console' })).toEqual({ type: 'console', color: 'auto' });
    expect(notifierSchema.parse({ type: 'webhook', url: 'http://127.0.0.1:9/hook' })).toEqual({
      type: 'webhook',
      url: 'http://127.0.0.1:9/hook',
      headers: {},
      rate_limit: 10,
      timeout: 10_000,
    });
    expect(notifierSchema.parse({ type: 'alertmanager', urls: ['http://127.0.0.1:9093'] })).toEqual({
      type: 'alertmanager',
      urls: ['http://127.0.0.1:9093'],
      resend_interval: 60_000,
      rate_limit: 10,
      timeout: 10_000,
    });
    expect(notifierSchema.parse({ type: 'email', smtp: { host: 'mail' }, from: 'lookout@x', to: ['ops@x'] })).toEqual({
      type: 'email',
      smtp: { host: 'mail', port: 587, secure: false, require_tls: false, tls_reject_unauthorized: true },
      from: 'lookout@x',
      to: ['ops@x'],
      rate_limit: 5,
      timeout: 20_000,
    });
    expect(notifierSchema.parse({ type: 'slack', webhook_url: 'http://127.0.0.1:9/slack' })).toEqual({
      type: 'slack',
      webhook_url: 'http://127.0.0.1:9/slack',
      api_url: 'https://slack.com/api/',
      max_alerts: 20,
      rate_limit: 1,
      timeout: 10_000,
    });
  });

  it('of a type lookout does not have, or with a key of another type, is refused', () => {
    const unknown = notifierSchema.safeParse({ type: 'pagerduty', url: 'http://127.0.0.1:9' });
    expect(unknown.success).toBe(false);
    expect(unknown.error?.issues[0]?.path).toEqual(['type']);
    expect(notifierSchema.safeParse({ type: 'console', url: 'http://127.0.0.1:9' }).success).toBe(false);
  });
});

describe('the notify tables', () => {
  it('are recorded as versions 3, 6 and 7 under the names every existing database holds', () => {
    // A database records each migration's name; a code whose name differs logs a mismatch on every open of it.
    const store = stores.open();
    const notify = appliedMigrations(store.db).filter((m) => [3, 6, 7].includes(m.version));
    expect(notify.map((m) => [m.version, m.name])).toEqual([
      [3, 'notify_outbox_silences'],
      [6, 'notify_messages_parts_sent'],
      [7, 'notify_slack_threads'],
    ]);
  });
});
