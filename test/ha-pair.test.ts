/**
 * High availability through an existing distributed engine (SPEC §8, docs/scaling.md): two identical `lookout run`
 * replicas against one simulator deliver through the `alertmanager` notifier to two real Alertmanagers peered on
 * loopback (Debian's prometheus-alertmanager, gossip cluster), which deduplicate: one notification per group at the
 * receiver behind them, not two. Then one replica and one Alertmanager are killed (SIGKILL): the next alert still
 * arrives exactly once. Then the killed replica restarts: no duplicate, no spurious RESOLVED.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { DaemonProcess, killAll, tempDirs, until } from './fixtures/daemon/harness.js';
import { SimHandle, utilRule, writeConfig } from './fixtures/daemon/world.js';
import { tool } from './tools.js';

const alertmanager = tool('prometheus-alertmanager', 'prometheus-alertmanager');
const dirs = tempDirs();
const procs: ChildProcess[] = [];
let sim: SimHandle | undefined;
let receiver: Server | undefined;

afterAll(async () => {
  await killAll();
  for (const p of procs) p.kill('SIGKILL');
  await sim?.close();
  await new Promise<void>((r) => (receiver ? receiver.close(() => r()) : r()));
  dirs.cleanup();
});

/** One webhook notification as the receiver saw it. */
interface Received {
  status: string;
  rule: string;
  firing: string[];
  resolved: string[];
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** Starts one Alertmanager of the pair; `peer` is the other's cluster address. */
async function startAlertmanager(bin: string, web: number, cluster: number, peer: number, sinkUrl: string): Promise<{ proc: ChildProcess; url: string; log: () => string }> {
  const dir = mkdtempSync(join(tmpdir(), 'lookout-ha-am-'));
  writeFileSync(
    join(dir, 'am.yml'),
    [
      'route:',
      '  receiver: sink',
      '  group_by: [alertname]',
      '  group_wait: 1s',
      '  group_interval: 2s',
      '  repeat_interval: 1h',
      'receivers:',
      '  - name: sink',
      '    webhook_configs:',
      `      - url: ${JSON.stringify(sinkUrl)}`,
      '        send_resolved: true',
      '',
    ].join('\n'),
  );
  let log = '';
  const proc = spawn(
    bin,
    [
      `--config.file=${join(dir, 'am.yml')}`,
      `--storage.path=${dir}`,
      `--web.listen-address=127.0.0.1:${web}`,
      `--cluster.listen-address=127.0.0.1:${cluster}`,
      `--cluster.advertise-address=127.0.0.1:${cluster}`,
      `--cluster.peer=127.0.0.1:${peer}`,
      '--cluster.gossip-interval=100ms',
      '--cluster.pushpull-interval=2s',
      '--cluster.peer-timeout=3s',
      '--cluster.settle-timeout=2s',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  proc.stderr!.on('data', (c: Buffer) => (log = (log + c.toString()).slice(-20_000)));
  proc.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  procs.push(proc);
  return { proc, url: `http://127.0.0.1:${web}`, log: () => log };
}

it.skipIf(alertmanager.skip)(
  `two replicas through two peered Alertmanagers: one notification per alert, through a kill of a replica and an Alertmanager and the replica's restart (${alertmanager.needs})`,
  async () => {
    const received: Received[] = [];
    receiver = createServer((req, res) => {
      let text = '';
      req.on('data', (c) => (text += c));
      req.on('end', () => {
        const b = JSON.parse(text) as { status: string; groupLabels: Record<string, string>; alerts: Array<{ status: string; labels: Record<string, string> }> };
        const names = (s: string) => b.alerts.filter((a) => a.status === s).map((a) => a.labels.market_id ?? '').sort();
        received.push({ status: b.status, rule: b.groupLabels.alertname ?? '', firing: names('firing'), resolved: names('resolved') });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => receiver!.listen(0, '127.0.0.1', r));
    const sinkUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`;

    const bin = alertmanager.require();
    const [w1, w2, c1, c2] = [await freePort(), await freePort(), await freePort(), await freePort()];
    const am1 = await startAlertmanager(bin, w1, c1, c2, sinkUrl);
    const am2 = await startAlertmanager(bin, w2, c2, c1, sinkUrl);
    const diag = () => `received: ${JSON.stringify(received)}\n--- am1\n${am1.log().slice(-1500)}\n--- am2\n${am2.log().slice(-1500)}`;
    // The cluster settles to two members on each side.
    for (const am of [am1, am2]) {
      await until(
        'a settled two-member cluster',
        async () => {
          const s = (await (await fetch(`${am.url}/api/v2/status`)).json()) as { cluster?: { status?: string; peers?: unknown[] } };
          return s.cluster?.status === 'ready' && s.cluster.peers?.length === 2 ? true : undefined;
        },
        30_000,
        diag,
        200,
      );
    }

    sim = await SimHandle.spiking();
    const [first, second] = [sim.market(0), sim.market(1)];
    const replica = () => {
      const dir = dirs.make();
      return writeConfig(join(dir, 'lookout.yaml'), {
        sim,
        db: join(dir, 'lookout.db'),
        // The second alert fires ~25 s after start: after the kill below.
        rules: [utilRule('util-first', first), { ...utilRule('util-second', second), for: '25s' }],
        notifiers: { am: { type: 'alertmanager', urls: [am1.url, am2.url], resend_interval: '5s', timeout: '2s' } },
        routes: [{ default: true, notify: ['am'], group_by: ['rule'] }],
        sourceDownAfter: 50,
      });
    };
    const files = [replica(), replica()];
    const a = await DaemonProcess.start(files[0]!);
    const b = await DaemonProcess.start(files[1]!);
    const about = (rule: string, status = 'firing') => received.filter((r) => r.rule === rule && r.status === status);

    // Both replicas post util-first to both Alertmanagers: the receiver hears it once.
    await until('util-first at the receiver', () => (about('util-first').length > 0 ? true : undefined), 30_000, diag);
    // Long enough for a second copy to arrive, had the cluster not deduplicated (peer_timeout 3 s, group_interval 2 s).
    await Promise.all([a.daemon.waitForPolls(6, 20_000), b.daemon.waitForPolls(6, 20_000)]);
    expect(about('util-first')).toEqual([{ status: 'firing', rule: 'util-first', firing: [first], resolved: [] }]);

    // A replica and an Alertmanager die at once.
    a.daemon.signal('SIGKILL');
    am1.proc.kill('SIGKILL');
    await a.daemon.waitExit(10_000);
    // util-second's `for` runs out on the surviving replica; it reaches the receiver once, through the surviving Alertmanager.
    await until('util-second at the receiver', () => (about('util-second').length > 0 ? true : undefined), 60_000, diag);
    await b.daemon.waitForPolls(6, 20_000);
    expect(about('util-second')).toHaveLength(1);

    // The killed replica comes back on its own database: it re-posts what it had firing; nothing new at the receiver.
    const before = received.length;
    const again = await DaemonProcess.start(files[0]!);
    await again.daemon.waitForPolls(8, 30_000);
    await b.daemon.waitForPolls(2, 20_000);
    expect(received.slice(before), diag()).toEqual([]);
    expect(received.filter((r) => r.status === 'resolved' || r.resolved.length > 0)).toEqual([]);
    expect(about('util-first')).toHaveLength(1);
    expect(about('util-second')).toHaveLength(1);
  },
  180_000,
);
