/**
 * The words and numbers every notifier shares (src/notify/format.ts, src/notify/message.ts), pinned exactly: escaping,
 * clipping, units and number formats at their edges, the entity title, the evidence of firing and resolved alerts, and
 * a message's rule, group, severity, counts and title line. The notifier tests see these only inside whole messages.
 */
import { describe, expect, it } from 'vitest';
import {
  clip,
  counts,
  entityTitle,
  escapeHtml,
  escapeSlack,
  evidence,
  fieldUnit,
  formatIn,
  formatTime,
  formatValue,
  groupText,
  lastedMs,
  messageRule,
  messageSeverity,
  statusWord,
  titleLine,
  unitsOfRules,
  valueUnit,
} from '../src/notify/format.js';
import { buildMessage, commonOf, type MessageAlert, type NotificationMessage } from '../src/notify/message.js';
import { alert } from './notify-helpers.js';

const T0 = Date.UTC(2024, 4, 1, 12, 0, 0);

function msg(alerts: MessageAlert[], groupLabels: Record<string, string> = { rule: 'r' }): NotificationMessage {
  return buildMessage({ dedupKey: 'lk-f', notifier: 'n', groupKey: 'g', groupLabels, alerts, createdAt: T0 });
}

describe('escaping and clipping', () => {
  it('escapes what Slack and HTML would read as markup, and nothing else', () => {
    expect(escapeSlack(`a & <!here> "q" 'x'`)).toBe(`a &amp; &lt;!here&gt; "q" 'x'`);
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
    expect(escapeSlack('&&<<>>')).toBe('&amp;&amp;&lt;&lt;&gt;&gt;');
    expect(escapeHtml('""\'\'')).toBe('&quot;&quot;&#39;&#39;');
  });

  it('clips to at most max characters with a mark, and leaves text that fits', () => {
    expect(clip('abcdef', 6)).toBe('abcdef');
    expect(clip('abcdef', 5)).toBe('abcd…');
    expect(clip('abcdef', 1)).toBe('…');
    expect(clip('abcdef', 0)).toBe('…');
    expect(statusWord('flapping')).toBe('FLAPPING');
    expect(statusWord('resolved')).toBe('RESOLVED');
  });
});

describe('units and numbers', () => {
  it.each([
    ['number', 999_999, '999999'],
    ['number', 1_000_000, '1.00000e+6'],
    ['number', -1_234_567.891, '-1.23457e+6'],
    ['number', 0.001, '0.001'],
    ['number', 0.0001234567, '0.000123457'],
    ['number', -2.5, '-2.5'],
    ['number', 0, '0'],
    ['number', 12, '12'],
    ['fraction', 0.1, '10%'],
    ['fraction', 0.015, '1.5%'],
    ['fraction', -0.05, '-5%'],
    ['seconds', 59.94, '59.9s'],
    ['seconds', 60, '1m'],
    ['seconds', -30, '-30s'],
    ['seconds', -0.5, '-500ms'],
    ['seconds', 3600.4, '1h'],
    ['seconds', 0, '0s'],
    ['usd', 1234.567, '$1,234.57'],
    ['usd', 0.004, '$0'],
    ['usd', -5, '-$5'],
    ['usd', null, 'n/a'],
    ['number', undefined, 'n/a'],
    ['fraction', Number.POSITIVE_INFINITY, 'n/a'],
  ] as const)('formatIn(%s, %s) is %s', (unit, v, want) => {
    expect(formatIn(unit, v)).toBe(want);
  });

  it('a kind has its unit, a threshold rule’s follows its field, an unknown kind is a plain number', () => {
    expect(['utilization_above', 'apy_jump', 'price_deviation', 'oracle_lag', 'stale_benchmark', 'unverified_position', 'source_down', 'nope'].map((k) => valueUnit(k))).toEqual([
      'fraction',
      'fraction',
      'fraction',
      'seconds',
      'seconds',
      'usd',
      'number',
      'number',
    ]);
    expect(valueUnit('threshold', 'borrow_apy')).toBe('fraction');
    expect(valueUnit('threshold')).toBe('number');
    expect(formatValue('apy_jump', 0.05)).toBe('5%');
    expect(formatValue('threshold', 2000, 'x_usd')).toBe('$2,000');
    expect(formatValue('threshold', 0.5)).toBe('0.5');
    expect([fieldUnit(''), fieldUnit('apy.foo'), fieldUnit('foo.utilization'), fieldUnit('utilization_rate'), fieldUnit('x_usd.y'), fieldUnit('netapy')]).toEqual([
      'number',
      'fraction',
      'fraction',
      'number',
      'number',
      'fraction',
    ]);
  });

  it('the units of configured rules: a threshold rule’s from its own field; other kinds say nothing', () => {
    const unitOf = unitsOfRules([
      { name: 't-usd', kind: 'threshold', field: 'total_usd' },
      { name: 't-none', kind: 'threshold' },
      { name: 't-odd', kind: 'threshold', field: 5 },
      { name: 'util', kind: 'utilization_above', field: 'utilization' },
    ]);
    const of = (rule: string, kind = 'threshold') => unitOf(alert(rule, 'm1', { kind }));
    expect([of('t-usd'), of('t-none'), of('t-odd'), of('util'), of('util', 'utilization_above'), of('t-usd', 'apy_jump')]).toEqual(['usd', 'number', 'number', 'number', undefined, undefined]);
  });

  it('formats a time as people read it', () => {
    expect(formatTime(T0)).toBe('2024-05-01 12:00:00 UTC');
    expect(formatTime(T0 + 1234)).toBe('2024-05-01 12:00:01 UTC');
    expect(formatTime(null)).toBe('n/a');
    expect(formatTime(undefined)).toBe('n/a');
    expect(formatTime(0)).toBe('1970-01-01 00:00:00 UTC');
  });
});

