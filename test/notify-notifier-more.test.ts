/**
 * The notifier modules' own edges (src/notify/notifiers/{email,webhook}.ts and each module's type): what `lookout
 * render` prints for email and webhook, the email subject's counts, an email send aborted before or while the SMTP
 * server holds it (a silent TCP server on loopback), and a webhook without a token or a secret sending neither header.
 */
import { createServer as createHttpServer, type IncomingHttpHeaders } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { NotifyError } from '../src/errors.js';
import { silentLogger } from '../src/log.js';
import { buildMessage, type MessageAlert, type NotificationMessage } from '../src/notify/message.js';
import { emailHtml, emailSubject, emailText } from '../src/notify/notifiers/email.js';
import { webhookPayload } from '../src/notify/notifiers/webhook.js';
import { NotifierRegistry } from '../src/notify/registry.js';
import { alert, closedPort, notifier, SlackRecorder, tempStores } from './notify-helpers.js';

const T0 = Date.UTC(2024, 4, 1, 12, 0, 0);
const deps = { clock: new ManualClock(T0), log: silentLogger };
const registry = new NotifierRegistry();
const cleanups: Array<() => Promise<void> | void> = [];
const stores = tempStores();
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
  stores.cleanup();
});

function msg(alerts: MessageAlert[], groupLabels: Record<string, string> = { rule: 'util', chain: 'base' }): NotificationMessage {
  return buildMessage({ dedupKey: 'lk-m', notifier: 'n', groupKey: 'g', groupLabels, alerts, createdAt: T0 });
}
const one = () => msg([{ status: 'firing', alert: alert('util', 'm1') }]);
const EMAIL = { type: 'email', smtp: { host: '127.0.0.1' }, from: 'lookout@example.com', to: ['risk@example.com', 'ops@example.com'] };

describe('each module', () => {
  it('names its type', () => {
    const made = registry.createAll(
      {
        hook: notifier({ type: 'webhook', url: 'http://127.0.0.1:1/h' }),
        mail: notifier(EMAIL),
        am: notifier({ type: 'alertmanager', urls: ['http://127.0.0.1:1'] }),
        slack: notifier({ type: 'slack', webhook_url: 'http://127.0.0.1:1/s' }),
        bot: notifier({ type: 'slack', token: 'xoxb-1', channel: 'C1' }),
        out: notifier({ type: 'console' }),
      },
      { ...deps, db: stores.open().db },
    );
    expect([...made.values()].map((n) => [n.name, n.type])).toEqual([
      ['hook', 'webhook'],
      ['mail', 'email'],
      ['am', 'alertmanager'],
      ['slack', 'slack'],
      ['bot', 'slack'],
      ['out', 'console'],
    ]);
    for (const n of made.values()) cleanups.push(() => n.close?.());
  });
});

describe('render', () => {
  it('email: the headers, then the text and the HTML part', () => {
    const m = one();
    expect(registry.render('mail', notifier(EMAIL), m, deps)).toBe(
      [
        'From: lookout@example.com',
        'To: risk@example.com, ops@example.com',
        'Subject: [FIRING:1] util (chain=base)',
        'Message-ID: <lk-m@lookout>',
        'X-Lookout-Dedup-Key: lk-m',
        '',
        '--- text/plain ---',
        emailText(m),
        '',
        '--- text/html ---',
        emailHtml(m),
      ].join('\n'),
    );
  });

  it('webhook: the dedup header always, the token and the signature redacted only when configured', () => {
    const m = one();
    const body = JSON.stringify(webhookPayload('hook', m, 'https://l.example'), null, 2);
    expect(registry.render('hook', notifier({ type: 'webhook', url: 'http://127.0.0.1:1/h', external_url: 'https://l.example' }), m, deps)).toBe(`POST [webhook url]\nX-Lookout-Dedup-Key: lk-m\n\n${body}`);
    const full = registry.render('hook', notifier({ type: 'webhook', url: 'http://127.0.0.1:1/h', bearer_token: 'tok-secret', hmac_secret: 'hm4c-secret', external_url: 'https://l.example' }), m, deps);
    expect(full).toBe(`POST [webhook url]\nX-Lookout-Dedup-Key: lk-m\nAuthorization: Bearer [redacted]\nX-Lookout-Signature: sha256=…\n\n${body}`);
  });
});

