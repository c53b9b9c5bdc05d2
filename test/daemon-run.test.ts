/**
 * `lookout run` as a real child process against the simulator: it polls into SQLite, serves /metrics, and stops
 * cleanly on SIGTERM; an invalid config stops it before anything opens or listens.
 */
import { existsSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { DaemonProcess, freePort, getJson, getText, listening, sample, until } from './fixtures/daemon/harness.js';
import { daemonScope } from './fixtures/daemon/scope.js';
import { configObject, utilRule, writeConfig } from './fixtures/daemon/world.js';
import { MARKET_FAMILIES, parseScrape } from './metrics-fixtures.js';
import { openStore } from '../src/store/index.js';
import { market } from './store-helpers.js';

const { dirs, startSim, spikingSim, startSlack } = daemonScope();

describe('lookout run', () => {
  beforeAll(() => {
    // A clear message instead of a spawn error when the build is missing.
    if (!existsSync(join(import.meta.dirname, '..', 'dist', 'cli.js'))) throw new Error('dist/cli.js is missing: run `npm run build`');
  });

  it('polls the simulator into SQLite, serves a market’s utilization on /metrics, and exits 0 on SIGTERM with the DB closed cleanly', async () => {
    const sim = await startSim({ scenario: 'calm' });
    const dir = dirs.make();
    const db = join(dir, 'lookout.db');
    const file = writeConfig(join(dir, 'lookout.yaml'), { sim, db });
    const { daemon, url } = await DaemonProcess.start(file);
    await daemon.waitForPolls(2, 15_000);

    const market = sim.market(0);
    const metrics = await until('the utilization of market #0 on /metrics', async () => sample(await getText(`${url}/metrics`), 'lookout_market_utilization_ratio', { market_id: market }), 10_000, () => daemon.diag());
    expect(metrics).toBeGreaterThanOrEqual(0);
    expect(metrics).toBeLessThanOrEqual(1);
    const ready = await getJson<{ status?: string }>(`${url}/readyz`);
    expect(ready).toBeTruthy();
    const polls = await getJson<Array<{ name: string; ok: boolean; rows: number }>>(`${url}/api/polls`);
    expect(polls).toEqual([expect.objectContaining({ name: 'markets', ok: true, rows: 40 })]);

    daemon.signal('SIGTERM');
    const exit = await daemon.waitExit(10_000);
    expect(exit, daemon.diag()).toEqual({ code: 0, signal: null });
    expect(daemon.logs().map((l) => l.msg)).toContain('stopped');
    const errors = daemon.logs().filter((l) => l.level === 'error');
    expect(errors, daemon.diag()).toEqual([]);
    // Every stderr line is a JSON log line: no stack trace, no stray text.
    expect(daemon.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('{')), daemon.diag()).toEqual([]);

    // Closed cleanly: the last connection checkpointed the WAL away; the file opens read-only and is intact.
    const wal = `${db}-wal`;
    expect(existsSync(wal) ? statSync(wal).size : 0).toBe(0);
    const conn = new Database(db, { readonly: true, fileMustExist: true });
    try {
      expect(conn.pragma('integrity_check', { simple: true })).toBe('ok');
      // The entities a poll returned last (schema 10), by kind and name as history names them.
      const current = `SELECT count(*) AS n FROM latest_entities l JOIN history_entities e ON e.id = l.entity WHERE json_extract(e.value, '$.kind') = 'market'`;
      const latest = conn.prepare(current).get() as { n: number };
      expect(latest.n).toBe(40);
      const history = conn.prepare(`SELECT count(*) AS n FROM reading_history`).get() as { n: number };
      expect(history.n).toBeGreaterThanOrEqual(40);
      const runs = conn.prepare(`SELECT count(*) AS n FROM poll_runs WHERE ok = 1`).get() as { n: number };
      expect(runs.n).toBeGreaterThanOrEqual(2);
      const stored = conn.prepare(`${current} AND json_extract(e.value, '$.entity') = ?`).get(market) as { n: number };
      expect(stored.n).toBe(1);
    } finally {
      conn.close();
    }
  }, 40_000);

  it('SIGTERM while a SIGHUP reload waits for a slow poll: exits 0, and nothing runs after `stopped`', async () => {
    const sim = await startSim({ scenario: 'calm' });
    const dir = dirs.make();
    const file = writeConfig(join(dir, 'lookout.yaml'), { sim, db: join(dir, 'lookout.db') });
    const { daemon } = await DaemonProcess.start(file);
    await daemon.waitForPolls(1, 15_000);
    // The next poll hangs (until the 2 s request timeout): a reload must wait for it.
    const fault = sim.sim.faults.add({ path: '/yields/graphql', delayMs: 5_000, times: 1_000 });
    await until('a poll in flight', () => (sim!.sim.faults.fired(fault) >= 1 ? true : undefined), 10_000, () => daemon.diag());
    daemon.signal('SIGHUP');
    await daemon.waitForLog((l) => l.msg === 'reloading', 5_000, 'the reload to begin');
    daemon.signal('SIGTERM');
    const exit = await daemon.waitExit(15_000);
    expect(exit, daemon.diag()).toEqual({ code: 0, signal: null });
    const msgs = daemon.logs().map((l) => l.msg);
    // The last word is `stopped`: no reload finishing, no poll, no error after it.
    expect(msgs.at(-1), daemon.diag()).toBe('stopped');
    expect(daemon.logs().filter((l) => l.level === 'error'), daemon.diag()).toEqual([]);
    const conn = new Database(join(dir, 'lookout.db'), { readonly: true, fileMustExist: true });
    try {
      expect(conn.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      conn.close();
    }
  }, 40_000);

  it('SIGTERM while the service never answers a poll and Slack never answers a post: exits 0 before `docker stop` would SIGKILL it (10 s)', async () => {
    const sim = await spikingSim();
    const slack = await startSlack();
    slack.respond(200, { hang: true });
    const dir = dirs.make();
    const input = { sim, db: join(dir, 'lookout.db'), rules: [utilRule('util-high', sim.market(0))], notifiers: { slack: { type: 'slack', webhook_url: slack.url, timeout: '60s' } } };
    const cfg = configObject(input) as { source: Record<string, unknown> };
    // Production-like patience: 10 s per request, 3 retries.
    Object.assign(cfg.source, { timeout: '10s', retries: 3 });
    const file = writeConfig(join(dir, 'lookout.yaml'), cfg);
    const { daemon } = await DaemonProcess.start(file);
    await slack.waitFor('a post in flight', (p) => p.length >= 1, 15_000, () => daemon.diag());
    const fault = sim.sim.faults.add({ path: '/yields/graphql', delayMs: 60_000, times: 1_000 });
    await until('a poll in flight', () => (sim!.sim.faults.fired(fault) >= 1 ? true : undefined), 10_000, () => daemon.diag());
    daemon.signal('SIGTERM');
    // Not a timing assert: the stop sequence shows what bounds it — the poll in flight (which would wait 10 s × 3
    // retries) is aborted after a 3 s grace, the post in flight after 3 s more, well inside Docker's 10 s.
    const exit = await daemon.waitExit(30_000);
    expect(exit, daemon.diag()).toEqual({ code: 0, signal: null });
    const stopLines = daemon.logs().filter((l) => (l.msg ?? '').startsWith('stop'));
    expect(stopLines, daemon.diag()).toEqual([
      expect.objectContaining({ msg: 'stopping' }),
      expect.objectContaining({ msg: 'stop_aborting_polls', polls: ['markets'], grace_ms: 3_000 }),
      expect.objectContaining({ msg: 'stop_aborting_deliveries', notifiers: ['slack'], grace_ms: 3_000 }),
      expect.objectContaining({ msg: 'stopped' }),
    ]);
    expect(daemon.logs().at(-1)?.msg).toBe('stopped');
    // The post cut short is kept: it goes out after the restart.
    const db = new Database(input.db, { readonly: true });
    try {
      const pending = db.prepare(`SELECT COUNT(*) AS n FROM notify_messages WHERE status != 'sent'`).get() as { n: number };
      expect(pending.n).toBeGreaterThanOrEqual(1);
    } finally {
      db.close();
    }
  }, 60_000);

  it('/readyz answers 503 "database is not writable" while another connection holds the write lock, and 200 again once it lets go', async () => {
    const sim = await startSim({ scenario: 'calm' });
    const dir = dirs.make();
    const db = join(dir, 'lookout.db');
    const file = writeConfig(join(dir, 'lookout.yaml'), { sim, db });
    const { daemon, url } = await DaemonProcess.start(file);
    await daemon.waitForPolls(1, 15_000);
    expect(await readyz(url)).toEqual({ status: 200, body: { status: 'ready' } });

    // A second connection to the same file takes the write lock. The daemon's own writes (a poll's transaction) now
    // wait out their busy timeout, blocking its event loop for seconds: hence the long per-request timeout of `readyz`.
    const other = new Database(db, { fileMustExist: true, timeout: 10_000 });
    try {
      other.exec('BEGIN IMMEDIATE');
      const locked = await until('/readyz to answer 503', async () => {
        const r = await readyz(url);
        return r.status === 503 ? r : undefined;
      }, 30_000, () => daemon.diag(), 200);
      expect(locked.body).toEqual({ error: 'not_ready', message: 'database is not writable' });
    } finally {
      if (other.inTransaction) other.exec('ROLLBACK');
      other.close();
    }

    await until('/readyz to answer 200 again', async () => ((await readyz(url)).status === 200 ? true : undefined), 30_000, () => daemon.diag(), 200);
    expect(await readyz(url)).toEqual({ status: 200, body: { status: 'ready' } });
    // It writes again: polls succeed after the lock is gone.
    await daemon.waitForPolls(1, 20_000);
    daemon.signal('SIGTERM');
    const exit = await daemon.waitExit(15_000);
    expect(exit, daemon.diag()).toEqual({ code: 0, signal: null });
    // What failed meanwhile failed on the lock, nothing else.
    const errors = daemon.logs().filter((l) => l.level === 'error');
    expect(errors.filter((l) => !/database is locked/.test(JSON.stringify(l))), daemon.diag()).toEqual([]);
  }, 90_000);

  it('a market that vanishes from the service loses every lookout_market_* series on the next successful poll (no stale series)', async () => {
    const sim = await startSim({ scenario: 'calm' });
    const dir = dirs.make();
    const file = writeConfig(join(dir, 'lookout.yaml'), { sim, db: join(dir, 'lookout.db') });
    const { daemon, url } = await DaemonProcess.start(file);
    const kept = sim.market(0);
    const gone = sim.market(39);
    const idsOf = (text: string, family: string) => new Set(parseScrape(text).filter((s) => s.name === family).map((s) => s.labels.market_id));
    const before = await until('both markets on /metrics', async () => {
      const text = await getText(`${url}/metrics`);
      return MARKET_FAMILIES.every((f) => idsOf(text, f).has(gone) && idsOf(text, f).has(kept)) ? text : undefined;
    }, 15_000, () => daemon.diag());
    for (const f of MARKET_FAMILIES) expect(idsOf(before, f).size, f).toBe(40);

    // The same seed with one market fewer: the same markets, the last one gone.
    await sim.swap({ markets: 39 });
    expect(sim.market(0)).toBe(kept);
    expect(sim.sim.world.markets.map((m) => m.marketId)).not.toContain(gone);
    // The second successful poll from now started after the swap (runs of a poll never overlap).
    await daemon.waitForPolls(2, 20_000);
    const polls = await getJson<Array<{ name: string; ok: boolean; rows: number }>>(`${url}/api/polls`);
    expect(polls).toEqual([expect.objectContaining({ name: 'markets', ok: true, rows: 39 })]);
    const after = await getText(`${url}/metrics`);
    for (const f of MARKET_FAMILIES) {
      const ids = idsOf(after, f);
      expect(ids.has(gone), `${f} still has ${gone}`).toBe(false);
      expect(ids.has(kept), `${f} lost ${kept}`).toBe(true);
      expect(ids.size, f).toBe(39);
    }
  }, 40_000);

  it('folds history older than storage.raw_retention into 5-minute buckets while it runs', async () => {
    const sim = await startSim({ scenario: 'calm' });
    const dir = dirs.make();
    const db = join(dir, 'lookout.db');
    const file = writeConfig(join(dir, 'lookout.yaml'), { ...configObject({ sim, db }), storage: { path: db, retention: '1d', raw_retention: '2s' } });
    const { daemon } = await DaemonProcess.start(file);
    const conn = () => new Database(db, { readonly: true, fileMustExist: true });
    const state = await until(
      'buckets, and no full-resolution row much older than raw_retention',
      () => {
        const c = conn();
        try {
          const buckets = (c.prepare(`SELECT count(*) AS n FROM reading_buckets`).get() as { n: number }).n;
          const oldest = (c.prepare(`SELECT min(seen_at) AS t FROM reading_history`).get() as { t: number | null }).t;
          return buckets >= 40 && oldest !== null && Date.now() - oldest < 6_000 ? { buckets, oldest } : undefined;
        } finally {
          c.close();
        }
      },
      20_000,
      () => daemon.diag(),
    );
    expect(state.buckets).toBeGreaterThanOrEqual(40);
    daemon.signal('SIGTERM');
    expect(await daemon.waitExit(10_000), daemon.diag()).toEqual({ code: 0, signal: null });
    expect(daemon.logs().filter((l) => l.level === 'error'), daemon.diag()).toEqual([]);
  }, 40_000);

  it('seals hours of full-resolution history into chunks, but not the hours its rules still look back into', async () => {
    const sim = await startSim({ scenario: 'calm' });
    const HOUR = 3_600_000;
    const now = Date.now();
    // Two databases with the same history, stored before the daemons run: a market changing every 10 minutes for
    // seven hours, up to an hour ago.
    const start = async (name: string, rules: Record<string, unknown>[]) => {
      const dir = dirs.make();
      const db = join(dir, 'lookout.db');
      const store = openStore(db);
      try {
        for (let t = now - 7 * HOUR, i = 0; t < now - HOUR; t += 600_000, i++) store.readings.savePoll('markets', [market('m-old', t, 0.5 + (i % 5) / 100)], t);
      } finally {
        store.close();
      }
      const file = writeConfig(join(dir, 'lookout.yaml'), { ...configObject({ sim: sim!, db, rules, logLevel: 'debug' }), storage: { path: db, retention: '1d', raw_retention: '6h' } });
      const { daemon } = await DaemonProcess.start(file);
      return { name, db, daemon };
    };
    const looking = await start('looking', [{ name: 'apy-5h', kind: 'apy_jump', severity: 'warning', window: '5h', min_change: 0.5 }]);
    const plain = await start('plain', []);
    const sealedThrough = (db: string) => {
      const c = new Database(db, { readonly: true, fileMustExist: true });
      try {
        return (c.prepare(`SELECT max(last) AS t FROM reading_history_chunks`).get() as { t: number | null }).t;
      } finally {
        c.close();
      }
    };
    for (const d of [looking, plain]) {
      // A turn of the fold (the hour past raw_retention goes into buckets) and the sealing has ended.
      await d.daemon.waitForLog((l) => l.msg === 'downsampled', 30_000, `${d.name}: a downsample turn`);
    }
    // Without a look-back, every hour that ended over 10 minutes ago is sealed; with apy_jump's 5 h, nothing newer
    // than 5 h ago is: its every-poll question, `window` ago, reads rows of the head.
    expect(sealedThrough(plain.db)).toBeGreaterThan(now - 2 * HOUR);
    expect(sealedThrough(looking.db) ?? 0).toBeLessThan(now - 5 * HOUR);
    for (const d of [looking, plain]) {
      d.daemon.signal('SIGTERM');
      expect(await d.daemon.waitExit(10_000), d.daemon.diag()).toEqual({ code: 0, signal: null });
      expect(d.daemon.logs().filter((l) => l.level === 'error'), d.daemon.diag()).toEqual([]);
    }
  }, 60_000);

  it('exits non-zero with one clear line when its port is taken, instead of hanging', async () => {
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    try {
      const port = (blocker.address() as net.AddressInfo).port;
      const dir = dirs.make();
      const file = writeConfig(join(dir, 'lookout.yaml'), { sim: { url: 'http://127.0.0.1:9', catalogUrl: 'http://127.0.0.1:9' }, db: join(dir, 'lookout.db'), listen: `127.0.0.1:${port}` });
      const daemon = DaemonProcess.spawn(file);
      const exit = await daemon.waitExit(15_000);
      expect(exit.code, daemon.diag()).toBe(2);
      const plain = daemon.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('{'));
      expect(plain, daemon.diag()).toEqual([expect.stringMatching(new RegExp(`^lookout: .*EADDRINUSE.*${port}`))]);
      expect(daemon.logs().map((l) => l.msg)).not.toContain('started');
    } finally {
      await new Promise((r) => blocker.close(r));
    }
  }, 30_000);

  it('refuses an invalid config: exit 1, each problem as file:line:col, nothing listens, no DB created', async () => {
    const dir = dirs.make();
    const port = await freePort();
    const file = join(dir, 'bad.yaml');
    const db = join(dir, 'never.db');
    writeFileSync(
      file,
      [
        'source:',
        '  base_url: http://127.0.0.1:9',
        '  api_key: k',
        'storage:',
        `  path: ${db}`,
        'server:',
        `  listen: 127.0.0.1:${port}`,
        'polls:',
        '  - { name: markets, kind: metrics, cron: "*/1 * * * * *" }',
        'rules:',
        '  inline:',
        '    - name: util',
        '      kind: utilization_above',
        '      severity: critical',
        '      treshold: 0.95',
        '      for: 10 minutes',
        '',
      ].join('\n'),
    );
    const daemon = DaemonProcess.spawn(file);
    const exit = await daemon.waitExit(15_000);
    expect(exit, daemon.diag()).toEqual({ code: 1, signal: null });
    const lines = daemon.stderr.split('\n').filter(Boolean);
    const problems = lines.filter((l) => /^.+:\d+:\d+: /.test(l));
    // The misspelt key sits on line 15 (its suggestion stands for the missing `threshold`), the bad duration on line 16.
    expect(problems, daemon.diag()).toEqual([
      expect.stringMatching(new RegExp(`^${escapeRe(file)}:15:7: unknown key 'treshold' — did you mean 'threshold'\\?$`)),
      expect.stringMatching(new RegExp(`^${escapeRe(file)}:16:12: .*invalid duration`)),
    ]);
    expect(daemon.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(daemon.logs().map((l) => l.msg)).not.toContain('started');
    expect(await listening(port)).toBe(false);
    expect(existsSync(db)).toBe(false);
  }, 30_000);
});

/** GET /readyz with its status and JSON body; a long timeout, for a daemon whose event loop waits on a lock. */
async function readyz(url: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(15_000) });
  return { status: res.status, body: await res.json() };
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
