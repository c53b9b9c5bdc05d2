/**
 * Adoption's reader (src/notify/adopt.ts) in-process, against Alertmanager-like peers on loopback that answer what each
 * test says: which alerts are lookout's, the earliest start across peers, and every way a peer can fail (a status, a
 * body that is not a list, a refused connection, no answer before the timeout, the caller's abort) reported by position.
 * test/notify-alertmanager.test.ts runs the same against the real binary when it is installed.
 */
import { getEventListeners } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { candidateOf, ENTITY_ANNOTATION, fetchAdoptable } from '../src/notify/adopt.js';
import { activeTimers } from './notify-helpers.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
});

/** A peer on 127.0.0.1 that answers each GET with `answer(req)`: a status and a body, or `hang` (never answers). */
async function peer(answer: (req: IncomingMessage) => { status: number; body: string } | 'hang', seen: string[] = []): Promise<string> {
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const a = answer(req);
    if (a === 'hang') return;
    res.writeHead(a.status, { 'content-type': 'application/json' });
    res.end(a.body);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const ok = (alerts: unknown[]) => () => ({ status: 200, body: JSON.stringify(alerts) });

const ours = (rule: string, entity: string, startsAt: string, extra: Record<string, unknown> = {}) => ({
  labels: { alertname: rule, rule, market_id: entity },
  annotations: { summary: `${rule} on ${entity}`, [ENTITY_ANNOTATION]: entity, lookout_dedup_key: 'lk-1' },
  startsAt,
  endsAt: '2030-01-01T00:00:00Z',
  status: { state: 'active' },
  ...extra,
});

describe('candidateOf', () => {
  const t = '2024-05-01T12:00:00.000Z';
  it('takes an alert lookout posted, active or suppressed, without lookout’s own annotations', () => {
    expect(candidateOf(ours('util', 'm1', t))).toEqual([
      { rule: 'util', entity: 'm1', labels: { alertname: 'util', rule: 'util', market_id: 'm1' }, annotations: { summary: 'util on m1' }, startsAt: Date.parse(t) },
    ]);
    expect(candidateOf(ours('util', 'm1', t, { status: { state: 'suppressed' } })).map((c) => c.entity)).toEqual(['m1']);
    expect(candidateOf(ours('util', 'm1', t, { status: {} })).map((c) => c.entity)).toEqual(['m1']);
    expect(candidateOf({ ...ours('util', 'm1', t), status: undefined }).map((c) => c.entity)).toEqual(['m1']);
  });

  it('leaves out a resolved or unprocessed alert, another sender’s, and one without a readable start', () => {
    expect(candidateOf(ours('util', 'm1', t, { status: { state: 'unprocessed' } }))).toEqual([]);
    expect(candidateOf(ours('util', 'm1', t, { status: { state: 'resolved' } }))).toEqual([]);
    expect(candidateOf({ labels: { rule: 'util' }, annotations: { summary: 'x' }, startsAt: t })).toEqual([]);
    expect(candidateOf({ labels: { alertname: 'util' }, annotations: { [ENTITY_ANNOTATION]: 'm1' }, startsAt: t })).toEqual([]);
    expect(candidateOf({ labels: { rule: '' }, annotations: { [ENTITY_ANNOTATION]: 'm1' }, startsAt: t })).toEqual([]);
    expect(candidateOf({ labels: { rule: 'util' }, annotations: { [ENTITY_ANNOTATION]: '' }, startsAt: t })).toEqual([]);
    expect(candidateOf({ annotations: { [ENTITY_ANNOTATION]: 'm1' }, startsAt: t })).toEqual([]);
    expect(candidateOf({ labels: { rule: 'util' }, startsAt: t })).toEqual([]);
    expect(candidateOf(ours('util', 'm1', 'yesterday'))).toEqual([]);
    expect(candidateOf({ ...ours('util', 'm1', t), startsAt: undefined })).toEqual([]);
  });
});

describe('fetchAdoptable', () => {
  it('asks every peer for all its alerts, muted ones too, under the peer’s own path', async () => {
    const seen: string[] = [];
    const a = await peer(ok([]), seen);
    const b = await peer(ok([]), seen);
    const found = await fetchAdoptable({ urls: [a, `${b}/am/`], timeoutMs: 5000 });
    expect(found).toEqual({ candidates: [], failed: [] });
    expect(seen.sort()).toEqual(['GET /am/api/v2/alerts?active=true&silenced=true&inhibited=true&unprocessed=true', 'GET /api/v2/alerts?active=true&silenced=true&inhibited=true&unprocessed=true']);
  });

  it('keeps lookout’s alerts, one per rule and entity, with the earliest start any peer knows', async () => {
    const early = '2024-05-01T10:00:00.000Z';
    const late = '2024-05-01T11:00:00.000Z';
    const a = await peer(ok([ours('util', 'm1', late), ours('util', 'm2', early), { labels: { rule: 'util' }, annotations: {}, startsAt: early }]));
    const b = await peer(ok([ours('util', 'm1', early), ours('util', 'm2', late), ours('jump', 'm1', late)]));
    const found = await fetchAdoptable({ urls: [a, b], timeoutMs: 5000 });
    expect(found.failed).toEqual([]);
    const got = found.candidates.map((c) => [c.rule, c.entity, new Date(c.startsAt).toISOString()]).sort();
    expect(got).toEqual([
      ['jump', 'm1', late],
      ['util', 'm1', early],
      ['util', 'm2', early],
    ]);
    // Same when the earlier copy is read first.
    const again = await fetchAdoptable({ urls: [b, a], timeoutMs: 5000 });
    expect(again.candidates.map((c) => [c.rule, c.entity, new Date(c.startsAt).toISOString()]).sort()).toEqual(got);
  });

  it('reports each failing peer by its position, with a reason and no URL, and keeps what the others said', async () => {
    const good = await peer(ok([ours('util', 'm1', '2024-05-01T10:00:00.000Z')]));
    const down = await peer(() => ({ status: 503, body: 'maintenance' }));
    const notList = await peer(() => ({ status: 200, body: JSON.stringify({ alerts: [] }) }));
    const refused = await peer(ok([]));
    const s = servers.pop()!;
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
    const silent = await peer(() => 'hang');
    const found = await fetchAdoptable({ urls: [good, `${down}/secret-path`, notList, refused, silent], timeoutMs: 300 });
    expect(found.candidates.map((c) => c.entity)).toEqual(['m1']);
    expect(found.failed.sort((x, y) => x.peer - y.peer)).toEqual([
      { peer: 2, reason: 'HTTP 503' },
      { peer: 3, reason: 'the answer is not a list of alerts' },
      { peer: 4, reason: 'ECONNREFUSED' },
      { peer: 5, reason: 'timed out' },
    ]);
    expect(JSON.stringify(found.failed)).not.toContain('secret-path');
  });

  it('a peer that answers its headers but never its body is timed out too', async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('[');
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    expect(await fetchAdoptable({ urls: [url], timeoutMs: 300 })).toEqual({ candidates: [], failed: [{ peer: 1, reason: 'timed out' }] });
  });

  it('the caller’s abort stops a peer that never answers, long before the timeout', async () => {
    const seen: string[] = [];
    const silent = await peer(() => 'hang', seen);
    const ac = new AbortController();
    const pending = fetchAdoptable({ urls: [silent], timeoutMs: 60_000, signal: ac.signal });
    const deadline = Date.now() + 10_000;
    while (seen.length === 0 && Date.now() < deadline) await new Promise((r) => setImmediate(r));
    ac.abort();
    const found = await Promise.race([pending, new Promise<'stuck'>((r) => setTimeout(() => r('stuck'), 10_000))]);
    expect(found).toEqual({ candidates: [], failed: [{ peer: 1, reason: 'timed out' }] });
  });
});

