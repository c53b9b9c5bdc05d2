/** The simulator as a child process for the benchmarks, with the source config and bare requests that reach it. */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import type { SourceConfig } from '../source/client.js';
import { METRICS_QUERY } from '../source/graphql.js';
import { requester } from './ipc.js';
import type { OverrideReply, OverrideRequest } from './sim-child.js';

/** A simulator running in a child process. */
export interface ChildSimulator {
  url: string;
  catalogUrl: string;
  apiKey: string;
  pid: number;
  /** Holds the utilization of `markets` (indices, or all) at `utilization` from now on; null lets go. Resolves with when it took effect. */
  override(markets: OverrideRequest['override']['markets'], utilization: number | null): Promise<Omit<OverrideReply, 'id'>>;
  stop(): Promise<void>;
}

/** Starts the simulator in a child process with `markets` and `positions` (on `networks`, default the simulator's 9); resolves once it listens. */
export async function startChildSimulator(opts: { markets: number; positions: number; seed?: number; networks?: readonly string[] }): Promise<ChildSimulator> {
  const entry = fileURLToPath(new URL('./sim-child.js', import.meta.url));
  const child: ChildProcess = fork(entry, [JSON.stringify(opts)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const [msg] = (await Promise.race([
    once(child, 'message'),
    once(child, 'exit').then(([code]) => Promise.reject(new Error(`simulator child exited with ${String(code)} before listening`))),
  ])) as [{ url: string; catalogUrl: string; apiKey: string }];
  const ask = requester(child, 'the simulator child');
  return {
    ...msg,
    pid: child.pid ?? -1,
    override: (markets, utilization) => ask<OverrideReply>({ override: { markets, utilization } }, 30_000),
    async stop() {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.send('stop');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The `source:` section pointing at `sim`; retries as in production, for a keep-alive socket the server closed while idle. */
export function sourceConfigFor(sim: ChildSimulator): SourceConfig {
  return {
    base_url: sim.url,
    catalog_url: sim.catalogUrl,
    graphql_path: '/yields/graphql',
    api_key: sim.apiKey,
    timeout: 60_000,
    retries: 2,
    backoff: 100,
    max_backoff: 1_000,
    concurrency: 4,
    max_pages: 1_000,
  } as SourceConfig;
}

/** The GraphQL body the client sends for a metrics poll of `limit` rows and no filter. */
export function metricsBody(limit: number): string {
  return JSON.stringify({ query: METRICS_QUERY, variables: { limit, where: {} } });
}

/**
 * The dispatcher of the bare baselines: sockets idle for a second are dropped on this side, so a baseline
 * request rarely lands on a keep-alive socket the server closed while the subject ran (5 s idle in node:http).
 */
export const bareAgent = new Agent({ keepAliveTimeout: 1_000, keepAliveMaxTimeout: 1_000 });

/** Bare baseline: one undici POST of the metrics query, body read as text. */
export async function bareMetricsText(sim: ChildSimulator, limit: number): Promise<string> {
  const res = await request(new URL('/yields/graphql', sim.url), {
    dispatcher: bareAgent,
    // A fresh connection: the subject may block this event loop for seconds, so the 1 s idle timer above
    // cannot be trusted to fire before a POST (never retried) is written to a socket the server is closing.
    reset: true,
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', 'x-api-key': sim.apiKey },
    body: metricsBody(limit),
  });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`bare metrics request: ${res.statusCode} ${text.slice(0, 200)}`);
  return text;
}

/** Bare baseline: every page of /api/v1/positions (500 a page), each JSON.parse'd (its rows handed to `onRows`); returns the row count. */
export async function barePositions(sim: Pick<ChildSimulator, 'url' | 'apiKey'>, onRows?: (rows: unknown[]) => void): Promise<{ rows: number; pages: number }> {
  let cursor: string | undefined;
  let rows = 0;
  let pages = 0;
  for (;;) {
    const url = new URL('/api/v1/positions', sim.url);
    url.searchParams.set('snapshot_mode', 'all');
    url.searchParams.set('limit', '500');
    if (cursor) url.searchParams.set('next_cursor', cursor);
    const res = await request(url, { dispatcher: bareAgent, headers: { accept: 'application/json', 'x-api-key': sim.apiKey } });
    const body = JSON.parse(await res.body.text()) as { data?: unknown[]; page_info?: { has_more?: boolean; next_cursor?: string | number } };
    pages++;
    rows += body.data?.length ?? 0;
    if (body.data) onRows?.(body.data);
    const next = body.page_info?.next_cursor;
    if (!body.page_info?.has_more || next === undefined) return { rows, pages };
    cursor = String(next);
  }
}
