/** Shared helpers of the data-service client tests: a config for a simulator, a recording sleep, deadlines. */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Simulator } from '../src/simulator/index.js';
import type { SourceConfig } from '../src/source/client.js';
import type { Steps } from '../src/yielding.js';
import type { Sleep } from '../src/source/http.js';

/** A source config pointing at a simulator, with short backoffs; `over` wins. */
export function sourceConfig(sim: Pick<Simulator, 'url' | 'catalogUrl'>, over: Partial<SourceConfig> = {}): SourceConfig {
  return {
    base_url: sim.url,
    catalog_url: sim.catalogUrl,
    graphql_path: '/yields/graphql',
    api_key: 'sim-key',
    timeout: 5_000,
    retries: 3,
    backoff: 20,
    max_backoff: 200,
    concurrency: 4,
    max_pages: 1000,
    ...over,
  };
}

/** A sleep that returns at once and records what it was asked to wait (still honouring abort). */
export function recordingSleep(): { sleep: Sleep; delays: number[] } {
  const delays: number[] = [];
  const sleep: Sleep = async (ms, signal) => {
    delays.push(ms);
    if (signal?.aborted) throw signal.reason;
  };
  return { sleep, delays };
}

/** Resolves once `check` is true, polling; rejects after `ms`. */
export async function until(check: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Every message of an error and its cause chain, plus its string and JSON forms: where a secret must not be. */
export function errorText(err: unknown): string {
  const parts: string[] = [String(err)];
  try {
    parts.push(JSON.stringify(err));
  } catch {
    /* circular: the messages below still count */
  }
  for (let e: unknown = err, depth = 0; e && depth < 10; depth++) {
    if (e instanceof Error) {
      parts.push(e.message, e.stack ?? '', String(e));
      e = e.cause;
    } else {
      parts.push(String(e));
      break;
    }
  }
  return parts.join('\n');
}

/** A bare loopback HTTP server for what the simulator cannot shape (raw bodies, socket counts). */
export async function rawServer(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Runs steps to the end without pausing, counting the points where they would have paused. */
export function countPauses<T>(steps: Steps<T>): { value: T; pauses: number } {
  let pauses = 0;
  for (;;) {
    const r = steps.next();
    if (r.done) return { value: r.value, pauses };
    pauses++;
  }
}
