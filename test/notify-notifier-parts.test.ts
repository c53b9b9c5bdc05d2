/**
 * The notifiers' decision parts pinned exactly (src/notify/notifiers/*): how an HTTP answer or a failed request is
 * classified for the retry stage (retryable or not, Retry-After), how an SMTP failure is, what the Alertmanager
 * notifier does when some or all peers fail, and the Alertmanager and webhook payloads field by field. Peers are real
 * HTTP servers on loopback; the notifier tests cover whole deliveries.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { NotifyError } from '../src/errors.js';
import { createLogger } from '../src/log.js';
import { buildMessage, type MessageAlert, type NotificationMessage } from '../src/notify/message.js';
import { alertmanagerAlerts } from '../src/notify/notifiers/alertmanager.js';
import { classifySmtpError, emailSubject } from '../src/notify/notifiers/email.js';
import { httpError, isRetryableStatus, networkError, parseRetryAfter, postJson } from '../src/notify/notifiers/http.js';
import { signBody, webhookPayload } from '../src/notify/notifiers/webhook.js';
import { NotifierRegistry } from '../src/notify/registry.js';
import { alert, notifier } from './notify-helpers.js';

const T0 = Date.UTC(2024, 4, 1, 12, 0, 0);
const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
});

type Got = { method: string; url: string; headers: IncomingHttpHeaders; body: string };

/** A server on 127.0.0.1 answering each request with `status` (and headers), or never (`hang`). */
async function server(answer: { status: number; headers?: Record<string, string> } | 'hang', got: Got[] = []): Promise<string> {
  const s = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      got.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      if (answer === 'hang') return;
      res.writeHead(answer.status, answer.headers ?? {});
      res.end('answer');
    });
  });
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

function msg(alerts: MessageAlert[], over: Partial<NotificationMessage> = {}): NotificationMessage {
  return buildMessage({ dedupKey: 'lk-parts', notifier: 'n', groupKey: 'g1', groupLabels: { rule: 'util' }, alerts, createdAt: T0, ...over });
}

