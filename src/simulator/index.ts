/**
 * The data-service simulator: a real HTTP server on loopback implementing the whole interface
 * (positions-type endpoints and GraphQL on {base_url}; the catalog on it too, and on a second listener unless
 * `catalogPort` is null) over
 * seeded, deterministic data, with scenarios that move the world and fault injection.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { systemClock, type Clock } from '../clock.js';
import { silentLogger, type Logger } from '../log.js';
import { handleControl } from './control.js';
import { applyBodyFaults } from './fault-effects.js';
import { FaultController, type ActiveFault, type FaultSpec } from './faults.js';
import { parseEncoding, writeJson, type Encoding } from './encoding.js';
import { DEFAULT_NETWORKS } from './reference.js';
import { RequestLog, type RequestEntry } from './request-log.js';
import { errorResponse, groupOf, unauthorized, type SimResponse } from './responses.js';
import { routeBase } from './routes-base.js';
import { routeCatalog } from './routes-catalog.js';
import { getScenario } from './scenarios.js';
import { World } from './world.js';

export { FaultController, type FaultSpec, type ActiveFault } from './faults.js';
export { RequestLog, type RequestEntry } from './request-log.js';
export { World, SNAPSHOT_MODES, type SnapshotMode, type ListFilter } from './world.js';
export { scenarios, scenarioList, getScenario, type ScenarioInfo, type Scenario, type Effect, type TimelineEntry } from './scenarios.js';
export { DEFAULT_NETWORKS } from './reference.js';
export type { MetricsRecord, MarketStatic } from './markets.js';
export type { PositionRow, AssetRow, HoldingRow } from './positions.js';
export type { BenchmarkDay } from './benchmarks.js';
export { parseEncoding, describeEncoding, FAMILIES, PRESETS, type Encoding } from './encoding.js';

/** How to start a simulator; every field has a default. */
export interface SimulatorOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Port of {base_url}; default 0 (a free port). */
  port?: number;
  /**
   * Port of the second listener, {catalog_url}; default 0 (a free port). null: no second listener, {catalog_url} is
   * {base_url} (which answers the catalog paths either way: they never collide with its own).
   */
  catalogPort?: number | null;
  /** Default 1. */
  seed?: number;
  /** Default 40. */
  markets?: number;
  /** Default 300. */
  positions?: number;
  /** Default the 9 names of the interface document. */
  networks?: string[];
  /** Key required in x-api-key; null accepts anything. Default 'sim-key'. */
  apiKey?: string | null;
  /** Name from the scenario registry; default 'calm'. */
  scenario?: string;
  /** Scenario seconds last `timeScale` real seconds each (3600: the timeline's seconds become hours). Default 1. */
  timeScale?: number;
  /** Default the system clock. */
  clock?: Clock;
  /** ms; default clock.now() at start. */
  startedAt?: number;
  /**
   * How values are written (encoding.ts): an {@link Encoding}, or its text form (`chaos`, `units,times=iso`).
   * Default `mixed`: numbers sometimes as strings, times as s/ms/ISO. Chaos draws from `seed` unless it names one.
   */
  encoding?: Encoding | string;
  /** Shorthand for the two oldest encodings; `encoding` wins. */
  formats?: 'canonical' | 'mixed';
  /** Spacing of the historical GraphQL metrics rows, ms. Default 60 000. */
  sampleIntervalMs?: number;
  /** Most rows one GraphQL response carries. Default 50 000. */
  maxGraphqlRows?: number;
  /** How many recent requests the request log keeps in full. Default 500. */
  requestLogSize?: number;
  log?: Logger;
}

/** A running simulator. */
export interface Simulator {
  /** {base_url}: positions, assets, holdings, performance, both GraphQL paths, and /_sim control. */
  url: string;
  /** {catalog_url}: the catalog endpoints, on a second listener (or {base_url} when there is none). */
  catalogUrl: string;
  /** The key required in x-api-key, or null when any is accepted. */
  apiKey: string | null;
  faults: FaultController;
  requests: RequestLog;
  /** The generated truth, readable at any time. */
  world: World;
  /** How values are written now; assign to change it for the next requests (same world, other wire form). */
  encoding: Encoding;
  close(): Promise<void>;
}

const MAX_BODY = 1 << 20;
/** Every catalog path starts so; no path of {base_url} does. */
const CATALOG_PREFIX = '/api/catalog/';

function readBody(req: IncomingMessage): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) resolve(null);
      else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Starts both listeners and resolves once they accept connections. */