describe('entity title and evidence', () => {
  const base = alert('r', 'm1');
  it.each([
    ['symbols, with the chain', { collateral_asset_symbol: 'WETH', loan_asset_symbol: 'USDC', chain: 'base' }, 'utilization_above', 'WETH/USDC on base (m1)'],
    ['addresses when no symbols, no chain', { collateral_asset: '0xC', loan_asset: '0xL' }, 'utilization_above', '0xC/0xL (m1)'],
    ['symbol over address', { collateral_asset_symbol: 'WETH', collateral_asset: '0xC', loan_asset: '0xL' }, 'utilization_above', 'WETH/0xL (m1)'],
    ['only a loan asset: the entity', { loan_asset_symbol: 'USDC', chain: 'base' }, 'utilization_above', 'm1 on base'],
    ['only a collateral asset: the entity', { collateral_asset_symbol: 'WETH' }, 'utilization_above', 'm1'],
    ['a poll that is down', { poll: 'markets', chain: 'base' }, 'source_down', 'poll markets'],
    ['a poll label of another kind: the entity', { poll: 'markets', chain: 'base' }, 'utilization_above', 'm1 on base'],
    ['source_down without a poll label', { chain: 'base' }, 'source_down', 'm1 on base'],
  ] as const)('%s', (_name, labels, kind, want) => {
    expect(entityTitle({ ...base, kind, labels: { ...labels } })).toBe(want);
  });

  it('a firing alert: value, threshold, previous, since, data time and block, in its unit', () => {
    const a = alert('r', 'm1', { firing_since: T0 });
    expect(evidence({ status: 'firing', alert: a })).toEqual([
      ['value', '97%'],
      ['threshold', '95%'],
      ['previous', '93%'],
      ['since', '2024-05-01 12:00:00 UTC'],
      ['data at', '2024-05-01 11:59:55 UTC'],
      ['block', '123456'],
    ]);
    expect(evidence({ status: 'flapping', alert: a, unit: 'number' }).slice(0, 4)).toEqual([
      ['value', '0.97'],
      ['threshold', '0.95'],
      ['previous', '0.93'],
      ['since', '2024-05-01 12:00:00 UTC'],
    ]);
  });

  it('a resolved alert: its peak, how long it lasted and when it resolved instead of since', () => {
    const a = alert('r', 'm1', { firing_since: T0, state: 'resolved', resolved_at: T0 + 5_400_000, peak: 0.991 });
    expect(evidence({ status: 'resolved', alert: a })).toEqual([
      ['value', '97%'],
      ['threshold', '95%'],
      ['previous', '93%'],
      ['peak', '99.1%'],
      ['lasted', '1h30m'],
      ['resolved', '2024-05-01 13:30:00 UTC'],
      ['data at', '2024-05-01 11:59:55 UTC'],
      ['block', '123456'],
    ]);
  });

  it('leaves out what is unknown', () => {
    const none = { value: null, threshold: null, previous_value: null, peak: null, data_at: null, block: null };
    expect(evidence({ status: 'firing', alert: alert('r', 'm1', { ...none, firing_since: null }) })).toEqual([]);
    expect(evidence({ status: 'resolved', alert: alert('r', 'm1', { ...none, firing_since: T0, resolved_at: null }) })).toEqual([]);
    expect(evidence({ status: 'resolved', alert: alert('r', 'm1', { ...none, firing_since: null, resolved_at: T0 }) })).toEqual([['resolved', '2024-05-01 12:00:00 UTC']]);
    expect(evidence({ status: 'firing', alert: alert('r', 'm1', { ...none, block: 0, firing_since: T0 }) })).toEqual([
      ['since', '2024-05-01 12:00:00 UTC'],
      ['block', '0'],
    ]);
  });

  it('how long a resolved alert fired: never negative, null when a time is missing', () => {
    expect(lastedMs(alert('r', 'm', { firing_since: T0, resolved_at: T0 + 1000 }))).toBe(1000);
    expect(lastedMs(alert('r', 'm', { firing_since: T0, resolved_at: T0 - 1000 }))).toBe(0);
    expect(lastedMs(alert('r', 'm', { firing_since: null, resolved_at: T0 }))).toBeNull();
    expect(lastedMs(alert('r', 'm', { firing_since: T0, resolved_at: null }))).toBeNull();
  });
});

