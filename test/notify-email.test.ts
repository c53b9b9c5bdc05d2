/**
 * The email notifier's SMTP transport options against real servers on loopback: `require_tls` refuses a server
 * without STARTTLS, a user without a password is refused before any login, `timeout` bounds a server that never
 * greets, and a relay that echoes the AUTH PLAIN credentials or the AUTH LOGIN password in its refusal never gets them
 * into an error.
 */
import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { NotifyError } from '../src/errors.js';
import { silentLogger } from '../src/log.js';
import { buildMessage } from '../src/notify/message.js';
import { NotifierRegistry } from '../src/notify/registry.js';
import { alert, notifier } from './notify-helpers.js';
import { startSmtpRecorder } from './smtp-recorder.js';

const T0 = Date.UTC(2024, 4, 1, 12, 0, 0);
const deps = { clock: new ManualClock(T0), log: silentLogger };
const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

const message = () =>
  buildMessage({ dedupKey: 'lk-e', notifier: 'mail', groupKey: 'g', groupLabels: { rule: 'util' }, alerts: [{ status: 'firing', alert: alert('util', 'm1') }], createdAt: T0 });

/** An email notifier to 127.0.0.1:`port` with these smtp settings. */
function mailer(port: number, smtp: Record<string, unknown> = {}, over: Record<string, unknown> = {}) {
  const n = new NotifierRegistry()
    .createAll({ mail: notifier({ type: 'email', smtp: { host: '127.0.0.1', port, ...smtp }, from: 'lookout@example.com', to: ['risk@example.com'], ...over }) }, deps)
    .get('mail')!;
  cleanups.push(() => n.close?.());
  return n;
}

/** What a send ended with: 'sent', or the NotifyError's message and whether it is retried. */
const outcome = (p: Promise<void>) => p.then(() => 'sent' as const, (e: unknown) => (e instanceof NotifyError ? [e.message, e.retryable] : e));

/** A scripted SMTP server: greets (unless `greet` is false), then answers each command line with `answer(line)`. */
async function scriptedSmtp(answer: (line: string) => string, greet = true): Promise<{ port: number; lines: string[] }> {
  const lines: string[] = [];
  const sockets: Socket[] = [];
  const server = createServer((s) => {
    sockets.push(s);
    if (greet) s.write('220 relay.test ESMTP\r\n');
    let buf = '';
    s.on('data', (d: Buffer) => {
      buf += d.toString();
      for (let i = buf.indexOf('\r\n'); i >= 0; i = buf.indexOf('\r\n')) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 2);
        lines.push(line);
        s.write(answer(line));
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise<void>((r) => (sockets.forEach((s) => s.destroy()), server.close(() => r()))));
  return { port: (server.address() as AddressInfo).port, lines };
}

it('require_tls: a server that offers no STARTTLS gets no mail, and that is not retried', async () => {
  const smtp = await startSmtpRecorder('pw');
  cleanups.push(() => smtp.stop());
  const got = await outcome(mailer(smtp.port, { user: 'lookout', pass: 'pw', require_tls: true }).send(message(), AbortSignal.timeout(10_000)));
  expect(got).toEqual([expect.stringMatching(/^mail: SMTP ETLS 500: Error upgrading connection with STARTTLS: .* \(not retried\)$/), false]);
  expect(smtp.mails).toHaveLength(0);
  // Without require_tls the same server takes it (plain, on loopback).
  expect(await outcome(mailer(smtp.port, { user: 'lookout', pass: 'pw' }).send(message(), AbortSignal.timeout(10_000)))).toBe('sent');
  expect(smtp.mails).toHaveLength(1);
});

it('a user without a password is a config problem nodemailer names: not retried, and no login is tried', async () => {
  const smtp = await startSmtpRecorder('', 'relay-user');
  cleanups.push(() => smtp.stop());
  const got = await outcome(mailer(smtp.port, { user: 'relay-user' }).send(message(), AbortSignal.timeout(10_000)));
  expect(got).toEqual(['mail: SMTP EAUTH: Missing credentials for "PLAIN" (not retried)', false]);
  expect(smtp.mails).toHaveLength(0);
});

it('timeout bounds a server that accepts the connection and never greets: retried', async () => {
  const smtp = await scriptedSmtp(() => '', false);
  const got = await outcome(mailer(smtp.port, {}, { timeout: '300ms' }).send(message(), AbortSignal.timeout(20_000)));
  expect(got).toEqual([expect.stringMatching(/^mail: SMTP ETIMEDOUT: /), true]);
});

it('a relay that echoes the AUTH PLAIN credentials in its refusal: neither they nor the password reach the error', async () => {
  const pass = 'sm7p-Echo-Pa55';
  const blob = Buffer.from(`\0lookout\0${pass}`).toString('base64');
  const smtp = await scriptedSmtp((line) => {
    if (/^EHLO /.test(line)) return '250-relay.test\r\n250 AUTH PLAIN\r\n';
    if (line.startsWith('AUTH PLAIN')) return `535 5.7.8 refused: ${line.slice('AUTH PLAIN '.length)} (${pass})\r\n`;
    return '221 bye\r\n';
  });
  const got = await outcome(mailer(smtp.port, { user: 'lookout', pass }).send(message(), AbortSignal.timeout(10_000)));
  expect(smtp.lines).toContain(`AUTH PLAIN ${blob}`); // the server did get (and echo) them
  expect(got).toEqual(['mail: SMTP EAUTH 535: Invalid login: 535 5.7.8 refused: [redacted] ([redacted]) (not retried)', false]);
});

it('a relay that echoes the AUTH LOGIN password line in its refusal: the password, plain or base64, never reaches the error', async () => {
  const pass = 'l0gin-Echo-Pa55';
  const user64 = Buffer.from('lookout').toString('base64');
  const pass64 = Buffer.from(pass).toString('base64');
  const smtp = await scriptedSmtp((line) => {
    if (/^EHLO /.test(line)) return '250-relay.test\r\n250 AUTH LOGIN\r\n';
    if (line === 'AUTH LOGIN') return '334 VXNlcm5hbWU6\r\n';
    if (line === `AUTH LOGIN ${user64}` || line === user64) return '334 UGFzc3dvcmQ6\r\n';
    if (line === pass64) return `535 5.7.8 refused: ${line} (${pass})\r\n`;
    return '221 bye\r\n';
  });
  const got = await outcome(mailer(smtp.port, { user: 'lookout', pass }).send(message(), AbortSignal.timeout(10_000)));
  expect(smtp.lines).toContain(pass64); // the server did get (and echo) it
  expect(got).toEqual(['mail: SMTP EAUTH 535: Invalid login: 535 5.7.8 refused: [redacted] ([redacted]) (not retried)', false]);
});

it('secure: TLS from the first byte; an untrusted certificate (smtp-server’s own) is refused unless tls_reject_unauthorized is false', async () => {
  const smtp = await startSmtpRecorder('pw', 'lookout', { secure: true });
  cleanups.push(() => smtp.stop());
  const got = await outcome(mailer(smtp.port, { user: 'lookout', pass: 'pw', secure: true }).send(message(), AbortSignal.timeout(10_000)));
  expect(got).toEqual([expect.stringMatching(/^mail: SMTP ESOCKET: .*certificate/), true]);
  expect(smtp.mails).toHaveLength(0);
  expect(await outcome(mailer(smtp.port, { user: 'lookout', pass: 'pw', secure: true, tls_reject_unauthorized: false }).send(message(), AbortSignal.timeout(10_000)))).toBe('sent');
  expect(smtp.mails).toHaveLength(1);
});
