/**
 * HTTP to the data service: one keep-alive undici Pool per origin, the API key header, a per-request
 * deadline, a bound on requests in flight, and one retry loop (exponential backoff with full jitter,
 * Retry-After honoured) for 429, 5xx, timeouts, network errors and truncated JSON. Each attempt only
 * *classifies* its outcome; the loop alone decides whether and when to try again.
 *
 * undici's own RetryAgent is not used: it cannot take an injected sleep, retry a body that fails to
 * parse, apply full jitter, or tell the caller why it gave up in a metric-ready reason.
 */
import { isAscii } from 'node:buffer';
import { channel } from 'node:diagnostics_channel';
import type { Dispatcher } from 'undici';
import { RESPONSE_BYTES_CHANNEL } from '../channels.js';
import { Pool } from '../net/undici.js';
import { formatDuration } from '../config/duration.js';
import { silentLogger, type Logger } from '../log.js';
import { DataServiceError, SOURCE_CODES, scrubCause, type SourceCode } from './errors.js';
import { PARSED_IN_PARTS_FROM, parseJsonExactSteps } from './json.js';
import { afterIo, runYielding } from '../yielding.js';
import { Semaphore } from './semaphore.js';
import { redact } from '../errors.js';

/** Each response's size, read whole, for process-wide observers (src/heap-growth.ts sizes the young generation by it). */
const responseBytes = channel(RESPONSE_BYTES_CHANNEL);

/** Waits `ms`, rejecting with the signal's reason as soon as `signal` aborts. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** The real sleep: a timer that an abort cancels. */
export const abortableSleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** How the HTTP layer behaves; the `source:` config section maps onto it one to one. */
export interface HttpOptions {
  apiKey?: string;
  /** Deadline of one attempt (headers and body), ms. */
  timeout: number;
  /** Further attempts after the first one fails retryably. */
  retries: number;
  /** First backoff ceiling, ms; doubles per attempt up to `maxBackoff`. */
  backoff: number;
  maxBackoff: number;
  /** Requests in flight at once across the whole client. */
  concurrency: number;
  /** Sends every request through this dispatcher instead of the client's own pools (not closed by the client). */
  dispatcher?: Dispatcher;
  sleep?: Sleep;
  /** Source of jitter in [0, 1). */
  random?: () => number;
  /** Wall clock for Retry-After dates, ms. */
  now?: () => number;
  log?: Logger;
}

/** One request: where, what, and which statuses other than 2xx count as an answer (404 for lists). */
export interface HttpRequest {
  method: 'GET' | 'POST';
  /** Absolute URL, query included. */
  url: URL;
  body?: unknown;
  signal?: AbortSignal;
  /** Statuses returned to the caller instead of failing, e.g. [404] where 404 means "nothing matched". */
  accept?: readonly number[];
}

/** A response whose body parsed as JSON. */
export interface HttpResponse {
  status: number;
  body: unknown;
}

/** What one attempt ended with, before the retry loop decides. */
type Attempt =
  | { ok: true; response: HttpResponse }
  | { ok: false; code: SourceCode; reason: string; status?: number; detail: string; retryable: boolean; retryAfterMs?: number; cause?: unknown };

const AUTH_TEXT = 'API key missing or rejected';

/** The HTTP layer shared by all endpoint calls of one client. */
export class HttpClient {
  private readonly pools = new Map<string, InstanceType<typeof Pool>>();
  private readonly permits: Semaphore;
  private readonly sleep: Sleep;
  private readonly random: () => number;
  private readonly now: () => number;
  private readonly log: Logger;
  private closed = false;

  constructor(private readonly opts: HttpOptions) {
    this.permits = new Semaphore(opts.concurrency);
    this.sleep = opts.sleep ?? abortableSleep;
    this.random = opts.random ?? Math.random;
    this.now = opts.now ?? Date.now;
    this.log = opts.log ?? silentLogger;
  }

  /** Sends a request with retries; resolves with the parsed JSON body or rejects with a {@link DataServiceError}. */
  async request(req: HttpRequest): Promise<HttpResponse> {
    const endpoint = `${req.method} ${req.url.pathname}`;
    if (this.closed && !this.opts.dispatcher) {
      throw new DataServiceError(SOURCE_CODES.aborted, `${endpoint}: the data-service client is closed`, { endpoint, reason: 'aborted' });
    }
    for (let attempt = 1; ; attempt++) {
      if (req.signal?.aborted) throw this.aborted(endpoint, req.signal);
      let outcome: Attempt;
      try {
        outcome = await this.permits.use(() => this.attempt(req), req.signal);
      } catch (err) {
        if (req.signal?.aborted) throw this.aborted(endpoint, req.signal);
        throw err;
      }
      if (outcome.ok) return outcome.response;
      if (!outcome.retryable || attempt > this.opts.retries) {
        const tail = attempt > 1 ? `; gave up after ${attempt} attempts` : '';
        throw new DataServiceError(outcome.code, redact(`${endpoint}: ${outcome.detail}${tail}`, [this.opts.apiKey]), {
          endpoint,
          reason: outcome.reason,
          status: outcome.status,
          retryable: outcome.retryable,
          cause: scrubCause(outcome.cause, [this.opts.apiKey]),
        });
      }
      const delay = this.delayBefore(attempt + 1, outcome.retryAfterMs);
      this.log.debug('source retry', { endpoint, attempt, reason: outcome.reason, status: outcome.status, delay_ms: delay });
      try {
        await this.sleep(delay, req.signal);
      } catch {
        throw this.aborted(endpoint, req.signal);
      }
    }
  }

