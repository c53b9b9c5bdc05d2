/**
 * lookout's one HTTP listener: /metrics, /healthz, /readyz, the JSON API (alerts, polls, rules, silences)
 * and the status page. Errors are JSON `{error, message}` with a 4xx status; never a stack trace.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { systemClock } from '../clock.js';
import type { AlertState } from '../model.js';
import { checkRequest, checkWrite, isWrite } from './guard.js';
import { applyLimits, DEFAULT_LIMITS, serverOptions } from './limits.js';
import { HttpError, parseJsonBody, parseListen, readBody, send, sendChunks, sendError, sendJson, urlOf } from './respond.js';
import { renderStatusPage, STATUS_PAGE_CSP } from './status-page.js';
import { ALERT_PAGE_CSP, ALERT_PAGE_RANGES, DEFAULT_ALERT_RANGE, renderAlertPage } from './alert-page.js';
import { alertJson, pollJson, ruleJson, silenceJson, type HttpDeps, type Silence } from './types.js';

/** A running server. */
export interface HttpServer {
  /** e.g. `http://127.0.0.1:9464` (the bound address and port). */
  url: string;
  port: number;
  /** Stops listening and closes open connections. */
  close(): Promise<void>;
}

type Handler = (req: IncomingMessage, res: ServerResponse, url: URL, params: string[]) => Promise<void> | void;
interface Route {
  pattern: RegExp;
  methods: Partial<Record<string, Handler>>;
  /** Answers without the database: served at once, even while a poll's transaction is open. */
  storeFree?: true;
}

const ALERT_STATES: readonly AlertState[] = ['inactive', 'pending', 'firing', 'resolved'];

/** Starts the listener on `deps.listen`; resolves once it accepts connections. */
export async function startHttpServer(deps: HttpDeps): Promise<HttpServer> {
  const { host, port } = parseListen(deps.listen);
  const routes = buildRoutes(deps);
  const limits = { ...DEFAULT_LIMITS, ...deps.limits };
  const guard = {
    listenHost: host,
    allowedHosts: typeof deps.allowedHosts === 'function' ? deps.allowedHosts : () => (deps.allowedHosts as readonly string[] | undefined) ?? [],
    ...(deps.token !== undefined ? { token: deps.token } : {}),
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://lookout.invalid');
    } catch {
      throw new HttpError(400, 'bad_request', 'malformed request target');
    }
    const path = url.pathname;
    checkRequest(guard, path, req.headers);
    for (const route of routes) {
      const m = route.pattern.exec(path);
      if (!m) continue;
      const method = req.method === 'HEAD' ? 'GET' : (req.method ?? 'GET');
      const handler = route.methods[method];
      if (!handler) {
        const allow = Object.keys(route.methods).join(', ');
        throw new HttpError(405, 'method_not_allowed', `${req.method} is not allowed on ${path}; use ${allow}`, { allow });
      }
      if (isWrite(req.method, path)) checkWrite(req.headers);
      const params = m.slice(1).map(decodePart);
      // Handlers read the database synchronously: each starts once no poll's transaction is open (the event loop stays free).
      await (route.storeFree ? handler(req, res, url, params) : gated(deps, () => handler(req, res, url, params)));
      return;
    }
    throw new HttpError(404, 'not_found', `no such endpoint: ${path}`);
  };

  const server = createServer(serverOptions(limits), (req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (err instanceof HttpError) return sendError(res, err);
      const e = err as { code?: unknown; message?: unknown };
      if (e?.code === 'E_BAD_REQUEST') return sendError(res, new HttpError(400, 'bad_request', String(e.message)));
      deps.log.error('http_handler_failed', { method: req.method, path: req.url?.split('?')[0], err });
      sendError(res, new HttpError(500, 'internal', 'internal error; see the daemon log'));
    });
  });
  applyLimits(server, limits);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', (err) => deps.log.error('http_server_error', { err }));
  const addr = server.address() as AddressInfo;
  const url = urlOf(addr.address, addr.port);
  deps.log.info('http_listening', { url, auth: deps.token !== undefined });

  return {
    url,
    port: addr.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Runs `fn` through the daemon's store gate when there is one (callers await the result either way). */
const gated = <T>(deps: HttpDeps, fn: () => T): T | Promise<T> => (deps.exclusive ? deps.exclusive(fn) : fn());

function decodePart(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new HttpError(400, 'bad_request', 'malformed percent-encoding in the path');
  }
}

