/** A JSON POST over undici that classifies failures for the retry stage; URLs (secrets) never reach the error. */
import type { Dispatcher } from 'undici';
import { request } from '../../net/undici.js';
import { NotifyError } from '../../errors.js';

/** Parses Retry-After (seconds or an HTTP date) to ms; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | null | undefined, now = Date.now()): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined || v === null || v.trim() === '') return undefined;
  const secs = Number(v.trim());
  if (Number.isFinite(secs)) return Math.max(0, Math.round(secs * 1000));
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : Math.max(0, t - now);
}

/** Classifies an HTTP status: 408, 425, 429 and 5xx are worth retrying, other 4xx are not. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 425 || status === 429 || status >= 500;
}

/** Builds the NotifyError of an HTTP answer outside 2xx. */
export function httpError(notifier: string, what: string, status: number, retryAfter?: string | string[] | null): NotifyError {
  const retryable = isRetryableStatus(status);
  const retryAfterMs = parseRetryAfter(retryAfter);
  return new NotifyError(`${notifier}: ${what} answered HTTP ${status}${retryable ? '' : ' (not retried)'}`, {
    notifier,
    retryable,
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  });
}

/** Builds the NotifyError of a request that got no answer (refused, reset, timed out): retryable. */
export function networkError(notifier: string, what: string, err: unknown): NotifyError {
  const thrown = err as { code?: string; name?: string; cause?: unknown };
  // fetch (the Slack libraries') rejects with `TypeError: fetch failed` and the reason (ECONNREFUSED, ENOTFOUND) as its cause.
  const e = thrown.name === 'TypeError' && thrown.cause ? (thrown.cause as typeof thrown) : thrown;
  const why = e.name === 'AbortError' || e.name === 'TimeoutError' ? 'timed out or was aborted' : (e.code ?? e.name ?? 'failed');
  return new NotifyError(`${notifier}: ${what}: request ${why}`, { notifier, retryable: true });
}

/** Options of {@link postJson}. */
export interface PostOptions {
  notifier: string;
  /** Names the target in errors without its URL, e.g. `webhook`, `alertmanager peer 2`. */
  what: string;
  headers?: Record<string, string>;
  timeoutMs: number;
  signal: AbortSignal;
  dispatcher?: Dispatcher;
}

/** POSTs `body` (already serialized JSON); resolves on 2xx, throws a classified NotifyError otherwise. */
export async function postJson(url: string, body: string, opts: PostOptions): Promise<void> {
  const signal = AbortSignal.any([opts.signal, AbortSignal.timeout(opts.timeoutMs)]);
  let res: Dispatcher.ResponseData;
  try {
    res = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(opts.headers ?? {}) },
      body,
      signal,
      ...(opts.dispatcher ? { dispatcher: opts.dispatcher } : {}),
    });
  } catch (err) {
    throw networkError(opts.notifier, opts.what, err);
  }
  try {
    await res.body.dump();
  } catch {
    // the status is what matters
  }
  if (res.statusCode < 200 || res.statusCode >= 300) {
    throw httpError(opts.notifier, opts.what, res.statusCode, res.headers['retry-after']);
  }
}
