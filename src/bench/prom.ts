/**
 * Prometheus and Alertmanager (Debian packages `prometheus`, `prometheus-alertmanager`) on loopback for the
 * alert-latency bench: found on the PATH (or /usr/bin), started with a config written to a scratch directory,
 * ready when their /-/ready answers, stopped with SIGTERM. The tests start them the same way (test/tools.ts,
 * test/e2e-prometheus.test.ts, test/differential/harness.ts); the bench is built from src/ alone, so it has its own.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { accessSync, constants, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { delimiter, join } from 'node:path';
import { procStatusMb } from './proc.js';
import { until } from './until.js';

/** The path of an executable `name` in /usr/bin or on the PATH, or undefined. */
export function findTool(name: string): string | undefined {
  for (const dir of ['/usr/bin', ...(process.env.PATH ?? '').split(delimiter)].filter(Boolean)) {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // not here
    }
  }
  return undefined;
}

/** A free loopback port (listen on 0, close, hand the number on). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** Resident set size of a process, MB (Linux /proc). */
export function rssMbOf(pid: number): number {
  return procStatusMb(pid, 'VmRSS');
}

/** A tool running on loopback. */
export interface Served {
  url: string;
  pid: number;
  /** Its stderr, last 20 kB. */
  log(): string;
  stop(): Promise<void>;
}

/** Spawns `bin args`, waits for `url/-/ready`. */
async function serve(what: string, bin: string, args: string[], url: string): Promise<Served> {
  const proc = spawn(bin, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  proc.stderr.on('data', (c: Buffer) => (log = (log + c.toString()).slice(-20_000)));
  const stop = async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = once(proc, 'exit');
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  try {
    await until(`${what} to be ready`, async () => {
      if (proc.exitCode !== null) throw new Error(`${what} exited with ${proc.exitCode}: ${log.slice(-2000)}`);
      return (await fetch(`${url}/-/ready`, { signal: AbortSignal.timeout(2_000) })).ok ? true : undefined;
    }, 30_000);
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, pid: proc.pid ?? -1, log: () => log, stop };
}

/** Prometheus scraping `target` (host:port) every second and evaluating `rulesYaml` every second, alerting `alertmanager` (host:port). */
export async function startPrometheus(bin: string, dir: string, o: { target: string; rulesYaml: string; alertmanager: string }): Promise<Served> {
  writeFileSync(join(dir, 'rules.yml'), o.rulesYaml);
  writeFileSync(
    join(dir, 'prometheus.yml'),
    [
      'global: { scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s }',
      `rule_files: [${JSON.stringify(join(dir, 'rules.yml'))}]`,
      `alerting: { alertmanagers: [ { static_configs: [ { targets: ['${o.alertmanager}'] } ] } ] }`,
      `scrape_configs: [ { job_name: lookout, static_configs: [ { targets: ['${o.target}'] } ] } ]`,
      '',
    ].join('\n'),
  );
  const port = await freePort();
  return serve(
    'prometheus',
    bin,
    [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'prom-data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'],
    `http://127.0.0.1:${port}`,
  );
}

/** Alertmanager (no cluster) sending every group to `webhookUrl`. */
export async function startAlertmanager(bin: string, dir: string, o: { webhookUrl: string; groupBy: string[]; groupWait: string; groupInterval: string }): Promise<Served> {
  writeFileSync(
    join(dir, 'alertmanager.yml'),
    [
      'route:',
      '  receiver: sink',
      `  group_by: [${o.groupBy.join(', ')}]`,
      `  group_wait: ${o.groupWait}`,
      `  group_interval: ${o.groupInterval}`,
      '  repeat_interval: 4h',
      'receivers:',
      '  - name: sink',
      `    webhook_configs: [ { url: ${JSON.stringify(o.webhookUrl)}, send_resolved: false } ]`,
      '',
    ].join('\n'),
  );
  const port = await freePort();
  return serve(
    'alertmanager',
    bin,
    [`--config.file=${join(dir, 'alertmanager.yml')}`, `--storage.path=${join(dir, 'am-data')}`, `--web.listen-address=127.0.0.1:${port}`, '--cluster.listen-address=', '--log.level=warn'],
    `http://127.0.0.1:${port}`,
  );
}
