/** A fake daemon behind the HTTP server: alerts, polls, readiness and a silence store that validates like the real one. */
import { request } from 'node:http';
import { randomUUID } from 'node:crypto';
import { LookoutError } from '../src/errors.js';
import { ManualClock } from '../src/clock.js';
import { createLogger, type Logger } from '../src/log.js';
import { createMetrics, type Metrics } from '../src/metrics/index.js';
import { startHttpServer, type HttpServer } from '../src/http/server.js';
import type { ApiAlert, HttpDeps, PollStatus, Readiness, Silence, SilenceStore } from '../src/http/types.js';
import { silenceInputSchema } from '../src/silences/repo.js';
import { NOW } from './metrics-fixtures.js';

/** In-memory silences, validated by the real repository's schema and rules. */
export class FakeSilences implements SilenceStore {
  readonly items = new Map<string, Silence>();
  constructor(private readonly clock: { now(): number }) {}
  list(): Silence[] {
    return [...this.items.values()].filter((s) => s.endsAt > this.clock.now());
  }
  add(input: unknown): Silence {
    const parsed = silenceInputSchema().safeParse(input);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new LookoutError('E_BAD_REQUEST', `invalid silence: ${issue.path.join('.')}: ${issue.message}`);
    }
    const now = this.clock.now();
    const startsAt = Math.max(parsed.data.startsAt ?? now, now);
    if (parsed.data.endsAt <= startsAt) throw new LookoutError('E_BAD_REQUEST', 'invalid silence: endsAt must be later than startsAt and than now');
    const s: Silence = { id: randomUUID(), ...parsed.data, startsAt, createdAt: now, updatedAt: now };
    this.items.set(s.id, s);
    return s;
  }
  expire(id: string): boolean {
    const s = this.items.get(id);
    if (!s) return false;
    s.endsAt = Math.min(s.endsAt, this.clock.now());
    return true;
  }
}

/** The mutable state a test drives the server through. */
export interface FakeDaemon {
  server: HttpServer;
  clock: ManualClock;
  metrics: Metrics;
  silences: FakeSilences;
  alerts: ApiAlert[];
  polls: PollStatus[];
  readiness: Readiness;
  logLines: string[];
  /** fetch() relative to the server. */
  get(path: string, init?: RequestInit): Promise<Response>;
}

/** Starts the real server over fakes on 127.0.0.1:0. */
export async function startFakeDaemon(opts: { token?: string; deps?: Partial<HttpDeps> } = {}): Promise<FakeDaemon> {
  const clock = new ManualClock(NOW);
  const metrics = createMetrics({ processMetrics: false });
  const silences = new FakeSilences(clock);
  const logLines: string[] = [];
  const log: Logger = createLogger({ level: 'debug', write: (l) => logLines.push(l) });
  const state = { alerts: [] as ApiAlert[], polls: [] as PollStatus[], readiness: { ok: true } as Readiness };
  const server = await startHttpServer({
    listen: '127.0.0.1:0',
    ...(opts.token !== undefined ? { token: opts.token } : {}),
    metrics,
    log,
    ready: () => state.readiness,
    alerts: () => state.alerts,
    polls: () => state.polls,
    silences,
    version: '0.1.0-test',
    clock,
    ...opts.deps,
  });
  const d: FakeDaemon = {
    server,
    clock,
    metrics,
    silences,
    logLines,
    get alerts() {
      return state.alerts;
    },
    set alerts(v) {
      state.alerts = v;
    },
    get polls() {
      return state.polls;
    },
    set polls(v) {
      state.polls = v;
    },
    get readiness() {
      return state.readiness;
    },
    set readiness(v) {
      state.readiness = v;
    },
    get: (path, init) => fetch(server.url + path, { ...init, signal: AbortSignal.timeout(10_000) }),
  };
  return d;
}

/** A poll status. */
export function pollStatus(name: string, ok: boolean, extra: Partial<PollStatus> = {}): PollStatus {
  return {
    name,
    kind: 'markets',
    last_started_at: NOW - 2_000,
    last_finished_at: NOW - 500,
    ok,
    error: ok ? null : 'POST /yields/graphql: 503 — service unavailable',
    error_at: ok ? null : NOW - 500,
    duration_ms: 1500,
    last_success_at: ok ? NOW - 500 : NOW - 600_000,
    consecutive_failures: ok ? 0 : 3,
    rows: ok ? 120 : null,
    rejected: ok ? 2 : null,
    ...extra,
  };
}

/** An answer of {@link rawRequest}. */
export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * One request with exactly the headers given (node:http, not fetch: fetch fills in or forbids some, e.g. Host and
 * Origin), as a web page, curl or a rebinding page would send it.
 */
export function rawRequest(url: string, opts: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: opts.method ?? 'GET', headers: opts.headers ?? {}, timeout: 10_000 }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error(`${opts.method ?? 'GET'} ${url}: no answer within 10 s`)));
    req.end(opts.body);
  });
}
