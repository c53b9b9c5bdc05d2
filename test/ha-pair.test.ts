/**
 * High availability through an existing distributed engine (SPEC §8, docs/scaling.md): two identical `lookout run`
 * replicas against one simulator deliver through the `alertmanager` notifier to two real Alertmanagers peered on
 * loopback (Debian's prometheus-alertmanager, gossip cluster), which deduplicate: one notification per group at the
 * receiver behind them, not two. Then one replica and one Alertmanager are killed (SIGKILL): the next alert still
 * arrives exactly once. Then the killed replica restarts: no duplicate, no spurious RESOLVED.
 */
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { clusterScope } from './fixtures/alertmanager-cluster.js';
import { DaemonProcess, until } from './fixtures/daemon/harness.js';
import { daemonScope } from './fixtures/daemon/scope.js';
import { utilRule, writeConfig } from './fixtures/daemon/world.js';
import { tool } from './tools.js';

const alertmanager = tool('prometheus-alertmanager', 'prometheus-alertmanager');
const { dirs, spikingSim } = daemonScope();
const { startReceiver, startCluster } = clusterScope();

it.skipIf(alertmanager.skip)(
  `two replicas through two peered Alertmanagers: one notification per alert, through a kill of a replica and an Alertmanager and the replica's restart (${alertmanager.needs})`,
  async () => {
    const receiver = await startReceiver();
    const received = receiver.received;
    const [am1, am2] = await startCluster(alertmanager.require(), 2, receiver.url);
    const diag = () => `received: ${JSON.stringify(received)}\n--- am1\n${am1!.log().slice(-1500)}\n--- am2\n${am2!.log().slice(-1500)}`;

    const sim = await spikingSim();
    const [first, second] = [sim.market(0), sim.market(1)];
    const replica = () => {
      const dir = dirs.make();
      return writeConfig(join(dir, 'lookout.yaml'), {
        sim,
        db: join(dir, 'lookout.db'),
        // The second alert fires ~25 s after start: after the kill below.
        rules: [utilRule('util-first', first), { ...utilRule('util-second', second), for: '25s' }],
        notifiers: { am: { type: 'alertmanager', urls: [am1!.url, am2!.url], resend_interval: '5s', timeout: '2s' } },
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
    expect(about('util-first').map(({ at: _, ...r }) => r)).toEqual([{ status: 'firing', rule: 'util-first', firing: [first], resolved: [] }]);

    // A replica and an Alertmanager die at once.
    a.daemon.signal('SIGKILL');
    am1!.proc.kill('SIGKILL');
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