  /** Closes the client's own pools (not a dispatcher passed in). */
  async close(): Promise<void> {
    this.closed = true;
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((p) => p.close()));
  }

  /** Backoff before attempt `next` (2, 3, ...): Retry-After when the server gave one, else full jitter. */
  private delayBefore(next: number, retryAfterMs: number | undefined): number {
    if (retryAfterMs !== undefined) return Math.min(retryAfterMs, this.opts.maxBackoff);
    const ceiling = Math.min(this.opts.maxBackoff, this.opts.backoff * 2 ** (next - 2));
    return Math.floor(this.random() * ceiling);
  }

  private dispatcherFor(url: URL): Dispatcher {
    if (this.opts.dispatcher) return this.opts.dispatcher;
    let pool = this.pools.get(url.origin);
    if (!pool) {
      pool = new Pool(url.origin, {
        connections: this.opts.concurrency,
        keepAliveTimeout: 30_000,
        headersTimeout: this.opts.timeout,
        bodyTimeout: this.opts.timeout,
      });
      this.pools.set(url.origin, pool);
    }
    return pool;
  }

  /** One attempt: send, read, parse, classify. Never throws for a failure the loop may retry. */
  private async attempt(req: HttpRequest): Promise<Attempt> {
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new Error('deadline')), this.opts.timeout);
    const signal = req.signal ? AbortSignal.any([req.signal, deadline.signal]) : deadline.signal;
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.opts.apiKey) headers['x-api-key'] = this.opts.apiKey;
    if (req.body !== undefined) headers['content-type'] = 'application/json';
    let status: number;
    let body: { text: string; bytes: number };
    let retryAfter: string | undefined;
    try {
      const res = await this.dispatcherFor(req.url).request({
        origin: req.url.origin,
        path: req.url.pathname + req.url.search,
        method: req.method,
        headers,
        body: req.body === undefined ? undefined : JSON.stringify(req.body),
        signal,
      });
      status = res.statusCode;
      const ra = res.headers['retry-after'];
      retryAfter = Array.isArray(ra) ? ra[0] : ra;
      const length = Number(res.headers['content-length']);
      body = await bodyText(res.body, Number.isSafeInteger(length) ? length : undefined);
      if (responseBytes.hasSubscribers) responseBytes.publish({ bytes: body.bytes });
    } catch (err) {
      if (req.signal?.aborted) throw err;
      if (deadline.signal.aborted || isTimeout(err)) {
        return { ok: false, code: SOURCE_CODES.timeout, reason: 'timeout', detail: `no complete response within ${formatDuration(this.opts.timeout)}`, retryable: true, cause: err };
      }
      const code = (err as { code?: unknown }).code;
      return { ok: false, code: SOURCE_CODES.network, reason: 'network', detail: `network error${typeof code === 'string' ? ` ${code}` : ''}: ${errText(err)}`, retryable: true, cause: err };
    } finally {
      clearTimeout(timer);
    }
    return this.classify(status, body, retryAfter, req.accept ?? []);
  }

  private async classify(status: number, { text, bytes }: { text: string; bytes: number }, retryAfter: string | undefined, accept: readonly number[]): Promise<Attempt> {
    if ((status >= 200 && status < 300) || accept.includes(status)) {
      if (status === 204 || (text.trim() === '' && status !== 200)) return { ok: true, response: { status, body: null } };
      try {
        // In parts, giving the event loop a turn between them: a 10,000-market body is megabytes of JSON. A big body
        // was just made text in this turn (bodyText: a 9 MB copy, up to ~25 ms when its pages are fresh): the parse's
        // first slice waits until the loop has seen its timers and sockets, or the two held it at once (B9).
        if (text.length >= PARSED_IN_PARTS_FROM) await afterIo();
        return { ok: true, response: { status, body: await runYielding(parseJsonExactSteps(text)) } };
      } catch (err) {
        // A body cut short is almost always the transport (a dropped connection, a proxy), so retry it.
        return { ok: false, code: SOURCE_CODES.badJson, reason: 'bad_json', status, detail: `${status} but the body is not valid JSON (${errText(err)}, ${bytes} bytes)`, retryable: true, cause: err };
      }
    }
    const said = this.serviceSays(text);
    if (status === 401 || status === 403) {
      const hint = this.opts.apiKey ? '' : ' (source.api_key is not set)';
      return { ok: false, code: SOURCE_CODES.auth, reason: `http_${status}`, status, detail: `${status} — ${AUTH_TEXT}${hint}${said}`, retryable: false };
    }
    if (status === 429) {
      return { ok: false, code: SOURCE_CODES.http, reason: 'http_429', status, detail: `429 — rate limited${said}`, retryable: true, retryAfterMs: parseRetryAfter(retryAfter, this.now()) };
    }
    if (status >= 500) {
      return { ok: false, code: SOURCE_CODES.http, reason: 'http_5xx', status, detail: `${status} — the service failed${said}`, retryable: true, retryAfterMs: parseRetryAfter(retryAfter, this.now()) };
    }
    const reason = status === 400 || status === 404 ? `http_${status}` : `http_${Math.floor(status / 100)}xx`;
    const what = status === 400 ? 'the service rejected the request' : status === 404 ? 'nothing matched' : 'unexpected status';
    return { ok: false, code: SOURCE_CODES.http, reason, status, detail: `${status} — ${what}${said}`, retryable: false };
  }

  /** The service's own explanation from an error body (`error`, `message`, `details`, GraphQL `errors`), scrubbed. */
  private serviceSays(text: string): string {
    let parts: string[] = [];
    try {
      const body = JSON.parse(text) as Record<string, unknown>;
      if (body && typeof body === 'object') {
        for (const key of ['error', 'message', 'details']) {
          const v = body[key];
          if (typeof v === 'string') parts.push(v);
          else if (v && typeof v === 'object') parts.push(JSON.stringify(v));
        }
        if (Array.isArray(body.errors)) parts.push(...body.errors.map((e) => String((e as { message?: unknown })?.message ?? e)));
      }
    } catch {
      if (text.trim() && !text.trimStart().startsWith('<')) parts.push(text.trim());
    }
    parts = [...new Set(parts)];
    if (parts.length === 0) return '';
    const joined = parts.join(': ');
    const short = joined.length > 200 ? `${joined.slice(0, 197)}...` : joined;
    return ` (service says: ${redact(short, [this.opts.apiKey])})`;
  }

  private aborted(endpoint: string, signal: AbortSignal | undefined): DataServiceError {
    const why = signal?.reason instanceof Error ? signal.reason.message : typeof signal?.reason === 'string' ? signal.reason : 'aborted';
    return new DataServiceError(SOURCE_CODES.aborted, `${endpoint}: aborted (${redact(why, [this.opts.apiKey])})`, { endpoint, reason: 'aborted' });
  }
}

