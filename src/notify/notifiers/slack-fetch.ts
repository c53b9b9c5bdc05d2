/**
 * The fetch @slack/webhook is given: its own narrow `FetchFunction` (a status, a header, the answer's text) over undici's
 * `Dispatcher#request`, not undici's `fetch` — which loads undici's whole index with a daemon's first Slack message
 * (~9 MB of RSS that stay; B6s, docs/performance.md "B6s: undici without its index, no ICU, the young generation by
 * the responses"). The bot mode's @slack/web-api keeps undici's fetch: it loads ~14 MB of its own anyway.
 */
import { STATUS_CODES } from 'node:http';
import type { FetchFunction } from '@slack/webhook';
import type { Dispatcher } from 'undici';
import { request } from '../../net/undici.js';

/** The statuses fetch follows as redirects (and refuses under `redirect: 'error'`); any other 3xx is an answer. */
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * A `FetchFunction` sending through `dispatcher` (undici's global one without). As fetch does: `redirect: 'error'`
 * (what @slack/webhook asks) turns a redirect (301, 302, 303, 307, 308) into a TypeError, and the signal ends the
 * request, the answer's body included. The answer is read whole before it resolves (Slack's answers are a few bytes:
 * `ok`, `invalid_payload`, …).
 */
export function webhookFetch(dispatcher?: Dispatcher): FetchFunction {
  return async (url, init = {}) => {
    if (init.body !== undefined && typeof init.body !== 'string') throw new TypeError('slack webhook: only a text body is sent');
    const res = await request(url, {
      method: (init.method ?? 'GET') as Dispatcher.HttpMethod,
      ...(init.headers ? { headers: init.headers } : {}),
      ...(init.body !== undefined ? { body: init.body } : {}),
      ...(init.signal ? { signal: init.signal } : {}),
      ...(dispatcher ? { dispatcher } : {}),
    });
    const status = res.statusCode;
    if (init.redirect === 'error' && REDIRECTS.has(status)) {
      await res.body.dump().catch(() => undefined);
      throw new TypeError(`redirect (HTTP ${status}) where none is allowed`);
    }
    const bytes = Buffer.from(await res.body.arrayBuffer());
    const one = (v: string | string[] | undefined) => (v === undefined ? null : Array.isArray(v) ? v.join(', ') : v);
    return {
      ok: status >= 200 && status < 300,
      status,
      statusText: res.statusText || (STATUS_CODES[status] ?? ''),
      url: String(url),
      headers: {
        get: (name: string) => one(res.headers[name.toLowerCase()]),
        entries: () => Object.entries(res.headers).map(([k, v]) => [k, one(v) ?? ''] as [string, string]),
      },
      text: () => Promise.resolve(bytes.toString('utf8')),
      json: () => Promise.resolve(JSON.parse(bytes.toString('utf8')) as unknown),
      arrayBuffer: () => Promise.resolve(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer),
    };
  };
}
