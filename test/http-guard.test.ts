/**
 * The listener against what a web page can send (SPEC §5): a cross-site write, a DNS-rebinding Host, a write with the
 * wrong type; the token; and clients that dribble or bloat their requests. Real server over fakes; every request with
 * exactly the headers a browser, curl or an attacker's page would send.
 */
import net from 'node:net';
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { hostAllowed, hostName } from '../src/http/guard.js';
import { NOW } from './metrics-fixtures.js';
import { rawRequest, startFakeDaemon, type FakeDaemon, type RawAnswer } from './http-fixtures.js';

const TOKEN = 'guard-test-token';
let daemon: FakeDaemon | undefined;
afterEach(async () => {
  await daemon?.server.close();
  daemon = undefined;
});

const SILENCE = JSON.stringify({ matchers: [{ name: 'severity', op: '=', value: 'critical' }], endsAt: NOW + 7 * 86_400_000, author: 'evil', comment: 'shh' });
const own = (d: FakeDaemon) => new URL(d.server.url).host;
const errorOf = (a: RawAnswer) => (JSON.parse(a.body) as { error: string; message: string }).error;

describe('writes from web pages', () => {
  it.each([
    ['text/plain with a foreign Origin (a page’s no-cors fetch or form)', { 'content-type': 'text/plain', origin: 'http://evil.example' }, 403, 'cross_site_request'],
    ['JSON with a foreign Origin', { 'content-type': 'application/json', origin: 'http://evil.example' }, 403, 'cross_site_request'],
    ['an opaque Origin (sandboxed frame, file://)', { 'content-type': 'application/json', origin: 'null' }, 403, 'cross_site_request'],
    ['Sec-Fetch-Site: cross-site without an Origin', { 'content-type': 'text/plain', 'sec-fetch-site': 'cross-site' }, 403, 'cross_site_request'],
    ['Sec-Fetch-Site: same-site (another port of localhost)', { 'content-type': 'application/json', 'sec-fetch-site': 'same-site' }, 403, 'cross_site_request'],
    ['text/plain without any browser header', { 'content-type': 'text/plain' }, 415, 'unsupported_media_type'],
    ['a form encoding', { 'content-type': 'application/x-www-form-urlencoded' }, 415, 'unsupported_media_type'],
    ['no Content-Type with a body', {}, 415, 'unsupported_media_type'],
  ])('POST /api/silences with %s is refused and creates nothing', async (_name, headers: Record<string, string>, status, error) => {
    daemon = await startFakeDaemon();
    const res = await rawRequest(`${daemon.server.url}/api/silences`, { method: 'POST', headers, body: SILENCE });
    expect(res.status, res.body).toBe(status);
    expect(errorOf(res)).toBe(error);
    expect(daemon.silences.items.size).toBe(0);
  });

  it.each([
    ['curl-style JSON (no browser headers)', { 'content-type': 'application/json' }],
    ['JSON with a charset', { 'content-type': 'application/json; charset=utf-8' }],
    ['its own origin (Sec-Fetch-Site: same-origin)', { 'content-type': 'application/json', 'sec-fetch-site': 'same-origin', origin: 'OWN' }],
    ['a user-typed request (Sec-Fetch-Site: none)', { 'content-type': 'application/json', 'sec-fetch-site': 'none' }],
  ])('POST /api/silences with %s is accepted', async (_name, headers: Record<string, string>) => {
    daemon = await startFakeDaemon();
    const h = { ...headers, ...(headers.origin === 'OWN' ? { origin: `http://${own(daemon)}` } : {}) };
    const res = await rawRequest(`${daemon.server.url}/api/silences`, { method: 'POST', headers: h, body: SILENCE });
    expect(res.status, res.body).toBe(201);
    expect(daemon.silences.items.size).toBe(1);
  });

  it('DELETE from a foreign Origin leaves the silence in force; a bodiless DELETE from curl expires it', async () => {
    daemon = await startFakeDaemon();
    const s = daemon.silences.add(JSON.parse(SILENCE));
    const evil = await rawRequest(`${daemon.server.url}/api/silences/${s.id}`, { method: 'DELETE', headers: { origin: 'http://evil.example' } });
    expect(evil.status).toBe(403);
    expect(errorOf(evil)).toBe('cross_site_request');
    expect(daemon.silences.list().map((x) => x.id)).toEqual([s.id]);
    const ok = await rawRequest(`${daemon.server.url}/api/silences/${s.id}`, { method: 'DELETE' });
    expect(ok.status, ok.body).toBe(200);
    expect(daemon.silences.list()).toEqual([]);
  });

  it('with server.token set: a write without it is 401, and a cross-site write is 403 even with the browser’s cached Basic credentials', async () => {
    daemon = await startFakeDaemon({ token: TOKEN });
    const none = await rawRequest(`${daemon.server.url}/api/silences`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: SILENCE });
    expect(none.status).toBe(401);
    const wrong = await rawRequest(`${daemon.server.url}/api/silences`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}x` }, body: SILENCE });
    expect(wrong.status).toBe(401);
    // A browser that logged in to the status page sends its Basic credentials with a cross-site form post too.
    const basic = `Basic ${Buffer.from(`ops:${TOKEN}`).toString('base64')}`;
    const csrf = await rawRequest(`${daemon.server.url}/api/silences`, { method: 'POST', headers: { 'content-type': 'text/plain', origin: 'http://evil.example', authorization: basic }, body: SILENCE });
    expect(csrf.status).toBe(403);
    expect(daemon.silences.items.size).toBe(0);
    const ok = await rawRequest(`${daemon.server.url}/api/silences`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` }, body: SILENCE });
    expect(ok.status, ok.body).toBe(201);
    expect(daemon.silences.items.size).toBe(1);
  });
});

