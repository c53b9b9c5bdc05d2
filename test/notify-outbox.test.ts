/**
 * The outbox on its own (src/notify/outbox.ts) over a real SQLite file: which events it keeps, one row per destination
 * with the route's group and timing frozen in, the log lines for unknown notifiers and alerts with no route, a batch
 * written whole or not at all, and the watchdog's start and quiet removal.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../src/log.js';
import type { AlertEvent } from '../src/model.js';
import { Outbox, WATCHDOG_FINGERPRINT, watchdogAlert } from '../src/notify/outbox.js';
import { Routing } from '../src/notify/routing.js';
import type { Store } from '../src/store/index.js';
import { alert, event, notifier, route, tempStores } from './notify-helpers.js';

const T0 = 1_700_000_000_000;
const stores = tempStores();
afterEach(() => stores.cleanup());

type Row = { created_at: number; event_type: string; event_at: number; fingerprint: string; notifier: string; group_key: string; group_labels: string; timing: string; alert: string };

function setup(routes = [route({ default: true, notify: ['slack', 'mail'], group_by: ['rule'], group_wait: '5s', group_interval: '2m', repeat_interval: '3h' })]) {
  const store: Store = stores.open();
  const logs: Array<{ level: string; msg: string } & Record<string, unknown>> = [];
  const notifiers = { slack: notifier({ type: 'console', color: 'never' }), mail: notifier({ type: 'console', color: 'never' }) };
  const routing = (r = routes) => new Routing({ routes: r, notifiers, ruleNotify: new Map([['own', ['slack', 'nope', 'nope']]]) });
  const outbox = new Outbox(store.db, { routing: routing(), log: createLogger({ level: 'debug', write: (l) => logs.push(JSON.parse(l) as (typeof logs)[number]) }) });
  const rows = () => store.db.prepare(`SELECT * FROM notify_outbox ORDER BY id`).all() as Row[];
  return { store, outbox, logs, rows, routing };
}

describe('Outbox.enqueue', () => {
  it('keeps the notifying events and cancelled, one row each per notifier, with group, labels, timing and alert frozen', () => {
    const { outbox, rows } = setup();
    const a = alert('util', 'm1');
    const types: AlertEvent['type'][] = ['pending', 'firing', 'resolved', 'flapping', 'settled', 'cancelled'];
    expect(outbox.enqueue(types.map((t, i) => event(t, a, T0 + i)), T0 + 100)).toBe(10);
    const got = rows();
    expect(got.map((r) => [r.event_type, r.notifier])).toEqual([
      ['firing', 'slack'],
      ['firing', 'mail'],
      ['resolved', 'slack'],
      ['resolved', 'mail'],
      ['flapping', 'slack'],
      ['flapping', 'mail'],
      ['settled', 'slack'],
      ['settled', 'mail'],
      ['cancelled', 'slack'],
      ['cancelled', 'mail'],
    ]);
    const first = got[0]!;
    expect(first).toMatchObject({ created_at: T0 + 100, event_at: T0 + 1, fingerprint: 'util/m1' });
    expect(JSON.parse(first.group_labels)).toEqual({ rule: 'util' });
    expect(JSON.parse(first.timing)).toEqual({ group_wait: 5000, group_interval: 120_000, repeat_interval: 10_800_000, send_resolved: true, send_resolved_when_muted: true });
    expect(JSON.parse(first.alert)).toEqual(a);
    expect(got[2]!.event_at).toBe(T0 + 2);
    expect(JSON.parse(got[2]!.alert)).toMatchObject({ state: 'resolved', resolved_at: T0 + 2 });
    expect(first.group_key).not.toBe(got[1]!.group_key); // a group per notifier
    expect(outbox.unfolded()).toBe(10);
  });

  it('a rule’s own list and an override replace the route; an unknown notifier is warned about once', () => {
    const { outbox, rows, logs } = setup();
    outbox.enqueue([event('firing', alert('own', 'm1'), T0), event('firing', alert('own', 'm2'), T0)], T0);
    expect(rows().map((r) => r.notifier)).toEqual(['slack', 'slack']);
    const warns = logs.filter((l) => l.level === 'warn');
    expect(warns).toEqual([expect.objectContaining({ msg: 'notify_unknown_notifier', notifier: 'nope', rule: 'own' })]);
    outbox.enqueue([event('firing', alert('util', 'm3'), T0)], T0, (al) => (al.entity === 'm3' ? ['mail'] : undefined));
    expect(rows().map((r) => r.notifier)).toEqual(['slack', 'slack', 'mail']);
  });

  it('an alert with no route writes nothing and says so at debug, except a quiet cancel', () => {
    const { outbox, rows, logs } = setup([route({ match: { rule: 'other' }, notify: ['slack'] })]);
    expect(outbox.enqueue([event('firing', alert('util', 'm1'), T0), event('cancelled', alert('util', 'm2'), T0)], T0)).toBe(0);
    expect(rows()).toEqual([]);
    expect(logs).toEqual([expect.objectContaining({ level: 'debug', msg: 'notify_no_route', rule: 'util', fingerprint: 'util/m1' })]);
  });

  it('a new routing applies to events written after it', () => {
    const { outbox, rows, routing } = setup();
    outbox.enqueue([event('firing', alert('util', 'm1'), T0)], T0);
    outbox.setRouting(routing([route({ default: true, notify: ['mail'] })]));
    outbox.enqueue([event('firing', alert('util', 'm2'), T0)], T0);
    expect(rows().map((r) => [r.fingerprint, r.notifier])).toEqual([
      ['util/m1', 'slack'],
      ['util/m1', 'mail'],
      ['util/m2', 'mail'],
    ]);
  });
});

describe('the watchdog', () => {
  it('fires once when enabled and is not written again while known; removed quietly once when disabled', () => {
    const { store, outbox, rows } = setup();
    outbox.ensureWatchdog({ enabled: false, severity: 'info' }, T0);
    expect(rows()).toEqual([]); // never known: nothing to remove
    outbox.ensureWatchdog({ enabled: true, severity: 'info', notify: ['mail'] }, T0);
    outbox.ensureWatchdog({ enabled: true, severity: 'info', notify: ['mail'] }, T0 + 1);
    expect(rows().map((r) => [r.event_type, r.notifier, r.fingerprint])).toEqual([['firing', 'mail', WATCHDOG_FINGERPRINT]]);
    // Folded into a group by the dispatcher: known from the group's alerts.
    store.db.prepare(`DELETE FROM notify_outbox`).run();
    store.db.prepare(`INSERT INTO notify_groups (group_key, notifier, route, group_labels, timing, created_at, next_flush_at, epoch) VALUES ('g', 'mail', 'default', '{}', '{}', 0, 0, 'e')`).run();
    store.db.prepare(`INSERT INTO notify_group_alerts (group_key, fingerprint, state, alert, updated_at) VALUES ('g', ?, 'firing', '{}', 0)`).run(WATCHDOG_FINGERPRINT);
    outbox.ensureWatchdog({ enabled: true, severity: 'info' }, T0 + 2);
    expect(rows()).toEqual([]);
    outbox.ensureWatchdog({ enabled: false, severity: 'warning', notify: ['slack'] }, T0 + 3);
    expect(rows().map((r) => [r.event_type, r.notifier, r.event_at])).toEqual([['cancelled', 'slack', T0 + 3]]);
  });

  it('is always firing, with the configured severity and the dead-man’s-switch words', () => {
    expect(watchdogAlert('warning', T0)).toMatchObject({
      fingerprint: WATCHDOG_FINGERPRINT,
      rule: 'watchdog',
      kind: 'watchdog',
      entity: 'lookout',
      severity: 'warning',
      state: 'firing',
      labels: { rule: 'watchdog', alertname: 'watchdog', severity: 'warning' },
      annotations: { summary: 'lookout is alive: this alert always fires', description: 'A dead-man switch: when it stops arriving, lookout (or its path to you) is down.' },
      pending_since: T0,
      firing_since: T0,
    });
  });
});

describe('the outbox’s edges', () => {
  it('the watchdog’s fingerprint is fixed: receivers and restarts know it by it', () => {
    expect(WATCHDOG_FINGERPRINT).toBe('lookout-watchdog');
    expect(watchdogAlert('info', T0).fingerprint).toBe('lookout-watchdog');
  });

  it('a batch is written whole or not at all, in its own transaction', () => {
    const { outbox, rows } = setup();
    const bad = alert('util', 'm2', { value: 10n as never });
    expect(() => outbox.enqueue([event('firing', alert('util', 'm1'), T0), event('firing', bad, T0)], T0)).toThrow(/BigInt/);
    expect(rows()).toEqual([]);
  });
});
