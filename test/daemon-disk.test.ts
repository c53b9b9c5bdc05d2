/**
 * Disk faults under the real daemon (issue 13): its DB on a tmpfs of a few MiB that the test fills to the last byte
 * and frees again. The daemon keeps running and says why on /readyz and /metrics; polls fail with reason `store` and
 * change no alert; a notification already in the outbox survives; when space returns everything resumes without a
 * restart, and nothing is announced twice.
 */
import { closeSync, existsSync, openSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { apiAlerts, DaemonProcess, getText, sample, until } from './fixtures/daemon/harness.js';
import { daemonScope } from './fixtures/daemon/scope.js';
import { utilRule, writeConfig } from './fixtures/daemon/world.js';
import { cannotMount, privileged, SmallDisk } from './fixtures/daemon/disk.js';
import { openStore } from '../src/store/index.js';

const why = cannotMount();
// Under CI a missing privilege is a broken setup, not a reason to skip (as with the tools of test/tools.ts).
if (why !== undefined && process.env.CI) throw new Error(`${why}: under CI the disk-fault tests cannot skip`);

const { spikingSim, startSlack } = daemonScope();
let disk: SmallDisk | undefined;
afterEach(() => {
  disk?.unmount();
  disk = undefined;
});

/** Poll runs started at or after `since` that a second connection sees (committed to the file). */
function committedRunsSince(db: string, since: number): number {
  const conn = new Database(db, { readonly: true, fileMustExist: true });
  try {
    return (conn.prepare('SELECT count(*) AS n FROM poll_runs WHERE started_at >= ?').get(since) as { n: number }).n;
  } finally {
    conn.close();
  }
}

async function readyz(url: string): Promise<{ status: number; body: { status?: string; error?: string; message?: string } }> {
  const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(20_000) });
  return { status: res.status, body: (await res.json()) as { status?: string; message?: string } };
}

