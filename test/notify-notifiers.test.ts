/** Each notifier against a real server on loopback: Slack recorder, SMTP (smtp-server + mailparser), webhook; escaping and secrets. */
import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { NotifyError } from '../src/errors.js';
import { silentLogger } from '../src/log.js';
import { buildMessage, type MessageAlert, type NotificationMessage } from '../src/notify/message.js';
import { NotifierRegistry, notifierModules } from '../src/notify/registry.js';
import { slackPayloads } from '../src/notify/notifiers/slack.js';
import { consoleLines } from '../src/notify/notifiers/console.js';
import { alert, notifier, SlackRecorder } from './notify-helpers.js';
import { startSmtpRecorder } from './smtp-recorder.js';

const T0 = 1_700_000_000_000;
const clock = new ManualClock(T0);
const deps = { clock, log: silentLogger };
const registry = new NotifierRegistry();
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

const EVIL = ['<!channel>', '<https://evil.example|click>'];

function message(alerts: MessageAlert[], over: Partial<NotificationMessage> = {}): NotificationMessage {
  return buildMessage({ dedupKey: 'lk-test-key-1', notifier: 'n', groupKey: 'g1', groupLabels: { rule: 'util', chain: 'base' }, alerts, createdAt: T0, ...over });
}

const evilAlerts = (): MessageAlert[] =>
  EVIL.map((sym, i) => ({
    status: 'firing',
    alert: alert('util', `m${i}`, { annotations: { summary: `${sym} utilization high` } }, { loan_asset_symbol: sym, collateral_asset_symbol: 'WETH' }),
  }));

const signal = () => AbortSignal.timeout(10_000);

describe('slack', () => {
  it('escapes untrusted symbols in every mrkdwn text and in the fallback text', async () => {
    const slack = await new SlackRecorder(clock).start();
    cleanups.push(() => slack.stop());
    const n = registry.createAll({ s: notifier({ type: 'slack', webhook_url: slack.url }) }, deps).get('s')!;
    await n.send(message(evilAlerts()), signal());
    const raw = slack.posts[0]!.raw;
    for (const bad of EVIL) expect(raw).not.toContain(bad);
    expect(raw).toContain('&lt;!channel&gt;');
    expect(raw).toContain('&lt;https://evil.example|click&gt;');
    expect(slack.posts[0]!.body.text).toMatch(/^FIRING:2 util \(chain=base\)/);
    expect(slack.posts[0]!.key).toBe('lk-test-key-1');
  });

  it.each([
    ['500 → retryable', 500, undefined, true, undefined],
    ['429 + Retry-After → retryable with the delay', 429, '7', true, 7000],
    ['403 → not retryable', 403, undefined, false, undefined],
  ])('classifies %s, never naming the webhook URL', async (_name, status, retryAfter, retryable, after) => {
    const slack = await new SlackRecorder(clock).start();
    cleanups.push(() => slack.stop());
    slack.respond(status, retryAfter ? { retryAfter } : {});
    const n = registry.createAll({ s: notifier({ type: 'slack', webhook_url: slack.url }) }, deps).get('s')!;
    const err = await n.send(message(evilAlerts()), signal()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotifyError);
    expect((err as NotifyError).retryable).toBe(retryable);
    expect((err as NotifyError).retryAfterMs).toBe(after);
    expect(JSON.stringify({ m: (err as Error).message, s: (err as Error).stack })).not.toContain('secret-token');
  });

  it('a refused connection is retryable and does not leak the URL', async () => {
    const n = registry.createAll({ s: notifier({ type: 'slack', webhook_url: 'http://127.0.0.1:9/services/T/B/secret-token' }) }, deps).get('s')!;
    const err = (await n.send(message(evilAlerts()), signal()).catch((e: unknown) => e)) as NotifyError;
    expect(err.retryable).toBe(true);
    expect(err.message).not.toContain('secret-token');
  });

  it('lists at most max_alerts, says how many more, and splits long groups under 50 blocks and 3000 chars', () => {
    const alerts: MessageAlert[] = Array.from({ length: 60 }, (_, i) => ({
      status: 'firing',
      alert: alert('util', `m${i}`, { annotations: { summary: 'x'.repeat(4000) } }),
    }));
    const posts = slackPayloads(message(alerts), 45);
    expect(posts.length).toBe(2);
    for (const p of posts) {
      expect(p.blocks.length).toBeLessThanOrEqual(50);
      for (const b of p.blocks) {
        const t = (b as { text?: { text: string } }).text?.text ?? '';
        expect(t.length).toBeLessThanOrEqual(3000);
      }
    }
    expect(JSON.stringify(posts.at(-1))).toContain('and *15* more not shown');
    expect(JSON.stringify(posts[0])).toContain('part 1/2');
  });

  it('a resolved message says how long it lasted and the peak', () => {
    const a = alert('util', 'm1', { state: 'resolved', resolved_at: T0 + 5_400_000, peak: 0.991 });
    const [p] = slackPayloads(message([{ status: 'resolved', alert: a }]), 20);
    const raw = JSON.stringify(p);
    expect(p!.text).toMatch(/^RESOLVED util/);
    expect(raw).toContain('lasted *1h30m*');
    expect(raw).toContain('peak *99.1%*');
  });
});