describe('Host (DNS rebinding)', () => {
  it.each(['/api/alerts', '/api/silences', '/api/polls', '/metrics', '/readyz', '/'])('GET %s with Host: evil.example is 403', async (path) => {
    daemon = await startFakeDaemon();
    const res = await rawRequest(daemon.server.url + path, { headers: { host: `evil.example:${daemon.server.port}` } });
    expect(res.status).toBe(403);
    expect(errorOf(res)).toBe('host_not_allowed');
    expect(JSON.parse(res.body).message).toMatch(/server\.allowed_hosts/);
  });

  it('a foreign Host cannot write either, and /healthz answers any Host (liveness probes)', async () => {
    daemon = await startFakeDaemon();
    const res = await rawRequest(`${daemon.server.url}/api/silences`, { method: 'POST', headers: { host: 'evil.example', 'content-type': 'application/json' }, body: SILENCE });
    expect(res.status).toBe(403);
    expect(daemon.silences.items.size).toBe(0);
    expect((await rawRequest(`${daemon.server.url}/healthz`, { headers: { host: 'evil.example' } })).status).toBe(200);
  });

  it.each([
    ['localhost on another port (a port-forward)', 'localhost:8080', [], 200],
    ['a .localhost name', 'lookout.localhost:9464', [], 200],
    ['an IPv4 address (Prometheus scraping a pod IP)', '10.1.2.3:9464', [], 200],
    ['an IPv6 address', '[fd00::1]:9464', [], 200],
    ['a service name, not allowed', 'lookout:9464', [], 403],
    ['a service name in allowed_hosts', 'lookout:9464', ['lookout'], 200],
    ['a subdomain of an allowed .domain', 'lookout.monitoring.svc.cluster.local:9464', ['.svc.cluster.local'], 200],
    ['a look-alike of an allowed .domain', 'evilsvc.cluster.local', ['.svc.cluster.local'], 403],
    ['anything, with *', 'evil.example', ['*'], 200],
  ])('/metrics with %s (Host %s, allowed %j) answers %i', async (_name, host, allowed, status) => {
    daemon = await startFakeDaemon({ deps: { allowedHosts: allowed } });
    expect((await rawRequest(`${daemon.server.url}/metrics`, { headers: { host } })).status).toBe(status);
  });

  it('reads allowed_hosts per request, so a reload applies', async () => {
    let allowed: string[] = [];
    daemon = await startFakeDaemon({ deps: { allowedHosts: () => allowed } });
    expect((await rawRequest(`${daemon.server.url}/metrics`, { headers: { host: 'prometheus-target' } })).status).toBe(403);
    allowed = ['prometheus-target'];
    expect((await rawRequest(`${daemon.server.url}/metrics`, { headers: { host: 'prometheus-target' } })).status).toBe(200);
  });

  it.each([
    ['Example.COM.:80', 'example.com'],
    ['[::1]:9464', '::1'],
    ['127.0.0.1', '127.0.0.1'],
    ['bad host!', undefined],
  ])('hostName(%s) is %s', (header, name) => {
    expect(hostName(header)).toBe(name);
  });

  it('the listen host passes unless it is a wildcard', () => {
    expect(hostAllowed('lookout.internal', 'lookout.internal', [])).toBe(true);
    expect(hostAllowed('lookout.internal', '0.0.0.0', [])).toBe(false);
    expect(hostAllowed('lookout.internal', undefined, [])).toBe(false);
  });
});

