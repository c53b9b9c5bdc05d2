/**
 * What each notifier says, word for word (src/notify/notifiers/{slack-blocks,console,email}.ts): one message with a
 * firing alert (summary, description, page link) and a resolved one, as Slack blocks, console lines, and the email's
 * text and HTML; then the edges: Slack's split and "more" counts, the severity icons and colours, links that are not
 * http(s), alerts without labels, long ids and control characters on a terminal.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { silentLogger } from '../src/log.js';
import { buildMessage, type MessageAlert, type NotificationMessage } from '../src/notify/message.js';
import { consoleLines, shortId } from '../src/notify/notifiers/console.js';
import { emailHtml, emailText } from '../src/notify/notifiers/email.js';
import { slackPayloads } from '../src/notify/notifiers/slack-blocks.js';
import { NotifierRegistry } from '../src/notify/registry.js';
import { alert, notifier } from './notify-helpers.js';

const T0 = Date.UTC(2024, 4, 1, 12, 0, 0);

function msg(alerts: MessageAlert[], groupLabels: Record<string, string> = { rule: 'util', chain: 'base' }): NotificationMessage {
  return buildMessage({ dedupKey: 'lk-b', notifier: 'n', groupKey: 'g', groupLabels, alerts, createdAt: T0 });
}

const firing = alert('util', 'm1', { firing_since: T0, annotations: { summary: 'high & <rising>', description: 'see runbook' } }, { loan_asset_symbol: 'USDC', collateral_asset_symbol: 'WETH' });
const resolved = alert('util', 'm2', { state: 'resolved', resolved_at: T0 + 60_000, firing_since: T0, severity: 'warning', annotations: {} });
const both = () => msg([{ status: 'firing', alert: firing, url: 'https://l.example/alerts/util%2Fm1' }, { status: 'resolved', alert: resolved }]);
const LABELS1 = 'rule=`util`  alertname=`util`  severity=`critical`  market_id=`m1`  chain=`base`  poll=`markets`  loan_asset=`USDC`  collateral_asset=`WETH`  loan_asset_symbol=`USDC`  collateral_asset_symbol=`WETH`';
const LABELS2 = 'rule=`util`  alertname=`util`  severity=`warning`  market_id=`m2`  chain=`base`  poll=`markets`  loan_asset=`USDC`  collateral_asset=`WETH`';
const section = (text: string) => ({ type: 'section', text: { type: 'mrkdwn', text } });
const context = (text: string) => ({ type: 'context', elements: [{ type: 'mrkdwn', text }] });

describe('word for word', () => {
  it('Slack', () => {
    expect(slackPayloads(both(), 20)).toEqual([
      {
        text: 'FIRING:1 util (chain=base) [critical], 1 resolved: WETH/USDC on base (m1) value 97%, threshold 95%; WETH/USDC on base (m2) value 97%, threshold 95%',
        blocks: [
          { type: 'header', text: { type: 'plain_text', text: ':red_circle: FIRING:1 util (chain=base) [critical], 1 resolved', emoji: true } },
          section('*util* · severity *critical* · group chain=base · 1 firing, 1 resolved'),
          section(
            '*FIRING* critical · *util* · WETH/USDC on base (m1)\nvalue *97%* · threshold *95%* · previous *93%* · since *2024-05-01 12:00:00 UTC* · data at *2024-05-01 11:59:55 UTC* · block *123456*\n> high &amp; &lt;rising&gt;\nsee runbook\n<https://l.example/alerts/util%2Fm1|chart and history>',
          ),
          context(LABELS1),
          section(
            '*RESOLVED* warning · *util* · WETH/USDC on base (m2)\nvalue *97%* · threshold *95%* · previous *93%* · peak *99%* · lasted *1m* · resolved *2024-05-01 12:01:00 UTC* · data at *2024-05-01 11:59:55 UTC* · block *123456*',
          ),
          context(LABELS2),
          context('lookout · dedup key `lk-b`'),
        ],
        unfurl_links: false,
        unfurl_media: false,
      },
    ]);
  });

  it('console, coloured', () => {
    expect(consoleLines(both(), true)).toEqual([
      '2024-05-01 12:00:00 UTC \x1b[31mFIRING critical util\x1b[0m WETH/USDC on base (m1): value=97% threshold=95% previous=93% — high & <rising> [lk-b]',
      '2024-05-01 12:00:00 UTC \x1b[32mRESOLVED warning util\x1b[0m WETH/USDC on base (m2): value=97% threshold=95% previous=93% peak=99% lasted=1m [lk-b]',
    ]);
  });

  it('email text', () => {
    expect(emailText(both())).toBe(
      [
        '[FIRING:1] util (chain=base) — severity critical',
        '',
        'FIRING critical util — WETH/USDC on base (m1)',
        '  value: 97%',
        '  threshold: 95%',
        '  previous: 93%',
        '  since: 2024-05-01 12:00:00 UTC',
        '  data at: 2024-05-01 11:59:55 UTC',
        '  block: 123456',
        '  summary: high & <rising>',
        '  description: see runbook',
        '  labels: rule=util, alertname=util, severity=critical, market_id=m1, chain=base, poll=markets, loan_asset=USDC, collateral_asset=WETH, loan_asset_symbol=USDC, collateral_asset_symbol=WETH',
        '  chart and history: https://l.example/alerts/util%2Fm1',
        '',
        'RESOLVED warning util — WETH/USDC on base (m2)',
        '  value: 97%',
        '  threshold: 95%',
        '  previous: 93%',
        '  peak: 99%',
        '  lasted: 1m',
        '  resolved: 2024-05-01 12:01:00 UTC',
        '  data at: 2024-05-01 11:59:55 UTC',
        '  block: 123456',
        '  labels: rule=util, alertname=util, severity=warning, market_id=m2, chain=base, poll=markets, loan_asset=USDC, collateral_asset=WETH',
        '',
        'sent by lookout at 2024-05-01 12:00:00 UTC · dedup key lk-b',
      ].join('\n'),
    );
  });

  it('email HTML', () => {
    const row = (k: string, v: string) => `<tr><td style="color:#666;padding-right:12px">${k}</td><td><b>${v}</b></td></tr>`;
    const code = (l: string) => l.replace(/`/g, '').split('  ').map((x) => `<code>${x}</code>`).join(' ');
    expect(emailHtml(both())).toBe(
      '<!DOCTYPE html><html><body style="font-family:sans-serif"><h2 style="color:#c62828">[FIRING:1] util (chain=base)</h2>\n' +
        '<div style="border-left:4px solid #c62828;padding:4px 12px;margin:12px 0"><h3 style="margin:0">FIRING critical · util · WETH/USDC on base (m1)</h3><table>' +
        row('value', '97%') +
        row('threshold', '95%') +
        row('previous', '93%') +
        row('since', '2024-05-01 12:00:00 UTC') +
        row('data at', '2024-05-01 11:59:55 UTC') +
        row('block', '123456') +
        '</table><p style="margin:4px 0">high &amp; &lt;rising&gt;</p><p style="margin:4px 0">see runbook</p>' +
        `<p style="font-size:12px;color:#666">${code(LABELS1)}</p><p style="margin:4px 0"><a href="https://l.example/alerts/util%2Fm1">chart and history</a></p></div>\n` +
        '<div style="border-left:4px solid #2e7d32;padding:4px 12px;margin:12px 0"><h3 style="margin:0">RESOLVED warning · util · WETH/USDC on base (m2)</h3><table>' +
        row('value', '97%') +
        row('threshold', '95%') +
        row('previous', '93%') +
        row('peak', '99%') +
        row('lasted', '1m') +
        row('resolved', '2024-05-01 12:01:00 UTC') +
        row('data at', '2024-05-01 11:59:55 UTC') +
        row('block', '123456') +
        `</table><p style="font-size:12px;color:#666">${code(LABELS2)}</p></div>\n` +
        '<p style="font-size:11px;color:#999">sent by lookout at 2024-05-01 12:00:00 UTC · dedup key lk-b</p></body></html>',
    );
  });
});

describe('the edges', () => {
  const many = (n: number, over: Parameters<typeof alert>[2] = {}): MessageAlert[] => Array.from({ length: n }, (_, i) => ({ status: 'firing', alert: alert('util', `m${i}`, over) }));

  it('Slack splits 23 alerts a post, numbers the parts, and counts what max_alerts hides on the last one', () => {
    const posts = slackPayloads(msg(many(30)), 24);
    expect(posts.map((p) => p.blocks.length)).toEqual([2 + 46 + 1, 2 + 2 + 1 + 1]);
    expect(posts.map((p) => (p.blocks.at(-1) as { elements: Array<{ text: string }> }).elements[0]!.text)).toEqual(['lookout · dedup key `lk-b` · part 1/2', 'lookout · dedup key `lk-b` · part 2/2']);
    expect(posts[1]!.blocks.at(-2)).toEqual(section('…and *6* more not shown'));
    expect(JSON.stringify(posts[0])).not.toContain('more not shown');
    expect(posts[0]!.text).toBe(posts[1]!.text);
    expect(posts[0]!.text).toMatch(/^FIRING:30 util \(chain=base\) \[critical\]: WETH\/USDC on base \(m0\) value 97%, threshold 95%; .*\(m4\) value 97%, threshold 95% and 25 more$/);
    const exactly = slackPayloads(msg(many(23)), 23);
    expect(exactly.map((p) => p.blocks.length)).toEqual([2 + 46 + 1]);
    expect(JSON.stringify(exactly)).not.toContain('part 1');
    expect(slackPayloads(msg(many(5)), 20)[0]!.text).not.toContain('more');
  });

  it('a message without alerts is still one post; the header is clipped to 150 characters', () => {
    const [empty] = slackPayloads(msg([]), 20);
    expect(empty!.blocks.map((b) => b.type)).toEqual(['header', 'section', 'context']);
    expect(empty!.blocks[0]).toEqual({ type: 'header', text: { type: 'plain_text', text: ':white_check_mark: RESOLVED  (chain=base) [info]', emoji: true } });
    expect(empty!.blocks[1]).toEqual(section('** · severity *info* · group chain=base · 0 firing'));
    const long = 'x'.repeat(200);
    const [p] = slackPayloads(msg([{ status: 'firing', alert: alert(long, 'm1') }], { rule: long }), 20);
    const header = (p!.blocks[0] as { text: { text: string } }).text.text;
    expect(header).toHaveLength(150);
    expect(header).toMatch(/^:red_circle: FIRING:1 x+…$/);
  });

  it('icons by severity, counts of flapping, no link for a URL that is not http(s), "no labels"', () => {
    const icon = (severity: 'info' | 'warning' | 'critical') => (slackPayloads(msg(many(1, { severity })), 20)[0]!.blocks[0] as { text: { text: string } }).text.text.split(' ')[0];
    expect([icon('info'), icon('warning'), icon('critical')]).toEqual([':large_blue_circle:', ':large_orange_circle:', ':red_circle:']);
    const bare = { ...alert('util', 'm9', { annotations: {} }), labels: {} };
    const [p] = slackPayloads(
      msg([
        { status: 'flapping', alert: bare, url: 'javascript:alert(1)' },
        { status: 'firing', alert: bare, url: 'https://x.example/a b' },
        { status: 'firing', alert: bare, url: 'HTTP://x.example/ok' },
      ]),
      20,
    );
    const raw = JSON.stringify(p);
    expect(raw).not.toContain('javascript:');
    expect(raw).not.toContain('x.example/a b');
    expect(raw).toContain('<HTTP://x.example/ok|chart and history>');
    expect(p!.blocks[1]).toEqual(section('*util* · severity *critical* · group chain=base · 2 firing, 1 flapping'));
    expect(p!.blocks[3]).toEqual(context('no labels'));
    expect((p!.blocks[2] as { text: { text: string } }).text.text).toBe('*FLAPPING* critical · *util* · m9\nvalue *97%* · threshold *95%* · previous *93%* · since *2023-11-14 22:13:20 UTC* · data at *2023-11-14 22:13:15 UTC* · block *123456*');
  });

  it('a section longer than Slack allows is clipped to 3000 characters', () => {
    const [p] = slackPayloads(msg(many(1, { annotations: { summary: 'y'.repeat(5000) } })), 20);
    const t = (p!.blocks[2] as { text: { text: string } }).text.text;
    expect(t).toHaveLength(3000);
    expect(t.endsWith('y…')).toBe(true);
  });

  it('console: colours by severity, a repeat marked, long ids shortened, control characters shown as ?', () => {
    const line = (over: Parameters<typeof alert>[2], entity = 'm1', extra: Partial<MessageAlert> = {}) => consoleLines(msg([{ status: 'firing', alert: alert('util', entity, over), ...extra }]), true)[0]!;
    expect(line({ severity: 'warning' })).toContain('\x1b[33mFIRING warning util\x1b[0m');
    expect(line({ severity: 'info' })).toContain('\x1b[36mFIRING info util\x1b[0m');
    expect(line({ severity: 'page' as never })).toContain(' FIRING page util\x1b[0m');
    expect(line({}, 'm1', { repeat: true })).toContain('FIRING (repeat) critical util');
    expect(line({ annotations: { summary: 'a\x1b[2Jb\nc' } })).toContain(' — a?[2Jb?c [lk-b]');
    expect(line({ annotations: {} })).toMatch(/previous=93% \[lk-b\]$/);
    expect([shortId('0123456789abcdef'), shortId('0123456789abcdefg')]).toEqual(['0123456789abcdef', '012345…defg']);
    expect(line({}, 'e\x07vil')).toContain(' WETH/USDC on base (e?vil): ');
  });

  it('console notifier: colours on a terminal when auto, never when not', async () => {
    const out: string[] = [];
    const make = (color: string, isTTY: boolean) =>
      new NotifierRegistry().createAll({ c: notifier({ type: 'console', color }) }, { clock: new ManualClock(T0), log: silentLogger, stdout: { write: (t: string) => out.push(t), isTTY } }).get('c')!;
    await make('auto', true).send(both(), AbortSignal.timeout(5000));
    await make('never', true).send(both(), AbortSignal.timeout(5000));
    await make('always', false).send(both(), AbortSignal.timeout(5000));
    expect(out.map((o) => o.includes('\x1b['))).toEqual([true, false, true]);
    expect(out[1]).toBe(consoleLines(both(), false).join('\n') + '\n');
  });

  it('email: the heading’s colour by severity, green when resolved', () => {
    const colour = (m: NotificationMessage) => /<h2 style="color:(#[0-9a-f]+)">/.exec(emailHtml(m))![1];
    expect([colour(msg(many(1, { severity: 'critical' }))), colour(msg(many(1, { severity: 'warning' }))), colour(msg(many(1, { severity: 'info' })))]).toEqual(['#c62828', '#ef6c00', '#1565c0']);
    expect(colour(msg([{ status: 'resolved', alert: resolved }]))).toBe('#2e7d32');
    expect(emailHtml(msg([{ status: 'firing', alert: firing, url: 'https://x.example/?a="b"&c' }]))).toContain('<a href="https://x.example/?a=&quot;b&quot;&amp;c">');
  });
});

describe('Slack: links and groups', () => {
  it('a link only to a URL that starts http(s), and no group words when the rule is the whole group', () => {
    const [p] = slackPayloads(msg([{ status: 'firing', alert: firing, url: 'javascript:https://x.example/a' }], { rule: 'util' }), 20);
    expect(JSON.stringify(p)).not.toContain('chart and history');
    expect(p!.blocks[1]).toEqual(section('*util* · severity *critical* · 1 firing'));
  });
});