/** Parses Retry-After (delta seconds or an HTTP date) to ms from now; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function isTimeout(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT';
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** A Content-Length up to this is trusted to size the body's buffer up front; past it the buffer grows as bytes come. */
const PRESIZE_MAX = 64 * 1024 * 1024;
/** The body's buffer when the length is not known (it doubles as the bytes come). */
const FIRST_BUFFER = 64 * 1024;

/**
 * The body as text (what `body.text()` gives: UTF-8, a leading BOM dropped, bad bytes as U+FFFD) and how many bytes
 * came (an error says that, not the text's UTF-16 length), decoded once when it ends. Its bytes are kept meanwhile
 * outside V8's heap: decoded as they came, a 9 MB markets answer was 9 MB of chunk strings that lived long enough to
 * be promoted and then 9 MB more joined, a full collection's worth of the old generation's growth a poll
 * (src/heap-growth.ts). They are copied into one buffer as each chunk comes, sized from `declared` (Content-Length)
 * when there is one: joining the chunks at the end (`Buffer.concat`) was a 9 MB copy into fresh pages in one block,
 * 22–29 ms in the bench's full run (issue 14, B9). A body all ASCII (JSON nearly always is: non-ASCII text may come
 * escaped) is its own text, byte for byte: checked (simdutf, ~0.1 ms for 9 MB) and copied as Latin-1, where the
 * UTF-8 decode of 9 MB held the event loop for 18–28 ms in a poll (0.7 against 6.4 ms alone).
 */
async function bodyText(body: AsyncIterable<Uint8Array>, declared?: number): Promise<{ text: string; bytes: number }> {
  let buf = Buffer.allocUnsafe(declared !== undefined && declared > 0 && declared <= PRESIZE_MAX ? declared : FIRST_BUFFER);
  let length = 0;
  for await (const chunk of body) {
    if (length + chunk.length > buf.length) {
      const grown = Buffer.allocUnsafe(Math.max(2 * buf.length, length + chunk.length));
      buf.copy(grown, 0, 0, length);
      buf = grown;
    }
    buf.set(chunk, length);
    length += chunk.length;
  }
  const all = buf.subarray(0, length);
  const text = isAscii(all) ? all.toString('latin1') : new TextDecoder().decode(all);
  return { text, bytes: length };
}