describe('slow and large clients', () => {
  it('cuts off a client that never finishes its headers', async () => {
    daemon = await startFakeDaemon({ deps: { limits: { headersTimeoutMs: 500, requestTimeoutMs: 1_000 } } });
    const sock = net.connect(daemon.server.port, '127.0.0.1');
    let got = '';
    sock.on('data', (c: Buffer) => (got += c.toString()));
    sock.write('GET /api/alerts HTTP/1.1\r\nHost: localhost\r\nX-Slow: ');
    // A deadline far beyond the limit, not a measurement: the server must end the connection by itself.
    const closed = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 15_000);
      sock.on('close', () => {
        clearTimeout(timer);
        resolve(true);
      });
      sock.on('error', () => undefined);
    });
    sock.destroy();
    expect(closed).toBe(true);
    expect(got).toMatch(/^HTTP\/1\.1 408/);
  });

  it('cuts off a client that never finishes its body, and stores nothing', async () => {
    daemon = await startFakeDaemon({ deps: { limits: { headersTimeoutMs: 500, requestTimeoutMs: 1_000 } } });
    const sock = net.connect(daemon.server.port, '127.0.0.1');
    sock.on('error', () => undefined);
    let got = '';
    sock.on('data', (c: Buffer) => (got += c.toString()));
    sock.write(`POST /api/silences HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${SILENCE.length}\r\n\r\n${SILENCE.slice(0, 10)}`);
    const closed = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 15_000);
      sock.on('close', () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    sock.destroy();
    expect(closed).toBe(true);
    expect(got).toMatch(/^HTTP\/1\.1 408/);
    expect(daemon.silences.items.size).toBe(0);
  });

  it('answers 431 to headers past 16 KiB', async () => {
    daemon = await startFakeDaemon();
    const res = await rawRequest(`${daemon.server.url}/api/alerts`, { headers: { 'x-big': 'x'.repeat(20 * 1024) } }).catch((err: Error) => err);
    // Node answers 431 and closes; a client may see the close first.
    if (res instanceof Error) expect(res.message).toMatch(/socket hang up|ECONNRESET/);
    else expect(res.status).toBe(431);
  });
});

describe('status page Content-Security-Policy', () => {
  it('allows no script, and its one inline stylesheet by hash only', async () => {
    daemon = await startFakeDaemon();
    const res = await rawRequest(`${daemon.server.url}/`);
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|script-src/);
    const styles = [...res.body.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => m[1]!);
    expect(styles).toHaveLength(1);
    expect(csp).toContain(`style-src 'sha256-${createHash('sha256').update(styles[0]!).digest('base64')}'`);
    expect(res.body).not.toMatch(/<script|\sstyle=|\son[a-z]+=/i);
  });
});
