/**
 * The CLI's way to a running daemon (`--url`, or `LOOKOUT_URL`): its HTTP API, as `amtool` talks to Alertmanager.
 * The token (`--token`, or `LOOKOUT_TOKEN`: the daemon's `server.token`) goes in a header and never into a message.
 */
import { LookoutError } from '../errors.js';

/** A running daemon to talk to. */
export interface DaemonTarget {
  /** Its base URL, e.g. `http://127.0.0.1:9464`. */
  url: string;
  token?: string;
}

/** The target given by `--url`/`--token` (or `LOOKOUT_URL`/`LOOKOUT_TOKEN`, which the CLI reads into them); undefined: use the DB file. */
export function daemonTarget(o: { url?: string; token?: string }): DaemonTarget | undefined {
  if (!o.url) return undefined;
  return { url: o.url, ...(o.token ? { token: o.token } : {}) };
}

const TIMEOUT_MS = 15_000;

/**
 * `method path` against the daemon, with a JSON body for writes (the daemon's guard wants application/json and no
 * foreign Origin; the CLI sends no Origin). Resolves with the parsed JSON; throws {@link LookoutError} `E_DAEMON` with
 * the daemon's own message on an error status.
 */
export async function daemonRequest<T>(t: DaemonTarget, method: string, path: string, body?: unknown): Promise<T> {
  const where = shown(t.url);
  let base: URL;
  try {
    base = new URL(t.url);
  } catch {
    throw new LookoutError('E_DAEMON', `--url '${where}' is not a URL: write it like http://127.0.0.1:9464`);
  }
  const url = new URL(path.replace(/^\//, ''), base.href.endsWith('/') ? base.href : `${base.href}/`);
  const headers: Record<string, string> = { accept: 'application/json' };
  if (t.token !== undefined) headers.authorization = `Bearer ${t.token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(url, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}), signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (err) {
    const c = (err as { cause?: { code?: string; message?: string; errors?: Array<{ code?: string }> } }).cause;
    const cause = (err as Error).name === 'TimeoutError' ? `no answer within ${TIMEOUT_MS / 1000} s` : (c?.code ?? c?.errors?.[0]?.code ?? c?.message ?? String(err));
    throw new LookoutError('E_DAEMON', `cannot reach the daemon at ${where}: ${cause} (is \`lookout run\` listening there?)`, { cause: err });
  }
  const text = await res.text();
  let json: unknown;
  try {
    json = text === '' ? null : JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (res.status === 401) {
    throw new LookoutError(
      'E_DAEMON',
      t.token === undefined
        ? `the daemon at ${where} wants a token (server.token): pass --token or set LOOKOUT_TOKEN`
        : `the daemon at ${where} did not accept the token given (--token or LOOKOUT_TOKEN)`,
    );
  }
  if (!res.ok) {
    const message = (json as { message?: unknown } | undefined)?.message;
    // The daemon's 400 (bad input) and 404 (no such silence) are the user's to fix, as the same mistakes on the DB file are.
    const code = res.status === 400 ? 'E_BAD_REQUEST' : res.status === 404 ? 'E_NOT_FOUND' : 'E_DAEMON';
    throw new LookoutError(code, `${method} ${url.pathname} at ${where}: ${res.status} — ${typeof message === 'string' ? message : 'not a lookout API answer'}`);
  }
  if (json === undefined) throw new LookoutError('E_DAEMON', `${method} ${url.pathname} at ${where}: the answer is not JSON — is this lookout?`);
  return json as T;
}

/** A URL fit to print: no user name or password in it. */
function shown(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.href.replace(/\/$/, '');
  } catch {
    return url.replace(/\/\/[^@/]*@/, '//');
  }
}
