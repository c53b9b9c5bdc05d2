/** The alertmanager notifier against the real prometheus-alertmanager binary on loopback (skipped when it is not installed, outside CI). */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { fetchAdoptable } from '../src/notify/adopt.js';
import { createNotifications } from '../src/notify/index.js';
import { alert, event, notifier, route, tempStores } from './notify-helpers.js';
import { tool } from './tools.js';
import { freePort } from './fixtures/daemon/harness.js';

const alertmanager = tool('prometheus-alertmanager', 'prometheus-alertmanager');
const stores = tempStores();
let am: ChildProcess | undefined;
let dir = '';
let base = '';

beforeAll(async () => {
  if (alertmanager.skip) return;
  dir = mkdtempSync(join(tmpdir(), 'lookout-am-'));
  writeFileSync(join(dir, 'am.yml'), 'route:\n  receiver: blackhole\nreceivers:\n  - name: blackhole\n');
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  let log = '';
  am = spawn(alertmanager.require(), [`--config.file=${join(dir, 'am.yml')}`, `--storage.path=${dir}`, `--web.listen-address=127.0.0.1:${port}`, '--cluster.listen-address='], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  am.stderr!.on('data', (c: Buffer) => (log += c.toString()));
  const deadline = Date.now() + 15_000;
  for (;;) {
    const ok = await fetch(`${base}/-/ready`).then((r) => r.ok, () => false);
    if (ok) break;
    if (Date.now() > deadline || am.exitCode !== null) throw new Error(`alertmanager did not become ready: ${log.slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}, 30_000);

afterAll(() => {
  am?.kill('SIGKILL');
  stores.cleanup();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function listed(): Promise<Array<{ labels: Record<string, string>; annotations: Record<string, string>; status: { state: string } }>> {
  const r = await fetch(`${base}/api/v2/alerts`);
  return (await r.json()) as never;
}

async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}

it.skipIf(alertmanager.skip)(`posts firing alerts to a real Alertmanager and ends them on resolve (${alertmanager.needs})`, async () => {
  // A minute behind the wall clock: Alertmanager judges endsAt by its own (real) time.
  const clock = new ManualClock(Date.now() - 60_000);
  const store = stores.open();
  const n = createNotifications({
    db: store.db,
    clock,
    config: {
      notifiers: { am: notifier({ type: 'alertmanager', urls: [base], resend_interval: '1m', external_url: 'http://lookout.example/' }) },
      routes: [route({ default: true, notify: ['am'], group_by: ['rule'] })],
      delivery: { backoff: 100, max_backoff: 1000, give_up_after: 60_000 },
      watchdog: { enabled: false, severity: 'info' },
    },
  });
  const t = clock.now();
  const a1 = alert('usdc-util', 'm1', { firing_since: t }, { loan_asset_symbol: '<!channel>' });
  const a2 = alert('usdc-util', 'm2', { firing_since: t });
  store.transaction(() => n.outbox.enqueue([event('firing', a1, t), event('firing', a2, t)], t));
  await n.dispatcher.runDue();
  expect(n.dispatcher.deliveries.list({ status: 'sent' })).toHaveLength(1);
  const firing = await until(listed, (l) => l.length === 2);
  expect(firing.map((a) => a.labels.market_id).sort()).toEqual(['m1', 'm2']);
  const m1 = firing.find((a) => a.labels.market_id === 'm1')!;
  expect(m1.labels.alertname).toBe('usdc-util');
  expect(m1.labels.loan_asset_symbol).toBe('<!channel>');
  expect(m1.annotations.value).toBe('97%');
  expect(m1.annotations.lookout_dedup_key).toMatch(/^lk-/);
  expect(m1.status.state).toBe('active');

  clock.advance(1000);
  store.transaction(() => n.outbox.enqueue([event('resolved', a1, clock.now() - 500)], clock.now()));
  clock.advance(5000); // the group's next flush (group_interval is at most 5s toward Alertmanager)
  await n.dispatcher.runDue();
  const after = await until(listed, (l) => l.length === 1);
  expect(after.map((a) => a.labels.market_id)).toEqual(['m2']);
  await n.close();
}, 30_000);

it.skipIf(alertmanager.skip)(`adoption reads lookout's firing alerts back from a real Alertmanager, not another sender's, and a peer that never answers costs at most the timeout (${alertmanager.needs})`, async () => {
  const startsAt = new Date(Date.now() - 120_000).toISOString();
  const endsAt = new Date(Date.now() + 600_000).toISOString();
  const post = await fetch(`${base}/api/v2/alerts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify([
      // as lookout posts it
      { labels: { alertname: 'adopt-util', rule: 'adopt-util', market_id: 'm7' }, annotations: { lookout_entity: 'm7', lookout_dedup_key: 'lk-1', summary: 's' }, startsAt, endsAt },
      // another sender's (Prometheus): no lookout_entity
      { labels: { alertname: 'adopt-util', rule: 'adopt-util', instance: 'x' }, annotations: {}, startsAt, endsAt },
    ]),
  });
  expect(post.status).toBe(200);
  const silent = createHttpServer(() => undefined);
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  try {
    const found = await until(
      () => fetchAdoptable({ urls: [base, `http://127.0.0.1:${(silent.address() as { port: number }).port}`], timeoutMs: 1500 }),
      (f) => f.candidates.some((c) => c.rule === 'adopt-util'),
    );
    expect(found.candidates.filter((c) => c.rule === 'adopt-util')).toEqual([
      { rule: 'adopt-util', entity: 'm7', labels: { alertname: 'adopt-util', rule: 'adopt-util', market_id: 'm7' }, annotations: { summary: 's' }, startsAt: Date.parse(startsAt) },
    ]);
    expect(found.failed).toEqual([{ peer: 2, reason: 'timed out' }]);
  } finally {
    silent.closeAllConnections();
    silent.close();
  }
}, 30_000);