export async function startSimulator(opts: SimulatorOptions = {}): Promise<Simulator> {
  const clock = opts.clock ?? systemClock;
  const log = opts.log ?? silentLogger;
  const host = opts.host ?? '127.0.0.1';
  const apiKey = opts.apiKey === undefined ? 'sim-key' : opts.apiKey;
  const seed = opts.seed ?? 1;
  let encoding = typeof opts.encoding === 'object' ? opts.encoding : parseEncoding(opts.encoding ?? opts.formats ?? 'mixed', seed);
  const scenario = getScenario(opts.scenario ?? 'calm');
  const timeScale = opts.timeScale ?? 1;
  if (!(timeScale > 0)) throw new Error('timeScale must be positive');
  const world = new World({
    seed,
    markets: opts.markets ?? 40,
    positions: opts.positions ?? 300,
    networks: opts.networks ?? [...DEFAULT_NETWORKS],
    scenario,
    startedAt: opts.startedAt ?? clock.now(),
    timeScale,
  });
  const faults = new FaultController();
  const requests = new RequestLog(opts.requestLogSize ?? 500);
  const timers = new Set<NodeJS.Timeout>();
  let flakySeq = 0;

  const flakyFault = (now: number): ActiveFault | undefined => {
    const active = world.activeEffects('flaky', now)[0];
    if (!active) return undefined;
    const n = ++flakySeq;
    const e = active.effect;
    const spec: FaultSpec | undefined = n % e.every429 === 0 ? { status: 429, retryAfter: e.retryAfter } : n % e.every500 === 0 ? { status: 500 } : undefined;
    return spec && { id: 0, spec, remaining: 0, fired: 1 };
  };

  const handle = async (port: 'base' | 'catalog', req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://sim');
    const method = (req.method ?? 'GET').toUpperCase();
    const path = url.pathname;
    // {base_url} answers the catalog's paths too, so one port serves the whole interface.
    const listener = port === 'base' && path.startsWith(CATALOG_PREFIX) ? 'catalog' : port;
    const entry = requests.record({ at: clock.now(), listener, method, path, query: url.search.slice(1), headers: { ...req.headers } });
    const raw = await readBody(req);
    if (raw === null) return send(res, errorResponse(groupOf(listener, path), 413, 'body too large'), entry);
    let body: unknown;
    if (raw.trim() !== '') {
      try {
        body = JSON.parse(raw);
      } catch {
        body = undefined;
      }
    }
    if (listener === 'base' && path.startsWith('/_sim/')) return send(res, handleControl(method, path, raw, body, { faults, requests, world, clock }), entry);

    const now = clock.now();
    const fault = faults.take(method, path) ?? flakyFault(now);
    if (fault) entry.faultId = fault.id;
    const spec = fault?.spec;
    if (spec?.delayMs) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          timers.delete(t);
          resolve();
        }, spec.delayMs);
        timers.add(t);
      });
      if (res.destroyed || req.socket.destroyed) return;
    }
    const group = groupOf(listener, path);
    let out: SimResponse;
    if (spec && (spec.status !== undefined || spec.body !== undefined)) {
      out = spec.body !== undefined ? { status: spec.status ?? 200, body: spec.body } : errorResponse(group, spec.status as number, spec.status === 429 ? 'Too many requests; wait and retry' : undefined);
    } else {
      const key = req.headers['x-api-key'];
      if (apiKey !== null && key !== apiKey) out = unauthorized(group);
      else {
        const at = clock.now();
        const routed =
          listener === 'base'
            ? routeBase(method, path, url.searchParams, body, { world, nowMs: at, encoding, sampleIntervalMs: opts.sampleIntervalMs ?? 60_000, maxGraphqlRows: opts.maxGraphqlRows ?? 50_000, defaultLimit: 100, maxLimit: 500 })
            : routeCatalog(method, path, url.searchParams, { world, nowMs: at, encoding, defaultPerPage: 100 });
        out = routed ?? errorResponse(group, 404, `no route for ${method} ${path}`);
      }
      if (spec && out.status === 200) applyBodyFaults(out.body, spec, url.searchParams.get('next_cursor') ?? url.searchParams.get('page'));
    }
    if (spec?.retryAfter !== undefined) out.headers = { ...out.headers, 'retry-after': String(spec.retryAfter) };
    send(res, out, entry, spec?.truncate);
  };

  const send = (res: ServerResponse, out: SimResponse, entry: RequestEntry, truncate?: FaultSpec['truncate']) => {
    entry.status = out.status;
    log.debug('simulator_request', { method: entry.method, path: entry.path, status: out.status, fault: entry.faultId });
    const text = out.status === 204 ? '' : writeJson(out.body);
    const headers = { 'content-type': 'application/json; charset=utf-8', ...out.headers };
    if (truncate) {
      const full = Buffer.from(text);
      const half = full.subarray(0, Math.floor(full.length / 2));
      if (truncate === 'socket') {
        res.writeHead(out.status, { ...headers, 'content-length': String(full.length) });
        res.write(half, () => res.socket?.destroy());
        return;
      }
      res.writeHead(out.status, { ...headers, 'content-length': String(half.length) });
      res.end(half);
      return;
    }
    res.writeHead(out.status, { ...headers, 'content-length': String(Buffer.byteLength(text)) });
    res.end(text);
  };

  const make = (listener: 'base' | 'catalog') =>
    createServer((req, res) => {
      handle(listener, req, res).catch((err: unknown) => {
        log.error('simulator_request_failed', { err, path: req.url });
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify(errorResponse(groupOf(listener, req.url ?? '/'), 500, 'simulator failure').body));
      });
    });
  const listen = (server: Server, port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve((server.address() as AddressInfo).port);
      });
    });

  const base = make('base');
  const catalog = opts.catalogPort === null ? undefined : make('catalog');
  const basePort = await listen(base, opts.port ?? 0);
  let catalogPort = basePort;
  try {
    if (catalog) catalogPort = await listen(catalog, opts.catalogPort ?? 0);
  } catch (err) {
    base.close();
    throw err;
  }
  const urlHost = host.includes(':') ? `[${host}]` : host;
  const sim: Simulator = {
    url: `http://${urlHost}:${basePort}`,
    catalogUrl: `http://${urlHost}:${catalogPort}`,
    apiKey,
    faults,
    requests,
    world,
    get encoding() {
      return encoding;
    },
    set encoding(e: Encoding) {
      encoding = e;
    },
    close: async () => {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      await Promise.all(
        [base, ...(catalog ? [catalog] : [])].map(
          (s) =>
            new Promise<void>((resolve) => {
              s.close(() => resolve());
              s.closeAllConnections();
            }),
        ),
      );
    },
  };
  log.info('simulator_started', { url: sim.url, catalogUrl: sim.catalogUrl, scenario: scenario.name, markets: world.markets.length, positions: world.positions.length });
  return sim;
}
