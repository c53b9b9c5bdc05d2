/**
 * `lookout run` loads its config — at start-up and on every reload — in a process of its own (src/config/child-load.ts),
 * so the daemon's process never loads the config's parser and schema libraries (yaml, zod: B6s). Seen from outside:
 * which modules the daemon's process loads (a module hook given through NODE_OPTIONS, which its loaders do not take),
 * preloads the daemon is given, and a loader held or killed through a config file that is a FIFO
 * (test/fixtures/config-loader/hold.ts).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { expect, it } from 'vitest';
import { DaemonProcess, until } from './fixtures/daemon/harness.js';
import { daemonScope } from './fixtures/daemon/scope.js';
import { configObject, writeAtomic } from './fixtures/daemon/world.js';
import { gone, HeldConfig, loaderPids } from './fixtures/config-loader/hold.js';

const { dirs, startSim } = daemonScope();

const fixture = (name: string) => join(import.meta.dirname, 'fixtures', 'config-loader', name);
/** The environment of a daemon given `opts` in NODE_OPTIONS as well. */
const withNodeOptions = (opts: string, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv => ({ ...env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} ${opts}`.trim() });
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

/** Sends SIGHUP and waits for the reload's outcome line (the `n`-th of its kind). */
async function reload(daemon: DaemonProcess, outcome: 'reloaded' | 'reload_rejected', n = 1) {
  daemon.signal('SIGHUP');
  return daemon.waitForLog((l) => l.msg === outcome, 10_000, outcome, n);
}

it("start-up and every reload load the config outside the daemon's process: it never imports nor requires yaml, zod, config/load or check", async () => {
  const { dir, file, good } = await world();
  const log = join(dir, 'resolved.log');
  const { daemon } = await DaemonProcess.start(file, withNodeOptions(`--import ${fixture('resolve-log.mjs')}`, { RESOLVE_LOG: log }));
  await reload(daemon, 'reloaded');
  writeFileSync(file, INVALID(good));
  const rejected = await reload(daemon, 'reload_rejected');
  // The schema judged the new config (zod's unknown key), somewhere else than in the daemon's process.
  expect(JSON.stringify(rejected.problems)).toContain('retension');
  writeFileSync(file, good);
  await reload(daemon, 'reloaded', 2);
  daemon.signal('SIGTERM');
  expect(await daemon.waitExit(15_000)).toEqual({ code: 0, signal: null });

  const lines = readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => l.split('\t') as [string, string, string]);
  // The daemon's process alone ran the hook: its loaders take no preload.
  expect(new Set(lines.map(([pid]) => pid))).toEqual(new Set([String(daemon.proc.pid)]));
  const imported = lines.filter(([, , parent]) => parent !== 'require').map(([, url]) => url);
  const required = lines.filter(([, , parent]) => parent === 'require').map(([, f]) => f);
  expect(imported.some((u) => u.endsWith('/dist/commands/run.js'))).toBe(true);
  expect(required.length).toBeGreaterThan(0);
  const parser = (files: string[]) => ({
    yaml: files.some((f) => /[\\/]node_modules[\\/]yaml[\\/]/.test(f)),
    zod: files.some((f) => /[\\/]node_modules[\\/]zod[\\/]/.test(f)),
    load: files.filter((f) => /[\\/]dist[\\/](config[\\/](load|load-entry)|commands[\\/]check)\.js$/.test(f)),
  });
  expect({ imported: parser(imported), required: parser(required) }).toEqual({
    imported: { yaml: false, zod: false, load: [] },
    required: { yaml: false, zod: false, load: [] },
  });
}, 45_000);

it("the daemon's preloads do not run in its config loaders: one that keeps a handle open hangs neither start-up nor reloads", async () => {
  const { dir, file, good } = await world();
  const marker = join(dir, 'preloaded');
  const opts = `--require ${fixture('preload.cjs')} --import ${fixture('preload.mjs')}`;
  // Started well within the loader's 30 s timeout, which a loader kept alive by the interval would run into.
  const { daemon } = await DaemonProcess.start(file, withNodeOptions(opts, { PRELOAD_MARKER: marker }), 15_000);
  await reload(daemon, 'reloaded');
  writeFileSync(file, INVALID(good));
  await reload(daemon, 'reload_rejected');
  writeAtomic(file, good);
  await daemon.waitForLog((l) => l.msg === 'reloaded', 10_000, 'reloaded after the edit', 2);
  const pid = daemon.proc.pid;
  expect(readFileSync(marker, 'utf8').split('\n').filter(Boolean).sort()).toEqual([`${pid}\timport`, `${pid}\trequire`]);
}, 45_000);

it('a config loader killed at start-up: exit 2, one line naming the file, no secret, nothing started', async () => {
  const { dir, file, good } = await world();
  const secret = 'sk-live-9d3e-secret';
  const held = new HeldConfig(file);
  const daemon = DaemonProcess.spawn(file);
  await held.loaderReading(10_000, () => daemon.diag());
  // The loader has the config and its secret, and waits for the end of the file.
  held.write(good.replace('api_key: sim-key', `api_key: ${secret}`));
  const [loader] = loaderPids(daemon.proc.pid!);
  process.kill(loader!, 'SIGKILL');
  const exit = await daemon.waitExit(15_000);
  held.release();
  expect(exit, daemon.diag()).toEqual({ code: 2, signal: null });
  expect(daemon.stderr.split('\n').filter(Boolean), daemon.diag()).toEqual([`lookout: cannot load config ${file}: the config loader was killed by SIGKILL (E_CONFIG_LOADER)`]);
  expect(daemon.stderr + daemon.stdout).not.toContain(secret);
  expect(existsSync(join(dir, 'lookout.db'))).toBe(false);
}, 30_000);

it('a config loader killed on reload: rejected with an error naming the file, the old config keeps polling; the next reload applies', async () => {
  const { file, good } = await world();
  const { daemon } = await DaemonProcess.start(file);
  // The FIFO renamed over the config starts a reload (the watcher), whose loader waits on it.
  const held = new HeldConfig(file);
  await held.loaderReading(10_000, () => daemon.diag());
  const [loader] = loaderPids(daemon.proc.pid!);
  process.kill(loader!, 'SIGKILL');
  const line = await daemon.waitForLog((l) => l.msg === 'reload_rejected', 10_000, 'reload_rejected');
  held.release();
  expect(line).toMatchObject({ level: 'error', why: `file changed: ${file}`, problems: [`ConfigLoaderError: cannot load config ${file}: the config loader was killed by SIGKILL`] });
  await daemon.waitForPolls(2, 10_000);
  writeAtomic(file, good);
  await daemon.waitForLog((l) => l.msg === 'reloaded', 10_000, 'reloaded once the loader lives');
  expect(daemon.running).toBe(true);
}, 45_000);

it('a SIGHUP while the config loads at start-up does not kill the daemon: it reloads once started', async () => {
  const { file, good } = await world();
  const held = new HeldConfig(file);
  const daemon = DaemonProcess.spawn(file);
  await held.loaderReading(10_000, () => daemon.diag());
  daemon.signal('SIGHUP');
  held.write(good);
  held.release();
  await daemon.waitForLog((l) => l.msg === 'started', 15_000, 'started');
  // The SIGHUP's reload reads the FIFO again.
  await held.loaderReading(10_000, () => daemon.diag());
  held.write(good);
  held.release();
  await daemon.waitForLog((l) => l.msg === 'reloaded', 10_000, 'the reload the SIGHUP asked for');
  expect(daemon.running).toBe(true);
}, 30_000);

it("a SIGTERM while a reload's loader hangs: the loader is killed, the daemon exits 0 at once, nothing rejected", async () => {
  const { file } = await world();
  const { daemon } = await DaemonProcess.start(file);
  const held = new HeldConfig(file);
  await held.loaderReading(10_000, () => daemon.diag());
  const [loader] = loaderPids(daemon.proc.pid!);
  expect(loader).toBeDefined();
  daemon.signal('SIGTERM');
  try {
    // Well within the loader's 30 s timeout, which the stop would otherwise wait for.
    const exit = await daemon.waitExit(10_000);
    expect(exit, daemon.diag()).toEqual({ code: 0, signal: null });
    expect(daemon.logs().filter((l) => l.msg === 'reload_rejected' || l.msg === 'reload_failed')).toEqual([]);
    // Gone while the FIFO is still held: killed, not ended by reading the end of its file.
    await until('the loader to be gone', () => (gone(loader!) ? true : undefined), 5_000);
  } finally {
    held.release();
  }
}, 30_000);