describe('a message: rule, group, severity, counts, title', () => {
  const fire = (rule: string, entity: string, over: Parameters<typeof alert>[2] = {}): MessageAlert => ({ status: 'firing', alert: alert(rule, entity, over) });

  it('the rule is the common one, else up to three distinct rules and how many more', () => {
    expect(messageRule(msg([fire('a', '1'), fire('a', '2')]))).toBe('a');
    expect(messageRule(msg([fire('a', '1'), fire('b', '2'), fire('a', '3')]))).toBe('a, b');
    expect(messageRule(msg([fire('a', '1'), fire('b', '2'), fire('c', '3')]))).toBe('a, b, c');
    expect(messageRule(msg([fire('a', '1'), fire('b', '2'), fire('c', '3'), fire('d', '4'), fire('e', '5')]))).toBe('a, b, c +2');
  });

  it('the group text leaves out the rule, the alertname and empty values', () => {
    expect(groupText(msg([fire('a', '1')], { rule: 'a', alertname: 'a', chain: 'base', market_id: '', poll: 'p' }))).toBe('chain=base, poll=p');
    expect(groupText(msg([fire('a', '1')], { rule: 'a' }))).toBe('');
  });

  it('the severity is the highest; an unknown one counts as info', () => {
    expect(messageSeverity(msg([fire('a', '1', { severity: 'info' }), fire('a', '2', { severity: 'warning' }), fire('a', '3', { severity: 'info' })]))).toBe('warning');
    expect(messageSeverity(msg([fire('a', '1', { severity: 'critical' }), fire('a', '2', { severity: 'warning' })]))).toBe('critical');
    expect(messageSeverity(msg([fire('a', '1', { severity: 'page' as never })]))).toBe('info');
    expect(messageSeverity(msg([]))).toBe('info');
  });

  it('counts by status and titles the message', () => {
    const a = (status: MessageAlert['status'], e: string, severity: 'critical' | 'warning' = 'warning'): MessageAlert => ({ status, alert: alert('r', e, { severity }) });
    const mixed = msg([a('firing', '1', 'critical'), a('flapping', '2'), a('resolved', '3'), a('resolved', '4')], { rule: 'r', chain: 'base' });
    expect(counts(mixed)).toEqual({ firing: 1, resolved: 2, flapping: 1 });
    expect(mixed.status).toBe('firing');
    expect(titleLine(mixed)).toBe('FIRING:2 r (chain=base) [critical], 2 resolved');
    expect(titleLine(msg([a('firing', '1')]))).toBe('FIRING:1 r [warning]');
    const done = msg([a('resolved', '3'), a('resolved', '4')]);
    expect(done.status).toBe('resolved');
    expect(titleLine(done)).toBe('RESOLVED r [warning]');
  });

  it('a message shares the labels and annotations every alert has, with the same value', () => {
    expect(commonOf([])).toEqual({});
    expect(commonOf([{ a: '1', b: '2', c: '3' }, { a: '1', b: '3', c: '3' }, { a: '1', c: '3' }])).toEqual({ a: '1', c: '3' });
    expect(commonOf([{ a: '1' }])).toEqual({ a: '1' });
    const m = msg([
      { status: 'flapping', alert: alert('r', 'm1', { annotations: { summary: 's', runbook: 'x' } }) },
      { status: 'resolved', alert: alert('r', 'm2', { annotations: { summary: 's', runbook: 'y' } }) },
    ]);
    expect(m.status).toBe('firing');
    expect(m.commonAnnotations).toEqual({ summary: 's' });
    expect(m.commonLabels).toEqual({ rule: 'r', alertname: 'r', severity: 'critical', chain: 'base', poll: 'markets', loan_asset: 'USDC', collateral_asset: 'WETH' });
  });
});

describe('number formats at their edges', () => {
  it.each([
    ['seconds', 0.96, '1s'],
    ['number', 1234.5678, '1234.5678'],
    ['number', 1e10, '1.00000e+10'],
  ] as const)('formatIn(%s, %s) is %s', (unit, v, want) => {
    expect(formatIn(unit, v)).toBe(want);
  });
});