describe('email', () => {
  it('sends subject, text and escaped HTML parts with the dedup key to a real SMTP server', async () => {
    const smtp = await startSmtpRecorder('sm7p-Pa55word');
    cleanups.push(() => smtp.stop());
    const { port, mails: received } = smtp;
    const cfg = (pass: string) =>
      notifier({ type: 'email', smtp: { host: '127.0.0.1', port, user: 'lookout', pass }, from: 'lookout@example.com', to: ['risk@example.com'] });

    const good = registry.createAll({ mail: cfg('sm7p-Pa55word') }, deps).get('mail')!;
    cleanups.push(() => good.close?.());
    await good.send(message(evilAlerts()), signal());
    const mail = await simpleParser(received[0]!);
    expect(mail.subject).toBe('[FIRING:2] util (chain=base)');
    expect(mail.text).toContain('<!channel>'); // plain text is not markup
    expect(mail.text).toContain('value: 97%');
    expect(mail.text).toContain('threshold: 95%');
    expect(mail.text).toContain('block: 123456');
    expect(mail.html).toContain('&lt;!channel&gt;');
    expect(mail.html).toContain('&lt;https://evil.example|click&gt;');
    expect(mail.html).not.toContain('<!channel>');
    expect(mail.html).not.toContain('<https://evil');
    expect(mail.messageId).toBe('<lk-test-key-1@lookout>');
    expect(mail.headers.get('x-lookout-dedup-key')).toBe('lk-test-key-1');

    const bad = registry.createAll({ mail: cfg('wr0ng-Pa55word') }, deps).get('mail')!;
    cleanups.push(() => bad.close?.());
    const err = (await bad.send(message(evilAlerts()), signal()).catch((e: unknown) => e)) as NotifyError;
    expect(err).toBeInstanceOf(NotifyError);
    expect(err.retryable).toBe(false);
    expect(err.message).not.toContain('wr0ng-Pa55word');
  });

  it('resolved subject', () => {
    const a = alert('util', 'm1', { state: 'resolved', resolved_at: T0 + 60_000 });
    const out = registry.render('mail', notifier({ type: 'email', smtp: { host: 'h' }, from: 'a@b.c', to: ['d@e.f'] }), message([{ status: 'resolved', alert: a }]), deps);
    expect(out).toContain('Subject: [RESOLVED] util (chain=base)');
  });
});

