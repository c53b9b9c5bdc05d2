/** Bounds on what one client may send the listener and for how long, so a slow or greedy client cannot hold it. */
import type { Server, ServerOptions } from 'node:http';

/** The bounds; every field has a default in {@link DEFAULT_LIMITS}. */
export interface HttpLimits {
  /** The request line and headers must arrive within this, ms (slowloris). */
  headersTimeoutMs: number;
  /** The whole request, body included, must arrive within this, ms. */
  requestTimeoutMs: number;
  /** A socket with no traffic for this long is closed, ms. */
  idleTimeoutMs: number;
  /** How long a kept-alive connection waits for its next request, ms. */
  keepAliveTimeoutMs: number;
  /** Largest request line + headers, bytes (431 past it). */
  maxHeaderBytes: number;
  /** Connections open at once; more are refused until one closes. */
  maxConnections: number;
}

/** The production bounds: generous for a person, a script or a scraper; short for a client that dribbles bytes. */
export const DEFAULT_LIMITS: HttpLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 15_000,
  idleTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxHeaderBytes: 16 * 1024,
  maxConnections: 256,
};

/** Options for `createServer` from the bounds. */
export function serverOptions(l: HttpLimits): ServerOptions {
  return {
    maxHeaderSize: l.maxHeaderBytes,
    headersTimeout: l.headersTimeoutMs,
    requestTimeout: l.requestTimeoutMs,
    keepAliveTimeout: l.keepAliveTimeoutMs,
    // Node checks the two timeouts above on this interval (default 30 s): check often enough that they hold.
    connectionsCheckingInterval: Math.max(250, Math.min(1_000, Math.floor(l.headersTimeoutMs / 4))),
  };
}

/** Applies the bounds that are properties of a created server. */
export function applyLimits(server: Server, l: HttpLimits): void {
  server.maxConnections = l.maxConnections;
  server.setTimeout(l.idleTimeoutMs, (socket) => socket.destroy());
}