describe('HTTP classification', () => {
  it('Retry-After: seconds or an HTTP date, never negative; nothing when absent or unreadable', () => {
    const date = 'Wed, 21 Oct 2015 07:28:00 GMT';
    const at = Date.parse(date);
    expect([parseRetryAfter('7'), parseRetryAfter(' 1.5 '), parseRetryAfter('-3'), parseRetryAfter(['2', '9']), parseRetryAfter('0')]).toEqual([7000, 1500, 0, 2000, 0]);
    expect([parseRetryAfter(date, at - 5000), parseRetryAfter(date, at + 5000)]).toEqual([5000, 0]);
    expect([parseRetryAfter(undefined), parseRetryAfter(null), parseRetryAfter(''), parseRetryAfter('  '), parseRetryAfter('soon'), parseRetryAfter([])]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });

  it('408, 425, 429 and 5xx are worth retrying; other 4xx are not', () => {
    const statuses = [400, 401, 403, 404, 407, 408, 409, 424, 425, 426, 428, 429, 430, 499, 500, 501, 503, 599];
    expect(statuses.filter(isRetryableStatus)).toEqual([408, 425, 429, 500, 501, 503, 599]);
  });

  it('an HTTP error says the status, whether it is retried, and carries Retry-After only when given', () => {
    const no = httpError('hook', 'webhook', 403);
    expect([no.message, no.notifier, no.retryable, no.retryAfterMs, 'retryAfterMs' in no]).toEqual(['hook: webhook answered HTTP 403 (not retried)', 'hook', false, undefined, true]);
    const busy = httpError('hook', 'webhook', 429, '3');
    expect([busy.message, busy.retryable, busy.retryAfterMs]).toEqual(['hook: webhook answered HTTP 429', true, 3000]);
    expect(httpError('hook', 'webhook', 503, 'soon').retryAfterMs).toBeUndefined();
  });

  it('a request without an answer is retryable and says why, by name or code', () => {
    const e = (err: unknown) => networkError('hook', 'webhook', err);
    expect(e(Object.assign(new Error('x'), { name: 'AbortError' })).message).toBe('hook: webhook: request timed out or was aborted');
    expect(e(Object.assign(new Error('x'), { name: 'TimeoutError' })).message).toBe('hook: webhook: request timed out or was aborted');
    expect(e({ code: 'ECONNRESET', name: 'Error' }).message).toBe('hook: webhook: request ECONNRESET');
    expect(e({ name: 'TypeError' }).message).toBe('hook: webhook: request TypeError');
    // fetch's `TypeError: fetch failed` names its cause; another error's cause is not read.
    expect(e({ name: 'TypeError', message: 'fetch failed', cause: { code: 'ECONNREFUSED', name: 'Error' } }).message).toBe('hook: webhook: request ECONNREFUSED');
    expect(e({ name: 'Error', cause: { code: 'ECONNREFUSED' } }).message).toBe('hook: webhook: request Error');
    expect(e({}).message).toBe('hook: webhook: request failed');
    expect(e({}).retryable).toBe(true);
    expect(e({}).notifier).toBe('hook');
  });

  it('postJson sends JSON with the given headers; any 2xx is delivered, anything else classified', async () => {
    const got: Got[] = [];
    const ok = await server({ status: 204 }, got);
    await postJson(`${ok}/in`, '{"a":1}', { notifier: 'hook', what: 'webhook', headers: { 'x-k': 'v' }, timeoutMs: 5000, signal: AbortSignal.timeout(10_000) });
    expect(got).toMatchObject([{ method: 'POST', url: '/in', body: '{"a":1}', headers: { 'content-type': 'application/json', 'x-k': 'v' } }]);
    const post = (url: string, timeoutMs = 5000) =>
      postJson(url, '{}', { notifier: 'hook', what: 'webhook', timeoutMs, signal: AbortSignal.timeout(10_000) }).then(
        () => 'delivered',
        (e: NotifyError) => [e.message, e.retryable, e.retryAfterMs],
      );
    expect(await post(await server({ status: 299 }))).toBe('delivered');
    expect(await post(await server({ status: 302, headers: { location: '/x' } }))).toEqual(['hook: webhook answered HTTP 302 (not retried)', false, undefined]);
    expect(await post(await server({ status: 429, headers: { 'retry-after': '4' } }))).toEqual(['hook: webhook answered HTTP 429', true, 4000]);
    expect(await post(await server('hang'), 200)).toEqual(['hook: webhook: request timed out or was aborted', true, undefined]);
  });
});

describe('alertmanager notifier', () => {
  const clock = new ManualClock(T0);
  const firing = (): MessageAlert => ({ status: 'firing', alert: alert('util', 'm1', { firing_since: T0 - 60_000 }) });

  async function send(answers: Array<{ status: number; headers?: Record<string, string> }>): Promise<{ result: unknown; warns: Array<Record<string, unknown>>; got: Got[] }> {
    const got: Got[] = [];
    const urls: string[] = [];
    for (const a of answers) urls.push(await server(a, got));
    const warns: Array<Record<string, unknown>> = [];
    const log = createLogger({ level: 'warn', write: (l) => warns.push(JSON.parse(l) as Record<string, unknown>) });
    const n = new NotifierRegistry().createAll({ am: notifier({ type: 'alertmanager', urls: urls.map((u, i) => (i % 2 ? `${u}/` : u)) }) }, { clock, log }).get('am')!;
    const result = await n.send(msg([firing()]), AbortSignal.timeout(10_000)).then(
      () => 'delivered',
      (e: NotifyError) => ({ message: e.message, retryable: e.retryable, retryAfterMs: e.retryAfterMs, cause: (e.cause as Error | undefined)?.message }),
    );
    return { result, warns, got };
  }

  it('posts to every peer; delivered when one accepts, with a warning naming the peers that failed', async () => {
    const { result, warns, got } = await send([{ status: 500 }, { status: 200 }]);
    expect(result).toBe('delivered');
    expect(got.map((g) => [g.method, g.url, g.headers['x-lookout-dedup-key']])).toEqual([
      ['POST', '/api/v2/alerts', 'lk-parts'],
      ['POST', '/api/v2/alerts', 'lk-parts'],
    ]);
    expect(warns).toMatchObject([{ level: 'warn', msg: 'alertmanager_peer_failed', notifier: 'am', errors: ['am: alertmanager peer 1 answered HTTP 500'] }]);
    const all = await send([{ status: 200 }, { status: 200 }]);
    expect([all.result, all.warns]).toEqual(['delivered', []]);
  });

  it('all peers failing is one error: every peer’s message, retryable when any is, the longest Retry-After', async () => {
    const mixed = await send([{ status: 400 }, { status: 503, headers: { 'retry-after': '2' } }, { status: 429, headers: { 'retry-after': '9' } }]);
    expect(mixed.result).toEqual({
      message: 'am: alertmanager peer 1 answered HTTP 400 (not retried); am: alertmanager peer 2 answered HTTP 503; am: alertmanager peer 3 answered HTTP 429',
      retryable: true,
      retryAfterMs: 9000,
      cause: 'am: alertmanager peer 1 answered HTTP 400 (not retried)',
    });
    const permanent = await send([{ status: 400 }, { status: 404 }]);
    expect(permanent.result).toMatchObject({ retryable: false, retryAfterMs: undefined });
  });

  it('the postable alerts: label names made valid, empty labels dropped, lookout’s annotations and evidence, times', () => {
    const a = alert('util', 'm1', { firing_since: T0 - 60_000, pending_since: T0 - 120_000 }, { '1st-label': 'x', empty: '' });
    const noAlertname = { ...a, labels: { rule: 'util' } };
    const [fire, bare] = alertmanagerAlerts(msg([{ status: 'firing', alert: a, url: 'https://lookout.example/alerts/util%2Fm1' }, { status: 'firing', alert: noAlertname }]), 60_000);
    expect(fire).toMatchObject({
      labels: { _1st_label: 'x', rule: 'util', alertname: 'util' },
      annotations: { summary: 'utilization high on m1', lookout_dedup_key: 'lk-parts', lookout_entity: 'm1', value: '97%', data_at: '2024-05-01 11:58:55 UTC' },
      startsAt: new Date(T0 - 60_000).toISOString(),
      endsAt: new Date(T0 + 240_000).toISOString(),
      generatorURL: 'https://lookout.example/alerts/util%2Fm1',
    });
    expect(fire!.labels).not.toHaveProperty('empty');
    expect(bare).toMatchObject({ labels: { rule: 'util', alertname: 'util' } });
    expect(bare).not.toHaveProperty('generatorURL');
    const [withBase] = alertmanagerAlerts(msg([{ status: 'firing', alert: noAlertname }]), 60_000, 'https://lookout.example');
    expect(withBase).toMatchObject({ generatorURL: 'https://lookout.example' });
    const pendingOnly = { ...a, firing_since: null };
    const neither = { ...a, firing_since: null, pending_since: null };
    const resolved = { ...a, state: 'resolved' as const, resolved_at: T0 - 1000 };
    const [p, n, r, rNoTime] = alertmanagerAlerts(
      msg([
        { status: 'firing', alert: pendingOnly },
        { status: 'firing', alert: neither },
        { status: 'resolved', alert: resolved },
        { status: 'resolved', alert: { ...resolved, resolved_at: null } },
      ]),
      60_000,
    );
    expect([p!.startsAt, n!.startsAt, r!.endsAt, rNoTime!.endsAt]).toEqual([
      new Date(T0 - 120_000).toISOString(),
      new Date(T0).toISOString(),
      new Date(T0 - 1000).toISOString(),
      new Date(T0).toISOString(),
    ]);
  });
});

describe('webhook payload', () => {
  it('version 4 with lookout’s evidence and units, and Alertmanager’s zero time where none is known', () => {
    const fire = alert('util', 'm1', { firing_since: T0 - 60_000 });
    const flap = alert('util', 'm2', { firing_since: null, pending_since: T0 - 30_000, data_at: null });
    const done = alert('util', 'm3', { state: 'resolved', resolved_at: T0 });
    const p = webhookPayload('hook', msg([{ status: 'firing', alert: fire, url: 'https://l.example/a/1' }, { status: 'flapping', alert: flap }, { status: 'resolved', alert: done }]), 'https://l.example');
    expect(p).toMatchObject({ version: '4', groupKey: 'g1', truncatedAlerts: 0, status: 'firing', receiver: 'hook', groupLabels: { rule: 'util' }, externalURL: 'https://l.example', dedupKey: 'lk-parts' });
    const [f, fl, d] = p.alerts as Array<Record<string, unknown> & { lookout: Record<string, unknown> }>;
    expect(f).toMatchObject({ status: 'firing', startsAt: new Date(T0 - 60_000).toISOString(), endsAt: '0001-01-01T00:00:00Z', generatorURL: 'https://l.example/a/1', fingerprint: 'util/m1' });
    expect(f!.lookout).toEqual({
      flapping: false,
      kind: 'utilization_above',
      entity: 'm1',
      value: 0.97,
      threshold: 0.95,
      previous_value: 0.93,
      peak: 0.99,
      unit: 'fraction',
      data_at: new Date(T0 - 65_000).toISOString(),
      block: 123456,
      evidence: { value: '97%', threshold: '95%', previous: '93%', since: '2024-05-01 11:59:00 UTC', 'data at': '2024-05-01 11:58:55 UTC', block: '123456' },
    });
    expect(fl).toMatchObject({ status: 'firing', startsAt: new Date(T0 - 30_000).toISOString(), generatorURL: 'https://l.example', lookout: { flapping: true, data_at: null } });
    expect(d).toMatchObject({ status: 'resolved', endsAt: new Date(T0).toISOString(), lookout: { flapping: false } });
    const none = webhookPayload('hook', msg([{ status: 'resolved', alert: { ...done, firing_since: null, pending_since: null, resolved_at: null } }]));
    expect(none).toMatchObject({ externalURL: '', status: 'resolved', alerts: [{ startsAt: '0001-01-01T00:00:00Z', endsAt: '0001-01-01T00:00:00Z', generatorURL: '' }] });
  });

  it('signs the body with HMAC-SHA256 of the shared secret', () => {
    // The published HMAC-SHA256 test vector.
    expect(signBody('key', 'The quick brown fox jumps over the lazy dog')).toBe('sha256=f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8');
  });
});

describe('SMTP classification', () => {
  it('5xx replies and auth, envelope, message and TLS problems are permanent; the rest is retried; secrets redacted', () => {
    const c = (err: unknown) => {
      const e = classifySmtpError('mail', err, ['sm7p-pass', undefined]);
      return [e.message, e.retryable];
    };
    expect(c({ code: 'EENVELOPE', responseCode: 550, message: 'no such user' })).toEqual(['mail: SMTP EENVELOPE 550: no such user (not retried)', false]);
    expect(c({ responseCode: 500, message: 'x' })).toEqual(['mail: SMTP error 500: x (not retried)', false]);
    expect(c({ responseCode: 499, message: 'x' })).toEqual(['mail: SMTP error 499: x', true]);
    expect(c({ code: 'ECONNECTION', responseCode: 451, message: 'try later' })).toEqual(['mail: SMTP ECONNECTION 451: try later', true]);
    for (const code of ['EAUTH', 'EMESSAGE', 'ETLS']) expect(c({ code, message: 'm' })).toEqual([`mail: SMTP ${code}: m (not retried)`, false]);
    expect(c({ code: 'ESOCKET', message: 'bad login sm7p-pass' })).toEqual(['mail: SMTP ESOCKET: bad login [redacted]', true]);
    expect(c('plain failure')).toEqual(['mail: SMTP error: plain failure', true]);
  });

  it('a subject stays one line', () => {
    const a = alert('util', 'm1');
    expect(emailSubject(msg([{ status: 'firing', alert: a }], { groupLabels: { rule: 'util', chain: 'base\r\nBcc: x@evil.example' } }))).toBe('[FIRING:1] util (chain=base Bcc: x@evil.example)');
  });
});

it('an SMTP envelope problem is permanent even without a reply code', () => {
  const e = classifySmtpError('mail', { code: 'EENVELOPE', message: 'no recipients defined' }, []);
  expect([e.message, e.retryable]).toEqual(['mail: SMTP EENVELOPE: no recipients defined (not retried)', false]);
});
