/**
 * README "Try a backtest in two minutes", run as written: each `lookout …` line of the section, read out of README.md,
 * as a child process of the built CLI in an empty folder. The one change: `simulate` gets a free `--port` (8080 may
 * be taken here) and `run` a free LOOKOUT_LISTEN, which the printed config reads. The backtest must list fired
 * alerts of every rule kind; `run` must carry on into the same database.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { freePort } from './fixtures/daemon/harness.js';
import { readmeCommands, type ReadmeCommand } from './readme-commands.js';

const CLI = resolve('dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'lookout-first-backtest-'));
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A started child process of the CLI in `dir`, with what it has printed so far. */
function start(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: dir, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const io = { out: '', err: '' };
  child.stdout!.on('data', (d: Buffer) => (io.out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (io.err += d.toString()));
  const exited = new Promise<number | null>((res) => child.once('exit', (code) => res(code)));
  return { child, io, exited };
}

/** Resolves once `ok()` holds, polled every 100 ms; rejects with `what()` at the deadline. */
async function until(ok: () => boolean, ms: number, what: () => string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Runs a command to its end (killed at `ms`). */
async function finish(args: string[], ms: number, env: Record<string, string> = {}) {
  const p = start(args, env);
  const timer = setTimeout(() => p.child.kill('SIGKILL'), ms);
  const code = await p.exited;
  clearTimeout(timer);
  return { code, ...p.io };
}

const pollRuns = (db: string): number => {
  const conn = new Database(db, { readonly: true, fileMustExist: true });
  try {
    return (conn.prepare('SELECT count(*) AS n FROM poll_runs').get() as { n: number }).n;
  } finally {
    conn.close();
  }
};

describe('README: Try a backtest in two minutes', () => {
  it('runs as written: a printed config, a week of history, a backtest with fired alerts of every kind, then run carries on', async () => {
    expect(existsSync(CLI), 'run `npm run build` first (npm test does)').toBe(true);
    const commands = readmeCommands('Try a backtest in two minutes');
    const kinds = commands.map((c) => c.args[0]);
    expect(kinds, commands.map((c) => c.line).join('\n')).toEqual(['simulate', 'simulate', 'backtest', 'run']);
    const [printConfig, history, backtest, run] = commands as [ReadmeCommand, ReadmeCommand, ReadmeCommand, ReadmeCommand];
    const port = String(await freePort());

    // 1. the config, to the file the README redirects it to
    expect(printConfig.stdoutTo).toBeDefined();
    const printed = await finish([...printConfig.args, '--port', port], 20_000);
    expect(printed.code, printed.err).toBe(0);
    writeFileSync(join(dir, printConfig.stdoutTo!), printed.out);
    const db = /storage:\s*\n\s*path: "([^"]+)"/.exec(printed.out)?.[1] ?? '';
    expect(db).toBe(join(dir, 'lookout.db'));

    // 2. the simulator with its history; it keeps serving
    const sim = start([...history.args, '--port', port]);
    await until(() => /history written/.test(sim.io.err) || sim.child.exitCode !== null, 150_000, () => `the history; so far:\n${sim.io.err}`);
    expect(sim.io.err).toMatch(/simulator: history written: \d+ poll runs, \d+ readings/);
    expect(sim.io.err).not.toMatch(/failed/);
    await until(() => /simulator: base_url=/.test(sim.io.out), 10_000, () => `the banner; so far:\n${sim.io.out}`);
    expect(sim.io.out).toContain(`base_url=http://127.0.0.1:${port} catalog_url=http://127.0.0.1:${port}`);
    const stored = pollRuns(db);

    // 3. the backtest, as written: every rule kind of the printed config fired in the week
    const bt = await finish(backtest.args, 60_000);
    expect(bt.code, bt.err).toBe(0);
    const summary = bt.out.slice(bt.out.indexOf('== summary'));
    const fired = (rule: string) => Number(new RegExp(`^${rule}\\s+(\\d+)`, 'm').exec(summary)?.[1] ?? 0);
    for (const rule of ['utilization-critical', 'utilization-extreme', 'borrow-apy-jump', 'oracle-lag', 'price-deviation', 'unverified-position', 'benchmark-stale']) {
      expect(fired(rule), `${rule} in\n${summary}`).toBeGreaterThan(0);
    }
    expect(bt.out).toMatch(/== episodes ==/);

    // 4. run carries on into the same database, against the simulator, and stops cleanly
    const listen = `127.0.0.1:${await freePort()}`;
    const daemon = start(run.args, { LOOKOUT_LISTEN: listen });
    await until(() => pollRuns(db) > stored + 3 || daemon.child.exitCode !== null, 30_000, () => `new poll runs; stderr:\n${daemon.io.err}`);
    expect(daemon.child.exitCode).toBeNull();
    const ready = await fetch(`http://${listen}/readyz`, { signal: AbortSignal.timeout(5_000) });
    expect(ready.status).toBe(200);
    daemon.child.kill('SIGINT');
    expect(await daemon.exited).toBe(0);

    sim.child.kill('SIGINT');
    expect(await sim.exited).toBe(0);
    // Nothing but the files the README names.
    expect(readdirSync(dir).filter((f) => !/^lookout\.db(-wal|-shm)?$/.test(f)).sort()).toEqual([printConfig.stdoutTo!]);
  }, 240_000);
});