describe('email', () => {
  it('the subject counts flapping alerts as firing and names no group when the rule is all there is', () => {
    const a = alert('util', 'm1');
    expect(emailSubject(msg([{ status: 'firing', alert: a }, { status: 'flapping', alert: a }, { status: 'resolved', alert: a }]))).toBe('[FIRING:2] util (chain=base)');
    expect(emailSubject(msg([{ status: 'firing', alert: a }], { rule: 'util' }))).toBe('[FIRING:1] util');
  });

  async function silentSmtp(): Promise<{ port: number; connections: () => number }> {
    const sockets: Socket[] = [];
    const server: Server = createServer((s) => sockets.push(s)); // accepts, never greets
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(
      () =>
        new Promise<void>((r) => {
          for (const s of sockets) s.destroy();
          server.close(() => r());
        }),
    );
    return { port: (server.address() as AddressInfo).port, connections: () => sockets.length };
  }

  it('an attempt already aborted is not sent; one aborted while the server holds it stops, retryable', async () => {
    const smtp = await silentSmtp();
    const mail = registry.createAll({ mail: notifier({ ...EMAIL, smtp: { host: '127.0.0.1', port: smtp.port }, timeout: '60s' }) }, deps).get('mail')!;
    cleanups.push(() => mail.close?.());
    const outcome = (p: Promise<void>) => p.then(() => 'sent', (e: NotifyError) => [e instanceof NotifyError, e.message, e.retryable]);
    expect(await outcome(mail.send(one(), AbortSignal.abort()))).toEqual([true, 'mail: aborted', true]);
    expect(smtp.connections()).toBe(0);
    const ac = new AbortController();
    const sending = outcome(mail.send(one(), ac.signal));
    const deadline = Date.now() + 10_000;
    while (smtp.connections() === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(smtp.connections()).toBe(1);
    ac.abort();
    const settled = await Promise.race([sending, new Promise((r) => setTimeout(() => r('still sending'), 10_000))]);
    expect(settled).toEqual([true, 'mail: aborted', true]);
  });
});

describe('webhook', () => {
  it('without a token or a secret, sends neither header', async () => {
    const got: IncomingHttpHeaders[] = [];
    const server = createHttpServer((req, res) => {
      got.push(req.headers);
      req.resume();
      req.on('end', () => res.end('ok'));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
    const hook = registry.createAll({ hook: notifier({ type: 'webhook', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/h` }) }, deps).get('hook')!;
    await hook.send(one(), AbortSignal.timeout(10_000));
    expect(got).toHaveLength(1);
    expect(got[0]).not.toHaveProperty('authorization');
    expect(got[0]).not.toHaveProperty('x-lookout-signature');
    expect(got[0]!['x-lookout-dedup-key']).toBe('lk-m');
  });
});

describe('more edges', () => {
  it('alertmanager: render names the peer count; a peer under a path without a slash keeps its path', async () => {
    const m = one();
    const cfg = notifier({ type: 'alertmanager', urls: ['http://127.0.0.1:1', 'http://127.0.0.1:2'], resend_interval: '1m' });
    const out = registry.render('am', cfg, m, deps);
    expect(out.split('\n')[0]).toBe('POST {alertmanager}/api/v2/alerts (to each of 2 peer(s))');
    expect(JSON.parse(out.slice(out.indexOf('\n') + 1))).toHaveLength(1);
    const urls: string[] = [];
    const server = createHttpServer((req, res) => {
      urls.push(`${req.method} ${req.url}`);
      req.resume();
      req.on('end', () => res.end('ok'));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
    const am = registry.createAll({ am: notifier({ type: 'alertmanager', urls: [`http://127.0.0.1:${(server.address() as AddressInfo).port}/am`] }) }, deps).get('am')!;
    await am.send(m, AbortSignal.timeout(10_000));
    expect(urls).toEqual(['POST /am/api/v2/alerts']);
  });

  it('an HTTP 300 answer is not a delivery', async () => {
    const server = createHttpServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(300);
        res.end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
    const hook = registry.createAll({ hook: notifier({ type: 'webhook', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/h` }) }, deps).get('hook')!;
    const err = await hook.send(one(), AbortSignal.timeout(10_000)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotifyError);
    expect((err as NotifyError).message).toBe('hook: webhook answered HTTP 300 (not retried)');
  });

  it('slack webhook mode: a refused connection is retried and named by its code', async () => {
    const slack = registry.createAll({ slack: notifier({ type: 'slack', webhook_url: `http://127.0.0.1:${await closedPort()}/services/T/B/x` }) }, deps).get('slack')!;
    const err = await slack.send(one(), AbortSignal.timeout(10_000)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotifyError);
    expect([(err as NotifyError).message, (err as NotifyError).retryable]).toEqual(['slack: slack webhook: request ECONNREFUSED', true]);
  });

  it('slack webhook mode without the dispatcher’s progress posts every part of a long message, in order', async () => {
    const slack = await new SlackRecorder(deps.clock).start();
    cleanups.push(() => slack.stop());
    const hook = registry.createAll({ slack: notifier({ type: 'slack', webhook_url: slack.url, max_alerts: 45 }) }, deps).get('slack')!;
    const long = msg(Array.from({ length: 30 }, (_, i) => ({ status: 'firing' as const, alert: alert('util', `m${i}`) })));
    await hook.send(long, AbortSignal.timeout(10_000));
    expect(slack.posts.map((p) => /part (\d+\/\d+)/.exec(p.raw)?.[1])).toEqual(['1/2', '2/2']);
  });

  it('slack webhook mode: an HTTP error names the webhook and its status; render shows the webhook payloads, not a bot call', async () => {
    const slack = await new SlackRecorder(deps.clock).start();
    cleanups.push(() => slack.stop());
    slack.respond(500);
    const cfg = notifier({ type: 'slack', webhook_url: slack.url });
    const err = await registry.createAll({ slack: cfg }, deps).get('slack')!.send(one(), AbortSignal.timeout(10_000)).catch((e: unknown) => e);
    expect([(err as NotifyError).message, (err as NotifyError).retryable]).toEqual(['slack: slack webhook answered HTTP 500', true]);
    const rendered = JSON.parse(registry.render('slack', cfg, one(), deps)) as Array<Record<string, unknown>>;
    expect(rendered.map((p) => [Object.keys(p).sort(), (p.blocks as unknown[]).length])).toEqual([[['blocks', 'text', 'unfurl_links', 'unfurl_media'], 5]]);
  });
});

