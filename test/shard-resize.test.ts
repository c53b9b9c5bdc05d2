/**
 * A resize from 3 to 4 shards (SPEC §8, docs/scaling.md): `lookout run` replicas against one simulator deliver through
 * two peered real Alertmanagers. Markets firing before the resize keep firing at the receiver without a RESOLVED or a
 * second FIRING, though some of them moved to the new replica; and the replica that gave a market away forgets its
 * alert without a resolve of its own.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect, it } from 'vitest';
import { startSimulator } from '../src/simulator/index.js';
import { ownerOf } from '../src/source/shard.js';
import { clusterScope } from './fixtures/alertmanager-cluster.js';
import { apiAlerts, DaemonProcess, until } from './fixtures/daemon/harness.js';
import { daemonScope } from './fixtures/daemon/scope.js';
import { writeConfig } from './fixtures/daemon/world.js';
import { tool } from './tools.js';

const alertmanager = tool('prometheus-alertmanager', 'prometheus-alertmanager');
const { dirs, spikingSim } = daemonScope();
const { startReceiver, startCluster } = clusterScope();

/** The rule's `for`: the first firing waits it out; the new owner after the resize must not. */
const FOR_MS = 25_000;
const FOR = `${FOR_MS / 1000}s`;

/** A seed whose spiking markets (#0–#2) include one that moves to replica 3 when 3 shards become 4. */
async function seedWithAMove(): Promise<{ seed: number; spiking: string[]; moved: string }> {
  for (let seed = 1; seed < 200; seed++) {
    const s = await startSimulator({ seed, markets: 40 });
    const spiking = [0, 1, 2].map((i) => s.world.markets[i]!.marketId);
    await s.close();
    const moved = spiking.find((m) => ownerOf(m, 4) === 3);
    if (moved) return { seed, spiking, moved };
  }
  throw new Error('no seed moves a spiking market');
}

it.skipIf(alertmanager.skip)(
  `3 → 4 shards through an Alertmanager cluster: moved markets keep firing, no RESOLVED and no second FIRING at the receiver (${alertmanager.needs})`,
  async () => {
    const rec = await startReceiver();
    const ams = await startCluster(alertmanager.require(), 2, rec.url);
    const { seed, spiking, moved } = await seedWithAMove();
    const sim = await spikingSim({ seed });
    const giver = ownerOf(moved, 3);

    const files = [0, 1, 2, 3].map(() => {
      const dir = dirs.make();
      return {
        dir,
        file: writeConfig(join(dir, 'lookout.yaml'), {
          sim,
          db: join(dir, 'lookout.db'),
          // every market: the three spiking ones breach
          // `for` longer than the test waits after the resize: only adoption lets the new owner fire the moved market.
          rules: [{ name: 'util-high', kind: 'utilization_above', severity: 'critical', threshold: 0.95, clear_below: 0.92, for: FOR }],
          notifiers: { am: { type: 'alertmanager', urls: ams.map((a) => a.url), resend_interval: '5s', timeout: '2s' } },
          routes: [{ default: true, notify: ['am'], group_by: ['rule'] }],
          sourceDownAfter: 50,
        }),
      };
    });
    const env = (i: number, total: number) => ({ LOOKOUT_SHARD_INDEX: String(i), LOOKOUT_SHARD_TOTAL: String(total) });
    const diag = () => `seed ${seed}, moved ${moved} from replica ${giver}; received: ${JSON.stringify(rec.received)}`;

    let replicas = await Promise.all([0, 1, 2].map((i) => DaemonProcess.start(files[i]!.file, env(i, 3))));
    const firingNow = () => new Set(rec.received.flatMap((r) => r.firing));
    await until('all three spiking markets firing at the receiver', () => (spiking.every((m) => firingNow().has(m)) ? true : undefined), 60_000, diag);
    await Promise.all(replicas.map((r) => r.daemon.waitForPolls(3, 20_000)));
    const before = rec.received.length;

    // The resize: the three replicas restart with total 4, and a fourth starts.
    for (const r of replicas) r.daemon.signal('SIGTERM');
    await Promise.all(replicas.map((r) => r.daemon.waitExit(15_000)));
    const resized = Date.now();
    replicas = await Promise.all([0, 1, 2, 3].map((i) => DaemonProcess.start(files[i]!.file, env(i, 4))));
    // The new owner took the moved market over from the cluster before its first poll, and fires it from that poll
    // on: its `for` does not start over (the FOR a fresh alert would wait has not passed yet).
    const owner = replicas[3]!;
    expect(owner.daemon.logs().some((l) => l.msg === 'alert_adopted' && l.entity === moved), diag()).toBe(true);
    await owner.daemon.waitForPolls(2, 20_000);
    // Pending since before the resize (when it began on the old owner, less FOR): a fresh alert would be pending
    // since the new owner's first poll, and firing only FOR after it.
    expect((await apiAlerts(owner.url)).find((a) => a.entity === moved), diag()).toMatchObject({ state: 'firing' });
    const ownerDb = new Database(join(files[3]!.dir, 'lookout.db'), { readonly: true });
    try {
      const row = ownerDb.prepare(`SELECT pending_since FROM alerts WHERE entity = ?`).get(moved) as { pending_since: number };
      expect(row.pending_since, diag()).toBeLessThan(resized - FOR_MS);
    } finally {
      ownerDb.close();
    }
    // Several resend intervals pass on every replica.
    await Promise.all(replicas.map((r) => r.daemon.waitForPolls(12, 40_000)));

    expect(rec.received.slice(before), diag()).toEqual([]);
    expect(rec.received.filter((r) => r.status === 'resolved' || r.resolved.length > 0)).toEqual([]);
    // The giver logged the move and holds no alert for it, and never recorded a resolve of it.
    const old = replicas[giver]!.daemon;
    expect(old.logs().some((l) => l.msg === 'alert_moved' && l.entity === moved)).toBe(true);
    const db = new Database(join(files[giver]!.dir, 'lookout.db'), { readonly: true });
    try {
      expect(db.prepare(`SELECT count(*) AS n FROM alerts WHERE entity = ?`).get(moved)).toEqual({ n: 0 });
      expect(db.prepare(`SELECT count(*) AS n FROM alert_events WHERE entity = ? AND type = 'resolved'`).get(moved)).toEqual({ n: 0 });
    } finally {
      db.close();
    }
    // The new owner still has it firing.
    expect((await apiAlerts(owner.url)).find((a) => a.entity === moved)?.state).toBe('firing');
  },
  240_000,
);