describe('fetchAdoptable: what it leaves behind', () => {
  it('no timer and no listener on the caller’s signal, whether a peer answered or failed', async () => {
    const good = await peer(ok([ours('util', 'm1', '2024-05-01T10:00:00.000Z')]));
    const down = await peer(() => ({ status: 503, body: 'maintenance' }));
    const ac = new AbortController();
    const before = activeTimers();
    // A minute's timeout: a timer left behind would hold a starting process up that long.
    const found = await fetchAdoptable({ urls: [good, down], timeoutMs: 60_000, signal: ac.signal });
    expect(found).toMatchObject({ candidates: [{ entity: 'm1' }], failed: [{ peer: 2, reason: 'HTTP 503' }] });
    expect(activeTimers()).toBe(before);
    expect(getEventListeners(ac.signal, 'abort')).toEqual([]);
  });
});

describe('fetchAdoptable: the request', () => {
  it('keeps a base URL’s path without a trailing slash, and asks for JSON', async () => {
    const seen: string[] = [];
    const accept: Array<string | undefined> = [];
    const base = await peer((req) => {
      accept.push(req.headers.accept);
      return { status: 200, body: '[]' };
    }, seen);
    expect(await fetchAdoptable({ urls: [`${base}/am`], timeoutMs: 5000 })).toEqual({ candidates: [], failed: [] });
    expect(seen).toEqual(['GET /am/api/v2/alerts?active=true&silenced=true&inhibited=true&unprocessed=true']);
    expect(accept).toEqual(['application/json']);
  });
});
