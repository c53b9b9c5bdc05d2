/**
 * Evidence units: rule kinds report fractions, seconds and USD (src/rules/rule-kind.ts); every notifier shows each
 * kind's value, threshold, previous and peak in its real unit, and they all show the same texts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import type { Alert } from '../src/model.js';
import { createNotifications, type NotifyConfig } from '../src/notify/index.js';
import { escapeHtml, evidence, fieldUnit, formatIn, type ValueUnit } from '../src/notify/format.js';
import { buildMessage, type MessageAlert, type NotificationMessage } from '../src/notify/message.js';
import { alertmanagerAlerts } from '../src/notify/notifiers/alertmanager.js';
import { consoleLines } from '../src/notify/notifiers/console.js';
import { emailHtml, emailText } from '../src/notify/notifiers/email.js';
import { slackPayloads } from '../src/notify/notifiers/slack.js';
import { webhookPayload } from '../src/notify/notifiers/webhook.js';
import { alert, event, notifier, route, tempStores } from './notify-helpers.js';

const T0 = 1_700_000_000_000;
const stores = tempStores();
afterEach(() => stores.cleanup());

type Case = {
  name: string;
  kind: string;
  unit?: ValueUnit;
  values: Pick<Alert, 'value' | 'threshold' | 'previous_value' | 'peak'>;
  want: Record<string, string>;
};

const cases: Case[] = [
  { name: 'utilization as %', kind: 'utilization_above', values: { value: 0.97, threshold: 0.95, previous_value: 0.93, peak: 0.99 }, want: { value: '97%', threshold: '95%', previous: '93%', peak: '99%' } },
  { name: 'APY as %', kind: 'apy_jump', values: { value: 0.0557, threshold: 0.02, previous_value: 0.0139, peak: 0.0557 }, want: { value: '5.57%', threshold: '2%', previous: '1.39%', peak: '5.57%' } },
  { name: 'deviation as %', kind: 'price_deviation', values: { value: 0.0374, threshold: 0.02, previous_value: null, peak: 0.05 }, want: { value: '3.74%', threshold: '2%', peak: '5%' } },
  { name: 'oracle lag from seconds', kind: 'oracle_lag', values: { value: 95, threshold: 20, previous_value: null, peak: 95_340 }, want: { value: '1m35s', threshold: '20s', peak: '1d2h29m' } },
  { name: 'benchmark age from seconds', kind: 'stale_benchmark', values: { value: 270_000, threshold: 129_600, previous_value: null, peak: 270_000 }, want: { value: '3d3h', threshold: '1d12h', peak: '3d3h' } },
  { name: 'incomplete-for from seconds', kind: 'stale_benchmark', values: { value: 25_200, threshold: 21_600, previous_value: null, peak: 25_200 }, want: { value: '7h', threshold: '6h', peak: '7h' } },
  { name: 'position value in USD', kind: 'unverified_position', values: { value: 153_721.57, threshold: 10_000, previous_value: null, peak: 153_721.57 }, want: { value: '$153,721.57', threshold: '$10,000', peak: '$153,721.57' } },
  { name: 'threshold on utilization as %', kind: 'threshold', unit: 'fraction', values: { value: 0.985, threshold: 0.98, previous_value: 0.97, peak: 0.99 }, want: { value: '98.5%', threshold: '98%', previous: '97%', peak: '99%' } },
  { name: 'threshold on a _usd field in $', kind: 'threshold', unit: 'usd', values: { value: 2_500_000, threshold: 1_000_000, previous_value: null, peak: 2_500_000 }, want: { value: '$2,500,000', threshold: '$1,000,000', peak: '$2,500,000' } },
  { name: 'threshold on a plain field', kind: 'threshold', unit: 'number', values: { value: 18, threshold: 6, previous_value: null, peak: 18 }, want: { value: '18', threshold: '6', peak: '18' } },
  { name: 'threshold without a known field', kind: 'threshold', values: { value: 0.985, threshold: 0.98, previous_value: null, peak: 0.985 }, want: { value: '0.985', threshold: '0.98', peak: '0.985' } },
  { name: 'source_down count', kind: 'source_down', values: { value: 3, threshold: 3, previous_value: null, peak: 3 }, want: { value: '3', threshold: '3', peak: '3' } },
];

function messageOf(c: Case, status: 'firing' | 'resolved'): NotificationMessage {
  const a = alert('r', 'm1', { kind: c.kind, ...c.values, ...(status === 'resolved' ? { state: 'resolved', resolved_at: T0 + 60_000 } : {}) });
  const ma: MessageAlert = c.unit ? { status, alert: a, unit: c.unit } : { status, alert: a };
  return buildMessage({ dedupKey: 'lk-units', notifier: 'n', groupKey: 'g', groupLabels: { rule: 'r' }, alerts: [ma], createdAt: T0 + 60_000 });
}

describe('evidence units', () => {
  it.each(cases)('$name: every notifier shows value, threshold, previous and peak in the kind’s unit', (c) => {
    const m = messageOf(c, 'resolved');
    const facts = Object.fromEntries(evidence(m.alerts[0]!));
    for (const [k, v] of Object.entries(c.want)) expect(facts[k], k).toBe(v);
    if (!('previous' in c.want)) expect(facts.previous).toBeUndefined();

    const consoleLine = consoleLines(m, false)[0]!;
    const slack = JSON.stringify(slackPayloads(m, 20)[0]!.blocks);
    const text = emailText(m);
    const html = emailHtml(m);
    const am = alertmanagerAlerts(m, 60_000)[0]!.annotations as Record<string, string>;
    const hook = (webhookPayload('hook', m).alerts as Array<{ lookout: { evidence: Record<string, string>; unit: string } }>)[0]!.lookout;
    for (const [k, v] of Object.entries(c.want)) {
      expect(consoleLine, `console ${k}`).toContain(` ${k}=${v} `);
      expect(slack, `slack ${k}`).toContain(JSON.stringify(`${k} *${v}*`).slice(1, -1));
      expect(text, `email text ${k}`).toContain(`\n  ${k}: ${v}\n`);
      expect(html, `email html ${k}`).toContain(`>${escapeHtml(k)}</td><td><b>${escapeHtml(v)}</b>`);
      expect(am[k], `alertmanager ${k}`).toBe(v);
      expect(hook.evidence[k], `webhook ${k}`).toBe(v);
    }
  });

  it('the webhook payload says which unit its raw values are in', () => {
    const unit = (c: Case) => (webhookPayload('hook', messageOf(c, 'firing')).alerts as Array<{ lookout: { unit: string } }>)[0]!.lookout.unit;
    expect(cases.map((c) => [c.name, unit(c)])).toEqual([
      ['utilization as %', 'fraction'],
      ['APY as %', 'fraction'],
      ['deviation as %', 'fraction'],
      ['oracle lag from seconds', 'seconds'],
      ['benchmark age from seconds', 'seconds'],
      ['incomplete-for from seconds', 'seconds'],
      ['position value in USD', 'usd'],
      ['threshold on utilization as %', 'fraction'],
      ['threshold on a _usd field in $', 'usd'],
      ['threshold on a plain field', 'number'],
      ['threshold without a known field', 'number'],
      ['source_down count', 'number'],
    ]);
  });

  it.each([
    ['utilization', 'fraction'],
    ['borrow_apy', 'fraction'],
    ['supply_apy', 'fraction'],
    ['apy.7day.total', 'fraction'],
    ['total_supplied_usd', 'usd'],
    ['value_usd', 'usd'],
    ['market.loan_asset_decimals', 'number'],
    ['oracle_price_scaled', 'number'],
    [undefined, 'number'],
  ] as const)('a threshold rule on %s reads its values as %s', (field, unit) => {
    expect(fieldUnit(field)).toBe(unit);
  });

  it.each([
    ['fraction', -0, '0%'],
    ['fraction', -1e-9, '0%'],
    ['number', -1e-9, '-1.00000e-9'],
    ['number', -0, '0'],
    ['usd', -0.001, '$0'],
    ['usd', -1234.5, '-$1,234.5'],
    ['seconds', 0.25, '250ms'],
    ['seconds', 20.4, '20.4s'],
    ['seconds', 20.04, '20s'],
    ['seconds', 20, '20s'],
    ['seconds', 59.96, '1m'],
    ['seconds', 95_340, '1d2h29m'],
    ['seconds', Number.NaN, 'n/a'],
  ] as const)('formatIn(%s, %s) is %s (no negative zero)', (unit, v, want) => {
    expect(formatIn(unit, v)).toBe(want);
  });
});

describe('threshold rules through the dispatcher', () => {
  it('a threshold rule’s values come out in its field’s unit, from the configured rules, and after a reload', async () => {
    const clock = new ManualClock(T0);
    const store = stores.open();
    const lines: string[] = [];
    const rules = (field: string) => [
      { rule: { name: 'util-extreme', kind: 'threshold', field, op: '>=', value: 0.98 } },
      { rule: { name: 'util-critical', kind: 'utilization_above', threshold: 0.95 } },
    ];
    const config: NotifyConfig = {
      notifiers: { stdout: notifier({ type: 'console', color: 'never' }) },
      routes: [route({ default: true, notify: ['stdout'], group_by: ['rule'], group_wait: '1s', group_interval: '1s', repeat_interval: '4h' })],
      delivery: { backoff: 1000, max_backoff: 60_000, give_up_after: 3_600_000 },
      watchdog: { enabled: false, severity: 'info' },
      rules: rules('utilization'),
    };
    const n = createNotifications({ db: store.db, config, clock, stdout: { write: (t: string) => lines.push(t) } });
    const fire = async (entity: string) => {
      const a = alert('util-extreme', entity, { kind: 'threshold', value: 0.985, threshold: 0.98, previous_value: null });
      store.transaction(() => n.outbox.enqueue([event('firing', a, clock.now())], clock.now()));
      const deadline = lines.length + 1;
      for (let i = 0; i < 10 && lines.length < deadline; i++) {
        clock.advance(1000);
        await n.dispatcher.runDue();
      }
    };
    await fire('m1');
    expect(lines.join('')).toContain('value=98.5% threshold=98%');
    n.reload({ ...config, rules: rules('total_supplied_usd') });
    await fire('m2');
    expect(lines.at(-1)).toContain('value=$0.99 threshold=$0.98');
    await n.close(1000);
  });
});
