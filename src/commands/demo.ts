/** `lookout demo`: the embedded simulator plus the daemon against it, with a built-in config — real alerts within a minute. */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseDuration } from '../config/duration.js';
import { loadConfigText } from '../config/load.js';
import { createLogger } from '../log.js';
import { startDaemon } from '../daemon.js';
import { startSimulator } from '../simulator/index.js';
import { demoConfigYaml } from './demo-config.js';
import type { Output } from './config-report.js';

/** Options of the demo command. */
export interface DemoOptions extends Output {
  duration?: string;
  scenario?: string;
  slackWebhook?: string;
  port?: string;
  /** `--db`: keep the database here (it is reused when it exists); default a temp file removed on exit. */
  db?: string;
  version?: string;
  /** Where alerts print (stdout by default). */
  stdout?: { write(text: string): unknown; isTTY?: boolean };
}

/** Runs the demo until `duration` passes or SIGINT/SIGTERM; returns the exit code. */
export async function runDemoCommand(o: DemoOptions): Promise<number> {
  const durationMs = o.duration ? parseDuration(o.duration) : undefined;
  if (o.duration && durationMs === undefined) {
    o.err(`lookout demo: invalid --duration '${o.duration}': write it like 45s or 2m`);
    return 1;
  }
  if (o.port !== undefined && !/^\d{1,5}$/.test(o.port)) {
    o.err(`lookout demo: invalid --port '${o.port}': a port number, e.g. 9465`);
    return 2;
  }
  const port = o.port ? Number(o.port) : await firstFreePort(9464, 20);
  // Ctrl-C while the demo is still starting stops it through the finally below too: Node's default would end the
  // process on the spot and leave the temp folder behind.
  let askStop = () => {};
  const stopAsked = new Promise<void>((resolve) => (askStop = resolve));
  process.once('SIGINT', askStop);
  process.once('SIGTERM', askStop);
  // Everything the demo opens is closed again whatever happens: the simulator's two listeners, the temp folder.
  const dir = o.db === undefined ? mkdtempSync(join(tmpdir(), 'lookout-demo-')) : undefined;
  const dbPath = dir === undefined ? resolve(o.db as string) : join(dir, 'lookout.db');
  let sim: Awaited<ReturnType<typeof startSimulator>> | undefined;
  try {
    sim = await startSimulator({ scenario: o.scenario ?? 'demo', seed: 1 });
    return await demo(o, sim, { dbPath, kept: dir === undefined }, port, durationMs, stopAsked);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    o.err(code === 'EADDRINUSE' ? `lookout demo: port ${port} is in use: --port N picks another` : `lookout demo: ${err instanceof Error ? err.message : String(err)}`);
    return 2;
  } finally {
    process.off('SIGINT', askStop);
    process.off('SIGTERM', askStop);
    await sim?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  }
}

async function demo(o: DemoOptions, sim: Awaited<ReturnType<typeof startSimulator>>, db: { dbPath: string; kept: boolean }, port: number, durationMs: number | undefined, stopAsked: Promise<void>): Promise<number> {
  const text = demoConfigYaml({
    baseUrl: sim.url,
    catalogUrl: sim.catalogUrl,
    apiKey: sim.apiKey ?? 'demo',
    dbPath: db.dbPath,
    listen: `127.0.0.1:${port}`,
    ...(o.slackWebhook ? { slackWebhook: o.slackWebhook } : {}),
  });
  const config = loadConfigText('lookout demo', text, { dir: dirname(db.dbPath), env: {} });
  // Text, never JSON, among the demo's human lines.
  const log = createLogger({ level: 'warn', format: 'text', secrets: () => config.secrets, base: { service: 'lookout' } });
  const daemon = await startDaemon({ config, log, ...(o.version ? { version: o.version } : {}), ...(o.stdout ? { consoleOut: o.stdout } : {}) });
  const url = daemon.url ?? `http://127.0.0.1:${port}`;
  o.out(
    [
      'lookout demo — the data-service simulator is running the "' + (o.scenario ?? 'demo') + '" scenario; alerts print below.',
      `  status page  ${url}/`,
      `  metrics      ${url}/metrics`,
      `  alerts API   ${url}/api/alerts`,
      `  simulator    ${sim.url} (catalog ${sim.catalogUrl})`,
      `  database     ${config.storage.path} (${db.kept ? 'kept' : 'removed on exit; --db FILE keeps it'})`,
      durationMs ? `  stops by itself after ${o.duration}; Ctrl-C stops it earlier.` : '  Ctrl-C stops it.',
      '',
    ].join('\n'),
  );

  await new Promise<void>((resolve) => {
    const timer = durationMs ? setTimeout(resolve, durationMs) : undefined;
    void stopAsked.then(() => {
      clearTimeout(timer);
      resolve();
    });
  });
  await daemon.stop();
  o.out('lookout demo: stopped.');
  return 0;
}

/** The first port from `start` that can be bound on 127.0.0.1 (the demo's metrics default 9464 may be taken). */
export async function firstFreePort(start: number, tries: number): Promise<number> {
  for (let p = start; p < start + tries; p++) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(false));
      s.listen(p, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (ok) return p;
  }
  return 0;
}
