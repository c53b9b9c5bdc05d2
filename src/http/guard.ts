/**
 * Who may ask the listener what (SPEC §5). A browser can reach a loopback listener, so three checks stand between a web
 * page and lookout: the `Host` check (a DNS-rebinding page names its own host), the token, and the cross-site check of
 * writes (a page on another origin can POST `text/plain` without any CORS preflight). Each check throws an
 * {@link HttpError} with a JSON-able code; the server turns it into `{error, message}`.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';
import { HttpError } from './respond.js';

/** What the guard judges a request by. */
export interface GuardOptions {
  /** The host of `server.listen` (undefined or a wildcard when it listens on every interface). */
  listenHost: string | undefined;
  /** `server.allowed_hosts`, read per request so a reload applies: names, `.domain` (it and its subdomains), or `*`. */
  allowedHosts(): readonly string[];
  /** `server.token`, when set. */
  token?: string;
}

/** Methods that change something. */
const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** Paths every request may reach without a token or a known Host: liveness says nothing and must answer any prober. */
const OPEN_PATHS = new Set(['/healthz']);
const WILDCARDS = new Set(['', '0.0.0.0', '::', '[::]']);

/** The name of a `Host` header without its port, lower case, without a trailing dot; undefined when it cannot be read. */
export function hostName(header: string): string | undefined {
  const h = header.trim().toLowerCase();
  const v6 = /^\[([0-9a-f:.]+)\](?::\d{1,5})?$/.exec(h);
  if (v6) return v6[1];
  const m = /^([a-z0-9._-]+?)\.?(?::\d{1,5})?$/.exec(h);
  return m ? m[1] : undefined;
}

/**
 * Whether a `Host` names lookout: an IP address (a rebinding page always uses a DNS name), `localhost` and `*.localhost`
 * (browsers resolve those to loopback themselves), the host of `server.listen`, or an entry of `server.allowed_hosts`.
 */
export function hostAllowed(name: string, listenHost: string | undefined, allowed: readonly string[]): boolean {
  if (isIP(name) !== 0) return true;
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  const listen = listenHost?.toLowerCase().replace(/^\[|\]$/g, '');
  if (listen !== undefined && !WILDCARDS.has(listen) && name === listen) return true;
  return allowed.some((entry) => {
    const e = entry.trim().toLowerCase().replace(/\.$/, '');
    if (e === '*') return true;
    if (e.startsWith('.')) return name === e.slice(1) || name.endsWith(e);
    return name === e;
  });
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * A constant-time check of the token in `Authorization: Bearer <token>`, or in HTTP Basic auth as the password (any
 * user name), which is what a browser can send for the status page.
 */
export function authorized(header: string | undefined, token: string): boolean {
  let given: string | undefined;
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  const basic = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (bearer) given = bearer[1];
  else if (basic) {
    const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon >= 0) given = decoded.slice(colon + 1);
  }
  // Digests first: equal lengths, so timingSafeEqual neither throws nor leaks the token's length.
  return timingSafeEqual(digest(given ?? ''), digest(token)) && given !== undefined;
}

/** True for a request that changes something through the API. */
export function isWrite(method: string | undefined, path: string): boolean {
  return WRITES.has(method ?? '') && path.startsWith('/api/');
}

/** Checks that apply to every request before routing: the Host, then the token. Throws 403 or 401. */
export function checkRequest(o: GuardOptions, path: string, headers: IncomingHttpHeaders): void {
  if (OPEN_PATHS.has(path)) return;
  const host = headers.host;
  // No Host at all (HTTP/1.0) cannot come from a browser, so it cannot be a rebinding page.
  if (host !== undefined) {
    const name = hostName(host);
    if (name === undefined || !hostAllowed(name, o.listenHost, o.allowedHosts())) {
      throw new HttpError(
        403,
        'host_not_allowed',
        `Host '${host.slice(0, 100)}' is not one lookout answers to (DNS-rebinding guard): use an IP address or localhost, or add the name to server.allowed_hosts`,
      );
    }
  }
  if (o.token !== undefined && !authorized(headers.authorization, o.token)) {
    // The status page asks for Basic auth so a browser prompts (password: the token); the rest asks for Bearer.
    throw new HttpError(401, 'unauthorized', 'this endpoint needs the token (server.token): Authorization: Bearer <token>', {
      'www-authenticate': path === '/' ? 'Basic realm="lookout", charset="UTF-8"' : 'Bearer realm="lookout"',
    });
  }
}

/** The origin's host:port as a `Host` header would say it, without a default port. */
function hostPort(value: string): string | undefined {
  try {
    const u = new URL(value.includes('://') ? value : `http://${value}`);
    return `${u.hostname}${u.port === '' || u.port === '80' || u.port === '443' ? '' : `:${u.port}`}`.toLowerCase();
  } catch {
    return undefined;
  }
}

/**
 * Checks of a write once it is routed: it must come from the same origin (or from no browser at all) and carry JSON.
 * `Sec-Fetch-Site: same-site` is refused too: another port on localhost (Grafana on :3000) or a sibling subdomain is
 * same-site but another origin, and lookout has no page of its own that writes.
 */
export function checkWrite(headers: IncomingHttpHeaders): void {
  const site = headers['sec-fetch-site'];
  if (site === 'cross-site' || site === 'same-site') {
    throw crossSite(`Sec-Fetch-Site: ${site}`);
  }
  const origin = headers.origin;
  if (origin !== undefined) {
    const from = origin === 'null' ? undefined : hostPort(origin);
    const self = headers.host === undefined ? undefined : hostPort(headers.host);
    if (from === undefined || from !== self) throw crossSite(`Origin ${origin.slice(0, 100)}`);
  }
  const type = headers['content-type'];
  const hasBody = headers['transfer-encoding'] !== undefined || Number(headers['content-length'] ?? 0) > 0;
  // A DELETE without a body has nothing to type; a browser cannot send one cross-site without a preflight lookout never grants.
  if (type === undefined && !hasBody) return;
  if (!/^application\/json\s*(;|$)/i.test(type ?? '')) {
    throw new HttpError(
      415,
      'unsupported_media_type',
      `a write must send Content-Type: application/json (got ${type === undefined ? 'none' : `'${type.slice(0, 60)}'`})`,
    );
  }
}

function crossSite(evidence: string): HttpError {
  return new HttpError(
    403,
    'cross_site_request',
    `refused: this write comes from another site (${evidence}); lookout takes writes from the CLI and from scripts, not from web pages`,
  );
}
