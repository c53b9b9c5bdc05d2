/**
 * `lookout demo` leaves nothing behind: each run gets its own TMPDIR, which must be empty again once the demo has
 * exited — after a normal run, after a busy --port, after Ctrl-C during start-up, and with --db (which keeps the database where asked, and makes
 * no temp folder at all).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, watch } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { freePort } from './fixtures/daemon/harness.js';

const dirs: string[] = [];
const fresh = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Runs the built CLI to its exit (killed at `ms`) with TMPDIR set; its output and exit code. */
function cli(args: string[], env: Record<string, string>, ms: number): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['dist/cli.js', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), ms);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

describe('lookout demo cleans up after itself', () => {
  it('exits 2 with one line on a busy --port and leaves no temp folder', async () => {
    expect(existsSync('dist/cli.js'), 'run `npm run build` first (npm test does)').toBe(true);
    const busy: Server = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    const port = (busy.address() as { port: number }).port;
    const tmp = fresh('lookout-demo-tmp-');
    try {
      const r = await cli(['demo', '--port', String(port), '--duration', '20s'], { TMPDIR: tmp }, 30_000);
      expect(r.code).toBe(2);
      expect(r.err.trim().split('\n')).toEqual([`lookout demo: port ${port} is in use: --port N picks another`]);
      expect(readdirSync(tmp)).toEqual([]);
    } finally {
      await new Promise<void>((r) => busy.close(() => r()));
    }
  }, 40_000);

  it('removes its temp folder after a normal run', async () => {
    const tmp = fresh('lookout-demo-tmp-');
    const r = await cli(['demo', '--port', String(await freePort()), '--duration', '3s'], { TMPDIR: tmp }, 30_000);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/database\s+\S+lookout\.db \(removed on exit; --db FILE keeps it\)/);
    expect(readdirSync(tmp)).toEqual([]);
  }, 40_000);

  it('removes its temp folder when stopped with Ctrl-C while still starting', async () => {
    const tmp = fresh('lookout-demo-tmp-');
    const child = spawn(process.execPath, ['dist/cli.js', 'demo', '--port', String(await freePort()), '--duration', '20s'], {
      env: { ...process.env, TMPDIR: tmp },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    // One SIGINT the moment the temp folder appears: before the simulator and the daemon are up.
    const watcher = watch(tmp, () => {
      watcher.close();
      child.kill('SIGINT');
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    try {
      expect(await exited).toBe(0);
    } finally {
      clearTimeout(timer);
      watcher.close();
    }
    expect(out).toMatch(/lookout demo: stopped\./);
    expect(readdirSync(tmp)).toEqual([]);
  }, 40_000);

  it('keeps its database with --db, with the polls it ran, and makes no temp folder', async () => {
    const tmp = fresh('lookout-demo-tmp-');
    const db = join(fresh('lookout-demo-db-'), 'kept.db');
    const r = await cli(['demo', '--port', String(await freePort()), '--duration', '3s', '--db', db], { TMPDIR: tmp }, 30_000);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain(`database     ${db} (kept)`);
    expect(readdirSync(tmp)).toEqual([]);
    const conn = new Database(db, { readonly: true });
    try {
      expect((conn.prepare('SELECT count(*) AS n FROM poll_runs').get() as { n: number }).n).toBeGreaterThan(0);
    } finally {
      conn.close();
    }
  }, 40_000);
});
