/**
 * End to end: a real Prometheus on loopback scrapes lookout's HTTP server (with the bearer token)
 * and a market's utilization, as the simulator served it, is read back through Prometheus' query API.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, until } from './fixtures/daemon/harness.js';
import { tool } from './tools.js';
import { simulatedReadings } from './metrics-simulated.js';
import { startFakeDaemon, type FakeDaemon } from './http-fixtures.js';

const prometheus = tool('prometheus', 'prometheus', { probe: true });
const TOKEN = 'e2e-scrape-token';

interface QueryResult {
  status: string;
  data: { resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] };
}

describe.skipIf(prometheus.skip)(`Prometheus scrapes lookout (${prometheus.needs})`, () => {
  let daemon: FakeDaemon;
  let prom: ChildProcess | undefined;
  let promUrl: string;
  let dir: string;
  let promLog = '';
  let market: { id: string; utilization: number };

  beforeAll(async () => {
    const now = Date.now();
    const polls = await simulatedReadings({ now });
    const readings = polls.get('markets')!;
    const r = readings.find((x) => typeof x.fields.utilization === 'number')!;
    market = { id: r.entity, utilization: r.fields.utilization as number };
    daemon = await startFakeDaemon({ token: TOKEN });
    daemon.metrics.setReadings('markets', readings, now);

    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-prom-'));
    const port = await freePort();
    promUrl = `http://127.0.0.1:${port}`;
    const target = new URL(daemon.server.url).host;
    fs.writeFileSync(
      path.join(dir, 'prometheus.yml'),
      `global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n` +
        `scrape_configs:\n  - job_name: lookout\n    authorization:\n      type: Bearer\n      credentials: ${TOKEN}\n` +
        `    static_configs:\n      - targets: ['${target}']\n`,
    );
    prom = spawn(
      prometheus.require(),
      [
        `--config.file=${path.join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${path.join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    prom.stdout!.on('data', (d: Buffer) => (promLog += d.toString()));
    prom.stderr!.on('data', (d: Buffer) => (promLog += d.toString()));
    await until('Prometheus to be ready', async () => ((await fetch(`${promUrl}/-/ready`)).ok ? true : undefined), 30_000, () => promLog);
  }, 60_000);

  afterAll(async () => {
    if (prom && prom.exitCode === null) {
      const exited = new Promise((r) => prom!.once('exit', r));
      prom.kill('SIGTERM');
      const timer = setTimeout(() => prom!.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    await daemon?.server.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  }, 20_000);

  const query = async (q: string): Promise<QueryResult> => {
    const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(q)}`, { signal: AbortSignal.timeout(5_000) });
    return (await res.json()) as QueryResult;
  };

  it('reads a market’s utilization back through /api/v1/query with the value the simulator served', async () => {
    const result = await until(
      'a scrape of lookout',
      async () => {
        const r = await query(`lookout_market_utilization_ratio{market_id="${market.id}"}`);
        return r.data.result.length > 0 ? r.data.result : undefined;
      },
      30_000,
      () => promLog,
    );
    expect(result).toHaveLength(1);
    expect(result[0]!.metric).toMatchObject({ job: 'lookout', market_id: market.id, __name__: 'lookout_market_utilization_ratio' });
    expect(Number(result[0]!.value[1])).toBe(market.utilization);
  }, 40_000);

  it('sees the target up, scraped with the bearer token', async () => {
    const r = await until(
      'up == 1',
      async () => {
        const q = await query('up{job="lookout"}');
        return q.data.result[0]?.value[1] === '1' ? q : undefined;
      },
      30_000,
      () => promLog,
    );
    expect(r.status).toBe('success');
  }, 40_000);
});
