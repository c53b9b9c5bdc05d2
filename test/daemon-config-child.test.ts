/**
 * `lookout run` loads its config — at start-up and on every reload — in a process of its own (src/config/child-load.ts),
 * so the daemon's process never loads the config's parser and schema libraries (yaml, zod: B6s). Seen from outside,
 * with module hooks given through NODE_OPTIONS (test/fixtures/config-loader/): which modules each process resolves,
 * and a loader that gets killed.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import YAML from 'yaml';
import { expect, it } from 'vitest';
import { DaemonProcess, until } from './fixtures/daemon/harness.js';
import { daemonScope } from './fixtures/daemon/scope.js';
import { configObject } from './fixtures/daemon/world.js';

const { dirs, startSim } = daemonScope();

const fixture = (name: string) => pathToFileURL(join(import.meta.dirname, 'fixtures', 'config-loader', name)).href;
/** The environment of a daemon whose node (and every node it starts) first imports `hook`. */
const withHook = (hook: string, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv => ({ ...env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${fixture(hook)}`.trim() });
const INVALID = (good: string) => good.replace('retention: 1d', 'retention: 1d\n  retension: 2d');

/** A valid config in a new dir, on a calm simulator. */
async function world() {
  const sim = await startSim({ scenario: 'calm' });
  const dir = dirs.make();
  const file = join(dir, 'lookout.yaml');
  const good = YAML.stringify(configObject({ sim, db: join(dir, 'lookout.db'), apiKey: 'sim-key' }));
  writeFileSync(file, good);
  return { dir, file, good };
}

/**
 * Runs the daemon through a start-up, a valid reload and a rejected one, every module resolution logged; returns
 * the URLs the daemon's own process resolved, and those of its config loaders by process.
 */
async function resolvedAcrossReloads(): Promise<{ daemon: { url: string; parent: string }[]; loaders: Map<string, string[]> }> {
  const { dir, file, good } = await world();
  const log = join(dir, 'resolved.log');
  const { daemon } = await DaemonProcess.start(file, withHook('resolve-log.mjs', { RESOLVE_LOG: log }));
  daemon.signal('SIGHUP');
  await daemon.waitForLog((l) => l.msg === 'reloaded', 10_000, 'reloaded after SIGHUP');
  writeFileSync(file, INVALID(good));
  daemon.signal('SIGHUP');
  await daemon.waitForLog((l) => l.msg === 'reload_rejected', 10_000, 'reload_rejected after an invalid edit');
  const pid = String(daemon.proc.pid);
  const lines = readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => l.split('\t') as [string, string, string]);
  const loaders = new Map<string, string[]>();
  for (const [p, url] of lines) if (p !== pid) loaders.set(p, [...(loaders.get(p) ?? []), url]);
  return { daemon: lines.filter(([p]) => p === pid).map(([, url, parent]) => ({ url, parent })), loaders };
}

const pkg = (urls: string[], name: string) => urls.some((u) => u.includes(`/node_modules/${name}/`));

it('start-up and every reload load the config in a loader process: run.js imports neither config/load nor check', async () => {
  const { daemon, loaders } = await resolvedAcrossReloads();
  const urls = daemon.map((r) => r.url);
  expect(urls.some((u) => u.endsWith('/dist/commands/run.js'))).toBe(true);
  expect(daemon.filter((r) => r.parent.endsWith('/dist/commands/run.js') && /\/dist\/(config\/load|commands\/check)\.js$/.test(r.url))).toEqual([]);
  expect(urls.filter((u) => /\/dist\/(commands\/check|config\/load-entry)\.js$/.test(u))).toEqual([]);
  // One loader for the start and one for each reload, each with the YAML parser and zod (the hook sees them).
  const loaderRuns = [...loaders.values()].filter((u) => u.some((x) => x.endsWith('/dist/config/load.js')));
  expect(loaderRuns).toHaveLength(3);
  for (const u of loaderRuns) expect([pkg(u, 'yaml'), pkg(u, 'zod')]).toEqual([true, true]);
}, 45_000);

// With the daemon's own module graph (src/daemon.ts) free of run-time zod and yaml imports as well
// (test/daemon-without-parser.test.ts), the daemon's process never loads the config's parser.
it("the daemon's process never loads yaml, zod or config/load, at start-up or on reload", async () => {
  const { daemon } = await resolvedAcrossReloads();
  const urls = daemon.map((r) => r.url);
  expect({ yaml: pkg(urls, 'yaml'), zod: pkg(urls, 'zod'), load: urls.some((u) => u.endsWith('/dist/config/load.js')) }).toEqual({ yaml: false, zod: false, load: false });
}, 45_000);

it('a config loader killed at start-up: exit 2, one line naming the file, no secret, nothing started', async () => {
  const { dir, file } = await world();
  const secret = 'sk-live-9d3e-secret';
  writeFileSync(file, readFileSync(file, 'utf8').replace('api_key: sim-key', `api_key: ${secret}`));
  const marker = join(dir, 'kill');
  writeFileSync(marker, '');
  const daemon = DaemonProcess.spawn(file, withHook('kill-loader.mjs', { KILL_LOADER_IF: marker }));
  const exit = await daemon.waitExit(15_000);
  expect(exit, daemon.diag()).toEqual({ code: 2, signal: null });
  expect(daemon.stderr.split('\n').filter(Boolean), daemon.diag()).toEqual([`lookout: cannot load config ${file}: the config loader was killed by SIGKILL (E_CONFIG_LOADER)`]);
  expect(daemon.stderr + daemon.stdout).not.toContain(secret);
  expect(existsSync(join(dir, 'lookout.db'))).toBe(false);
}, 30_000);

it('a config loader killed on reload: rejected with an error naming the file, the old config keeps polling; the next reload applies', async () => {
  const { dir, file } = await world();
  const marker = join(dir, 'kill');
  const { daemon } = await DaemonProcess.start(file, withHook('kill-loader.mjs', { KILL_LOADER_IF: marker }));
  writeFileSync(marker, '');
  daemon.signal('SIGHUP');
  const line = await daemon.waitForLog((l) => l.msg === 'reload_rejected', 10_000, 'reload_rejected');
  expect(line).toMatchObject({ level: 'error', why: 'SIGHUP', problems: [`ConfigLoaderError: cannot load config ${file}: the config loader was killed by SIGKILL`] });
  await daemon.waitForPolls(2, 10_000);
  rmSync(marker);
  daemon.signal('SIGHUP');
  await daemon.waitForLog((l) => l.msg === 'reloaded', 10_000, 'reloaded once the loader lives');
  expect(daemon.running).toBe(true);
}, 45_000);

it('a SIGHUP while the config loads at start-up does not kill the daemon: it reloads once started', async () => {
  const { dir, file } = await world();
  const hold = join(dir, 'hold');
  writeFileSync(hold, '');
  const daemon = DaemonProcess.spawn(file, withHook('hold-loader.mjs', { HOLD_LOADER_WHILE: hold }));
  await until('the config loader to start', () => (existsSync(`${hold}.seen`) ? true : undefined), 10_000, () => daemon.diag());
  daemon.signal('SIGHUP');
  rmSync(hold);
  await daemon.waitForLog((l) => l.msg === 'started', 15_000, 'started');
  await daemon.waitForLog((l) => l.msg === 'reloaded', 10_000, 'the reload the SIGHUP asked for');
  expect(daemon.running).toBe(true);
}, 30_000);
