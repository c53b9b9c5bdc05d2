/** Small helpers of the HTTP server: JSON and error responses, request bodies, listen addresses. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LookoutError } from '../errors.js';
import { outputWaiting } from '../yielding.js';

/** Largest request body accepted, bytes. */
export const MAX_BODY_BYTES = 64 * 1024;

/** A request that gets a 4xx answer: `code` is the `error` field of the JSON body. */
export class HttpError extends LookoutError {
  readonly status: number;
  readonly headers: Record<string, string>;
  constructor(status: number, code: string, message: string, headers: Record<string, string> = {}) {
    super(code, message);
    this.status = status;
    this.headers = headers;
  }
}

const COMMON_HEADERS = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' };

/** Sends `body` with `status` and a content type. */
export function send(res: ServerResponse, status: number, contentType: string, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...COMMON_HEADERS, 'content-type': contentType, 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

/**
 * Sends a body given as byte chunks, in order, without joining them first (the 12 MB of /metrics). Until the socket
 * has taken the last byte (or closed), long work gives the event loop a turn every millisecond instead of every 8
 * ({@link outputWaiting}), so a poll running meanwhile does not stretch the transfer.
 */
export function sendChunks(res: ServerResponse, status: number, contentType: string, chunks: readonly Buffer[], headers: Record<string, string> = {}): void {
  const length = chunks.reduce((n, c) => n + c.length, 0);
  res.writeHead(status, { ...COMMON_HEADERS, 'content-type': contentType, 'content-length': length, ...headers });
  let waiting = false;
  for (const c of chunks) waiting = !res.write(c) || waiting;
  res.end();
  if (waiting && !res.writableFinished) {
    // 'close' comes once the response is complete, or when the connection ended first.
    res.once('close', outputWaiting());
  }
}

/** Sends a JSON value. */
export function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(value) + '\n', headers);
}

/** Sends `{error, message}` with the status of `err`. */
export function sendError(res: ServerResponse, err: HttpError): void {
  sendJson(res, err.status, { error: err.code, message: err.message }, err.headers);
}

/** Reads a request body as text; 413 past {@link MAX_BODY_BYTES}. */
export function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<string> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    return Promise.reject(tooLarge(limit));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      if (over) return;
      size += chunk.length;
      if (size > limit) {
        over = true;
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!over) resolve(Buffer.concat(chunks).toString('utf8'));
    });
    req.on('error', (err) => reject(new HttpError(400, 'bad_request', `could not read the request body: ${err.message}`)));
  });
}

function tooLarge(limit: number): HttpError {
  return new HttpError(413, 'payload_too_large', `request body exceeds ${limit / 1024} KiB`, { connection: 'close' });
}

/** Parses a JSON request body; 400 when it is empty or not JSON. */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') throw new HttpError(400, 'bad_request', 'request body is empty: send a JSON object');
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new HttpError(400, 'bad_request', `request body is not valid JSON: ${(err as Error).message}`);
  }
}

/** Splits `host:port`, `[v6]:port` or `:port` into a host for listen() and a port. */
export function parseListen(listen: string): { host: string | undefined; port: number } {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9.-]*)):(\d{1,5})$/.exec(listen.trim());
  const port = Number(m?.[3]);
  if (!m || !Number.isInteger(port) || port > 65535) {
    throw new LookoutError('E_CONFIG', `server.listen '${listen}' must be host:port, e.g. 127.0.0.1:9464`);
  }
  const host = m[1] ?? m[2];
  return { host: host === '' ? undefined : host, port };
}

/** The URL of a bound address. */
export function urlOf(address: string, port: number): string {
  return address.includes(':') ? `http://[${address}]:${port}` : `http://${address}:${port}`;
}
