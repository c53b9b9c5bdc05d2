/**
 * The fetch @slack/webhook is given (src/notify/notifiers/slack-fetch.ts), over a real loopback server: what the
 * library reads of an answer (ok, status, statusText, a header, the text) as fetch gives it, a redirect refused as
 * fetch's `redirect: 'error'` refuses it, and the signal.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawServer } from './source-helpers.js';
import { webhookFetch } from '../src/notify/notifiers/slack-fetch.js';

let server: { url: string; close(): Promise<void> };
let base: string;
const bodies: string[] = [];

beforeAll(async () => {
  server = await rawServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push(`${req.method} ${req.url} ${req.headers['content-type']} ${Buffer.concat(chunks).toString('utf8')}`);
      if (req.url === '/hang') return;
      if (req.url === '/moved') return void res.writeHead(302, { location: '/elsewhere' }).end();
      if (req.url === '/not-modified') return void res.writeHead(304).end();
      if (req.url === '/trickle') return void res.writeHead(200, { 'content-type': 'text/plain' }).write('o');
      if (req.url === '/limited') return void res.writeHead(429, { 'retry-after': '3', 'content-type': 'text/plain' }).end('rate_limited');
      res.writeHead(200, { 'content-type': 'text/plain', 'x-two': ['a', 'b'] }).end('ok ✓');
    });
  });
  base = server.url;
});

afterAll(async () => {
  await server.close();
});

describe("the Slack webhook's fetch", () => {
  it('posts what the library gives and answers as fetch does: ok, status, statusText, headers, text, json', async () => {
    const res = await webhookFetch()(`${base}/services/T/B/x?y=1`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"text":"hi"}', redirect: 'error' });
    expect(bodies.at(-1)).toBe('POST /services/T/B/x?y=1 application/json {"text":"hi"}');
    expect([res.ok, res.status, res.statusText, res.url]).toEqual([true, 200, 'OK', `${base}/services/T/B/x?y=1`]);
    expect(res.headers.get('Content-Type')).toBe('text/plain');
    expect(res.headers.get('x-two')).toBe('a, b');
    expect(res.headers.get('retry-after')).toBeNull();
    expect(await res.text()).toBe('ok ✓');
    expect(new TextDecoder().decode(await res.arrayBuffer())).toBe('ok ✓');
  });

  it('gives a 429 with its Retry-After, not ok', async () => {
    const res = await webhookFetch()(`${base}/limited`, { method: 'POST', body: '{}' });
    expect([res.ok, res.status, res.statusText, res.headers.get('retry-after'), await res.text()]).toEqual([false, 429, 'Too Many Requests', '3', 'rate_limited']);
  });

  it("refuses a redirect when told redirect: 'error', as fetch does", async () => {
    await expect(webhookFetch()(`${base}/moved`, { method: 'POST', body: '{}', redirect: 'error' })).rejects.toThrow(TypeError);
  });

  it('takes a 3xx that is not a redirect as an answer, as fetch does', async () => {
    const res = await webhookFetch()(`${base}/not-modified`, { method: 'POST', body: '{}', redirect: 'error' });
    expect([res.ok, res.status, res.statusText]).toEqual([false, 304, 'Not Modified']);
  });

  it('ends with its signal while the answer’s body has not ended', async () => {
    await expect(webhookFetch()(`${base}/trickle`, { method: 'POST', body: '{}', signal: AbortSignal.timeout(150) })).rejects.toMatchObject({ name: 'TimeoutError' });
  });

  it("answers as undici's own fetch does, for each answer the server gives (fetch is the oracle)", async () => {
    const { fetch: realFetch } = await import('undici');
    // What the library sees of the call and the answer's text (it reads the text at once): fetch resolves at the
    // headers and fails in text() where ours fails the call, which comes to the same for it.
    const seenBy = async (f: (url: string, init: object) => Promise<{ ok: boolean; status: number; statusText: string; headers: { get(n: string): string | null }; text(): Promise<string> }>, path: string, signal?: AbortSignal) => {
      try {
        const res = await f(`${base}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"text":"hi"}', redirect: 'error', ...(signal ? { signal } : {}) });
        return { ok: res.ok, status: res.status, statusText: res.statusText, retryAfter: res.headers.get('Retry-After'), type: res.headers.get('content-type'), text: await res.text() };
      } catch (err) {
        return { threw: (err as Error).constructor.name, name: (err as Error).name };
      }
    };
    for (const path of ['/services/T/B/x', '/limited', '/not-modified', '/moved']) {
      expect(await seenBy(webhookFetch() as never, path), path).toEqual(await seenBy(realFetch as never, path));
    }
    // The signal, while the body trickles and before any answer.
    for (const path of ['/trickle', '/hang']) {
      expect(await seenBy(webhookFetch() as never, path, AbortSignal.timeout(150)), path).toEqual(await seenBy(realFetch as never, path, AbortSignal.timeout(150)));
    }
  });

  it('ends with its signal', async () => {
    await expect(webhookFetch()(`${base}/hang`, { method: 'POST', body: '{}', signal: AbortSignal.timeout(100) })).rejects.toMatchObject({ name: 'TimeoutError' });
  });
});