function buildRoutes(deps: HttpDeps): Route[] {
  const now = () => (deps.clock ?? systemClock).now();
  return [
    {
      pattern: /^\/metrics$/,
      storeFree: true,
      methods: {
        GET: async (_req, res) => {
          const e = await deps.metrics.exposition();
          // The market families' bytes are lent until the socket has taken them or the connection ended ('close').
          if (res.closed) e.release();
          else res.once('close', e.release);
          sendChunks(res, 200, deps.metrics.contentType, e.chunks);
        },
      },
    },
    { pattern: /^\/healthz$/, storeFree: true, methods: { GET: (_req, res) => sendJson(res, 200, { status: 'ok' }) } },
    {
      pattern: /^\/readyz$/,
      // A poll's open transaction holds the write lock: the database takes writes, and the probe says so without waiting.
      storeFree: true,
      methods: {
        GET: (_req, res) => {
          const r = deps.ready();
          if (r.ok) return sendJson(res, 200, { status: 'ready' });
          sendJson(res, 503, { error: 'not_ready', message: r.reason ?? 'not ready yet' }, { 'retry-after': '5' });
        },
      },
    },
    {
      pattern: /^\/api\/alerts$/,
      methods: {
        GET: (_req, res, url) => {
          const states = url.searchParams.getAll('state').flatMap((s) => s.split(',')).filter((s) => s !== '');
          const bad = states.find((s) => !ALERT_STATES.includes(s as AlertState));
          if (bad !== undefined) {
            throw new HttpError(400, 'bad_request', `unknown state '${bad}'; use one of ${ALERT_STATES.join(', ')}`);
          }
          const rule = url.searchParams.get('rule');
          const list = deps
            .alerts()
            .filter((a) => (states.length === 0 || states.includes(a.state)) && (rule === null || a.rule === rule))
            .map(alertJson);
          sendJson(res, 200, list);
        },
      },
    },
    { pattern: /^\/api\/polls$/, methods: { GET: (_req, res) => sendJson(res, 200, deps.polls().map(pollJson)) } },
    { pattern: /^\/api\/rules$/, methods: { GET: (_req, res) => sendJson(res, 200, (deps.rules?.() ?? []).map(ruleJson)) } },
    {
      pattern: /^\/api\/silences$/,
      methods: {
        GET: (_req, res, url) => {
          const all = ['1', 'true'].includes(url.searchParams.get('all') ?? '');
          sendJson(res, 200, deps.silences.list({ all }).map((s) => silenceJson(s, now())));
        },
        POST: async (req, res) => {
          const input = parseJsonBody(await readBody(req));
          if (input === null || typeof input !== 'object' || Array.isArray(input)) {
            throw new HttpError(400, 'bad_request', 'send one silence as a JSON object');
          }
          // The body took turns of the event loop: a poll's transaction may have opened meanwhile.
          const s = await gated(deps, () => deps.silences.add(input));
          deps.log.info('silence_added', { id: s.id, via: 'http' });
          sendJson(res, 201, silenceJson(s, now()), { location: `/api/silences/${encodeURIComponent(s.id)}` });
        },
      },
    },
    {
      pattern: /^\/api\/silences\/([^/]+)$/,
      methods: {
        DELETE: (_req, res, _url, [id]) => {
          let result: boolean | Silence;
          try {
            result = deps.silences.expire(id!);
          } catch (err) {
            if ((err as { code?: unknown })?.code !== 'E_NOT_FOUND') throw err;
            result = false;
          }
          if (result === false) throw new HttpError(404, 'not_found', `no silence with id '${id}'`);
          deps.log.info('silence_expired', { id, via: 'http' });
          sendJson(res, 200, result === true ? { id, status: 'expired' } : silenceJson(result, now()));
        },
      },
    },
    {
      pattern: /^\/alerts\/([^/]+)$/,
      methods: {
        GET: (_req, res, url, [fingerprint]) => {
          const range = url.searchParams.get('range') ?? DEFAULT_ALERT_RANGE;
          if (!Object.hasOwn(ALERT_PAGE_RANGES, range)) {
            throw new HttpError(400, 'bad_request', `range must be one of ${Object.keys(ALERT_PAGE_RANGES).join(', ')}`);
          }
          const view = deps.alertPage?.(fingerprint!, range);
          if (!view) throw new HttpError(404, 'not_found', `no alert with fingerprint '${fingerprint}'`);
          send(res, 200, 'text/html; charset=utf-8', renderAlertPage(view), {
            'content-security-policy': ALERT_PAGE_CSP,
            'x-frame-options': 'DENY',
            'referrer-policy': 'no-referrer',
          });
        },
      },
    },
    {
      pattern: /^\/$/,
      methods: {
        GET: (_req, res) => {
          const html = renderStatusPage({
            now: now(),
            alerts: deps.alerts(),
            polls: deps.polls(),
            silences: deps.silences.list(),
            ready: deps.ready(),
            version: deps.version,
          });
          send(res, 200, 'text/html; charset=utf-8', html, {
            'content-security-policy': STATUS_PAGE_CSP,
            'x-frame-options': 'DENY',
            'referrer-policy': 'no-referrer',
          });
        },
      },
    },
  ];
}