describe.skipIf(why !== undefined)(`a full disk under the daemon${why ? ` (skipped: ${why})` : ''}`, () => {
  it('store.writable() on a full disk leaves no transaction open, so later writes are not swallowed by one never committed', () => {
    disk = SmallDisk.mount(2 * 1024 * 1024);
    const store = openStore(join(disk.dir, 'probe.db'));
    try {
      const before = store.polls.lastAll().length;
      disk.fill();
      // A write that needs space fails and is rolled back; then /readyz probes.
      expect(() => store.transaction(() => store.meta.set('filler', 'x'.repeat(256 * 1024)))).toThrow(/full/);
      store.writable();
      expect(store.db.inTransaction).toBe(false);
      disk.release();
      store.transaction(() => store.meta.set('after_release', '1'));
      const other = new Database(join(disk.dir, 'probe.db'), { readonly: true, fileMustExist: true });
      try {
        expect(other.prepare(`SELECT value FROM meta WHERE key = 'after_release'`).get()).toEqual({ value: '1' });
      } finally {
        other.close();
      }
      expect(store.polls.lastAll().length).toBe(before);
    } finally {
      store.close();
    }
  });

  it('keeps running and says why, fails polls with reason store without touching alerts, keeps the outbox, and resumes once space returns — one FIRING in all', async () => {
    const sim = await spikingSim();
    const slack = await startSlack();
    // Slack is down from the start: the FIRING message waits in the outbox when the disk fills.
    slack.respond(500);
    disk = SmallDisk.mount(16 * 1024 * 1024);
    const db = join(disk.dir, 'lookout.db');
    const market = sim.market(0);
    const file = writeConfig(join(disk.dir, 'lookout.yaml'), {
      sim,
      db,
      rules: [utilRule('util-high', market)],
      notifiers: { slack: { type: 'slack', webhook_url: slack.url } },
      sourceDownAfter: 3,
    });
    const { daemon, url } = await DaemonProcess.start(file);
    const diag = () => `${slack.summary()}\n${daemon.diag()}`;
    await slack.waitFor('a FIRING attempt (answered 500)', (p) => p.some((x) => x.text.startsWith('FIRING') && x.text.includes(market)), 20_000, diag);
    const before = await apiAlerts(url);
    const firing = before.find((a) => a.rule === 'util-high' && a.entity === market);
    expect(firing?.state).toBe('firing');

    // The fault: every free byte of the filesystem taken.
    disk.fill();
    expect(disk.free()).toBeLessThan(64 * 1024);
    await daemon.waitForLog((l) => l.msg === 'poll' && l.outcome === 'store_failed' && l.reason === 'store', 60_000, 'a poll that could not be stored');
    const notReady = await until('/readyz 503 naming the full disk', async () => {
      const r = await readyz(url);
      return r.status === 503 && /disk is full/.test(r.body.message ?? '') ? r : undefined;
    }, 30_000, diag, 200);
    expect(notReady.body.error).toBe('not_ready');
    const text = await getText(`${url}/metrics`);
    expect(sample(text, 'lookout_store_writable')).toBe(0);
    expect(sample(text, 'lookout_store_errors_total', { operation: 'poll', reason: 'full' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'lookout_poll_errors_total', { poll: 'markets', reason: 'store' })).toBeGreaterThanOrEqual(1);
    // Slack is back while the disk is still full: nothing may go out that could not be recorded as sent (it would go out
    // again once the disk frees). More polls fail meanwhile (source_down.after is 3): nothing about the alerts changes.
    slack.respond(200);
    const failedBefore = daemon.count((l) => l.msg === 'poll' && l.outcome === 'store_failed');
    await daemon.waitForLog((l) => l.msg === 'poll' && l.outcome === 'store_failed', 60_000, '4 more polls that could not be stored', failedBefore + 4);
    expect(daemon.running).toBe(true);
    const during = await apiAlerts(url);
    expect(during.map((a) => [a.rule, a.entity, a.state, a.since])).toEqual(before.map((a) => [a.rule, a.entity, a.state, a.since]));
    expect(during.some((a) => a.rule === 'source_down')).toBe(false);
    expect(slack.delivered(), slack.summary()).toEqual([]);
    expect(daemon.count((l) => l.msg === 'notify_store_failed' || l.msg === 'notify_pump_failed')).toBeGreaterThanOrEqual(1);

    // Space returns: polls store again, /readyz is 200, the gauge says so; no restart.
    disk.release();
    const released = Date.now();
    await daemon.waitForPolls(1, 30_000);
    // Committed, not merely believed: a second connection sees a run that started after the release.
    expect(committedRunsSince(db, released)).toBeGreaterThanOrEqual(1);
    await until('/readyz 200', async () => ((await readyz(url)).status === 200 ? true : undefined), 30_000, diag, 200);
    expect(sample(await getText(`${url}/metrics`), 'lookout_store_writable')).toBe(1);
    // The FIRING message that waited through the fault goes out, once.
    await slack.waitFor('the FIRING message delivered', (p) => p.some((x) => x.status === 200 && x.text.startsWith('FIRING') && x.text.includes(market)), 30_000, diag);
    await daemon.waitForPolls(3, 30_000);
    await daemon.waitForLog((l) => l.msg === 'notify_sent', 10_000, 'notify_sent');
    expect(slack.about('FIRING', market, true), slack.summary()).toHaveLength(1);
    expect(slack.about('RESOLVED', market), slack.summary()).toEqual([]);
    // Every attempt, before and after the fault, carried the one dedup key.
    expect(new Set(slack.about('FIRING', market).map((p) => p.key)).size).toBe(1);
    expect((await apiAlerts(url)).find((a) => a.rule === 'util-high' && a.entity === market)?.state).toBe('firing');

    daemon.signal('SIGTERM');
    expect(await daemon.waitExit(15_000), daemon.diag()).toEqual({ code: 0, signal: null });
    const conn = new Database(db, { readonly: true, fileMustExist: true });
    try {
      expect(conn.pragma('integrity_check', { simple: true })).toBe('ok');
      const rows = conn.prepare(`SELECT status, count(*) AS n FROM notify_messages GROUP BY status`).all();
      expect(rows).toEqual([{ status: 'sent', n: 1 }]);
    } finally {
      conn.close();
    }
  }, 180_000);
});

/** Sets or clears the immutable flag on every file that exists. */
function immutable(on: boolean, files: string[]): void {
  const r = privileged('chattr', [on ? '+i' : '-i', ...files.filter((f) => existsSync(f))]);
  if (!r.ok) throw new Error(`chattr ${on ? '+i' : '-i'}: ${r.out}`);
}

const whyExt4 = why ?? cannotMount({ ext4: true });
if (whyExt4 !== undefined && process.env.CI) throw new Error(`${whyExt4}: under CI the read-only test cannot skip`);

describe.skipIf(whyExt4 !== undefined)(`a read-only DB file${whyExt4 ? ` (skipped: ${whyExt4})` : ''}`, () => {
  let files: string[] = [];
  afterEach(() => {
    if (files.length) privileged('chattr', ['-i', ...files.filter((f) => existsSync(f))]);
    files = [];
  });

  it('chattr +i under the running daemon: polls fail with reason store, /readyz and /metrics say why, alerts stay; -i resumes without a restart; a restart while read-only refuses with one clear line', async () => {
    const sim = await spikingSim();
    disk = SmallDisk.tryMountExt4(32 * 1024 * 1024) as SmallDisk;
    const db = join(disk.dir, 'lookout.db');
    files = [db, `${db}-wal`, `${db}-shm`];
    const market = sim.market(0);
    const file = writeConfig(join(disk.dir, 'lookout.yaml'), { sim, db, rules: [utilRule('util-high', market)], sourceDownAfter: 3 });
    const { daemon, url } = await DaemonProcess.start(file);
    const diag = () => daemon.diag();
    await until('the alert firing', async () => ((await apiAlerts(url)).some((a) => a.entity === market && a.state === 'firing') ? true : undefined), 20_000, diag);
    await daemon.waitForPolls(1, 20_000);
    const before = await apiAlerts(url);

    // The fault: the DB file, its WAL and shared memory made immutable; ext4 refuses writes through open descriptors too.
    immutable(true, files);
    expect(() => closeSync(openSync(db, 'r+'))).toThrow(/EPERM/);
    await daemon.waitForLog((l) => l.msg === 'poll' && l.outcome === 'store_failed' && l.reason === 'store', 30_000, 'a poll that could not be stored');
    const failed = daemon.count((l) => l.msg === 'poll' && l.outcome === 'store_failed');
    await daemon.waitForLog((l) => l.msg === 'poll' && l.outcome === 'store_failed', 30_000, '3 more polls that could not be stored', failed + 3);
    const notReady = await readyz(url);
    expect(notReady.status).toBe(503);
    expect(notReady.body.message).toMatch(/^database is not writable: /);
    const text = await getText(`${url}/metrics`);
    expect(sample(text, 'lookout_store_writable')).toBe(0);
    const reasons = text.split('\n').filter((l) => l.startsWith('lookout_store_errors_total{'));
    expect(reasons.join('\n')).toMatch(/operation="poll",reason="(io|readonly)"/);
    expect(sample(text, 'lookout_poll_errors_total', { poll: 'markets', reason: 'store' })).toBeGreaterThanOrEqual(4);
    expect(daemon.running).toBe(true);
    const during = await apiAlerts(url);
    expect(during.map((a) => [a.rule, a.entity, a.state, a.since])).toEqual(before.map((a) => [a.rule, a.entity, a.state, a.since]));

    // Writable again: the same process stores polls again, /readyz is 200.
    immutable(false, files);
    const released = Date.now();
    await daemon.waitForPolls(2, 30_000);
    expect(committedRunsSince(db, released)).toBeGreaterThanOrEqual(1);
    await until('/readyz 200', async () => ((await readyz(url)).status === 200 ? true : undefined), 30_000, diag, 200);
    expect(sample(await getText(`${url}/metrics`), 'lookout_store_writable')).toBe(1);
    expect((await apiAlerts(url)).find((a) => a.entity === market)?.state).toBe('firing');
    daemon.signal('SIGTERM');
    expect((await daemon.waitExit(15_000)).code, daemon.diag()).toBe(0);

    // A restart onto a read-only file: SQLite would open it read-only for good, so lookout refuses to start and says why.
    immutable(true, files);
    const refused = DaemonProcess.spawn(file);
    const exit = await refused.waitExit(15_000);
    expect(exit.code, refused.diag()).toBe(2);
    expect(refused.stderr).toContain(`database ${db} is read-only`);
    expect(refused.stderr).not.toMatch(/\n\s+at /);
    immutable(false, files);
    const again = await DaemonProcess.start(file);
    await again.daemon.waitForPolls(1, 20_000);
    again.daemon.signal('SIGTERM');
    expect((await again.daemon.waitExit(15_000)).code).toBe(0);
    const conn = new Database(db, { readonly: true, fileMustExist: true });
    try {
      expect(conn.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      conn.close();
    }
  }, 150_000);
});