describe('webhook', () => {
  it('posts the Alertmanager webhook payload (version 4) with bearer token, HMAC signature and dedup key', async () => {
    const got: Array<{ headers: IncomingHttpHeaders; body: string }> = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        got.push({ headers: req.headers, body });
        res.end('ok');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    const n = registry.createAll({ hook: notifier({ type: 'webhook', url, bearer_token: 'tok-123456', hmac_secret: 'hm4c-secret' }) }, deps).get('hook')!;
    const resolved = alert('util', 'm9', { state: 'resolved', resolved_at: T0 + 1000 });
    await n.send(message([...evilAlerts(), { status: 'resolved', alert: resolved }]), signal());
    const { headers, body } = got[0]!;
    expect(headers.authorization).toBe('Bearer tok-123456');
    expect(headers['x-lookout-dedup-key']).toBe('lk-test-key-1');
    expect(headers['x-lookout-signature']).toBe('sha256=' + createHmac('sha256', 'hm4c-secret').update(body).digest('hex'));
    const p = JSON.parse(body) as { version: string; status: string; receiver: string; dedupKey: string; alerts: Array<{ status: string; endsAt: string; lookout: { value: number } }> };
    expect(p.version).toBe('4');
    expect(p.status).toBe('firing');
    expect(p.receiver).toBe('hook');
    expect(p.dedupKey).toBe('lk-test-key-1');
    expect(p.alerts.map((a) => a.status)).toEqual(['firing', 'firing', 'resolved']);
    expect(p.alerts[2]!.endsAt).toBe(new Date(T0 + 1000).toISOString());
    expect(p.alerts[0]!.lookout.value).toBe(0.97);
  });
});

describe('console and registry', () => {
  it('prints one line per alert, coloured only when asked', () => {
    const m = message(evilAlerts());
    const plain = consoleLines(m, false);
    expect(plain).toHaveLength(2);
    expect(plain[0]).toContain('FIRING critical util');
    expect(plain[0]).not.toContain('\x1b[');
    expect(consoleLines(m, true)[0]).toContain('\x1b[31m');
    const out: string[] = [];
    const n = registry.createAll({ c: notifier({ type: 'console', color: 'auto' }) }, { ...deps, stdout: { write: (t: string) => out.push(t), isTTY: false } }).get('c')!;
    return n.send(m, signal()).then(() => expect(out.join('')).not.toContain('\x1b['));
  });

  it('a console line names the market collateral/loan with a short id, marks a repeat, and words a resolve by its peak, not the firing summary', () => {
    const id = 'morpho-base-0x69de2c6f3a0ab1e2b5c0d2d4e3b1f0a9c8d7c92d';
    const base = alert('jump', id, { kind: 'apy_jump', value: 0.0912, threshold: 0.02, previous_value: 0.031, peak: 0.0912, annotations: { summary: 'borrow APY up 0 bps' } }, { loan_asset_symbol: 'USDC', collateral_asset_symbol: 'WETH' });
    const [firing, repeat] = consoleLines(message([{ status: 'firing', alert: base }, { status: 'firing', alert: base, repeat: true }]), false);
    expect(firing).toContain('FIRING critical jump WETH/USDC on base (morpho…c92d): value=9.12% threshold=2% previous=3.1% — borrow APY up 0 bps [lk-test-key-1]');
    expect(firing).not.toContain(id);
    expect(repeat).toContain('FIRING (repeat) critical jump');
    const resolved = consoleLines(message([{ status: 'resolved', alert: { ...base, state: 'resolved', resolved_at: T0 } }]), false)[0]!;
    expect(resolved).toContain('RESOLVED critical jump WETH/USDC on base (morpho…c92d): value=9.12% threshold=2% previous=3.1% peak=9.12%');
    expect(resolved).not.toContain('up 0 bps');
    for (const line of [firing!, repeat!, resolved]) expect(line.length, line).toBeLessThan(200);
  });

  it('refuses a notifier type registered twice', () => {
    expect(() => new NotifierRegistry([...notifierModules, notifierModules[0]] as never)).toThrow(/registered twice/);
  });
});
