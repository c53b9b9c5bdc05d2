/**
 * The deploy/ examples (docs/scaling.md) are parsed and held against what they run: the Dockerfile's command, port
 * and volume, lookout's own config loader and CLI, the files they mount, each other's service names and ports, and
 * Alertmanager's own checker (amtool) for its config.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { loadConfigText, shardFromEnv } from '../src/config/load.js';
import { deployedEnv, mallocNote } from '../src/bench/daemon-proc.js';
import { RECOMMENDED_MALLOC } from '../src/malloc-env.js';
import { tool } from './tools.js';

const ROOT = resolve(import.meta.dirname, '..');
const DEPLOY = join(ROOT, 'deploy');
const read = (p: string) => readFileSync(join(DEPLOY, p), 'utf8');
const amtool = tool('amtool', 'prometheus-alertmanager');

/** The Dockerfile's CMD, EXPOSE and VOLUME. */
function dockerfile() {
  const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(text)![1]!) as string[];
  const expose = Number(/^EXPOSE (\d+)$/m.exec(text)![1]);
  const volume = (JSON.parse(/^VOLUME (\[.*\])$/m.exec(text)![1]!) as string[])[0]!;
  return { cmd, expose, volume };
}

/** A compose service's volumes as container path → host path (or volume name). */
function mountsOf(volumes: string[]): Record<string, string> {
  return Object.fromEntries(volumes.map((v) => { const [host, container] = v.split(':') as [string, string]; return [container, host]; }));
}

/** Loads a lookout config as a container would see it: container paths mapped to the host files mounted there. */
function loadAsContainer(text: string, mounts: Record<string, string>, env: Record<string, string>) {
  let t = text;
  for (const [inContainer, onHost] of Object.entries(mounts)) t = t.split(inContainer).join(onHost);
  return loadConfigText('config.yaml', t, { env, dir: DEPLOY });
}

describe('deploy/docker-compose.yml', () => {
  const compose = YAML.parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, any>; volumes: Record<string, unknown> };
  const services = compose.services;
  const lookouts = ['lookout-a', 'lookout-b'];
  const d = dockerfile();

  it('runs two lookout replicas built from the Dockerfile with its command, config, rules and a volume each', () => {
    for (const name of lookouts) {
      const s = services[name];
      expect(existsSync(join(DEPLOY, s.build, 'Dockerfile'))).toBe(true);
      expect(s.command).toEqual(d.cmd);
      const vols = mountsOf(s.volumes);
      expect(vols[d.cmd[2]!]).toBe('./lookout.yaml');
      expect(existsSync(join(DEPLOY, vols['/etc/lookout/rules']!))).toBe(true);
      expect(vols[d.volume]).toBe(name);
      expect(compose.volumes).toHaveProperty(name);
    }
  });

  it('their config loads with lookout’s own loader and points at the compose Alertmanagers; Prometheus’ Host is allowed', () => {
    const cfg = loadAsContainer(read('lookout.yaml'), { '/etc/lookout/rules': join(ROOT, 'rules') }, { DATA_BASE_URL: 'https://data.example' });
    expect(cfg.rules.length).toBeGreaterThan(0);
    const am = cfg.notifiers.alertmanager as { type: string; urls: string[] };
    expect(am.type).toBe('alertmanager');
    for (const u of am.urls) {
      const url = new URL(u);
      expect(services).toHaveProperty(url.hostname);
      expect(url.port).toBe('9093');
    }
    expect(cfg.routes.every((r) => r.notify.every((n) => n === 'alertmanager'))).toBe(true);
    for (const name of lookouts) expect(cfg.server.allowed_hosts).toContain(name);
    // the listener binds what the image exposes
    expect(cfg.server.listen).toBe(`0.0.0.0:${d.expose}`);
  });

  it('peers the two Alertmanagers with each other on their cluster port', () => {
    const arg = (s: any, name: string) => (s.command as string[]).find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
    for (const [me, other] of [['alertmanager-1', 'alertmanager-2'], ['alertmanager-2', 'alertmanager-1']] as const) {
      const [host, port] = arg(services[me], 'cluster.peer')!.split(':');
      expect(host).toBe(other);
      expect(arg(services[other], 'cluster.listen-address')).toBe(`0.0.0.0:${port}`);
      expect(arg(services[me], 'config.file')).toBe('/etc/alertmanager/alertmanager.yml');
    }
  });

  it.skipIf(amtool.skip)(`the Alertmanager config passes amtool check-config (${amtool.needs})`, async () => {
    const r = await promisify(execFile)(amtool.require(), ['check-config', join(DEPLOY, 'alertmanager.yml')], { timeout: 20_000 });
    expect(r.stdout).toMatch(/SUCCESS/);
  });

  it('Prometheus scrapes both replicas on the exposed port, with the shipped rules mounted', () => {
    const prom = YAML.parse(read('prometheus.yml')) as { scrape_configs: Array<{ static_configs: Array<{ targets: string[] }> }>; rule_files: string[] };
    const targets = prom.scrape_configs.flatMap((s) => s.static_configs.flatMap((c) => c.targets));
    expect(targets.sort()).toEqual(lookouts.map((n) => `${n}:${d.expose}`));
    const mounts = mountsOf(services.prometheus.volumes);
    for (const f of prom.rule_files) expect(existsSync(join(DEPLOY, mounts[f]!))).toBe(true);
  });

  it('Grafana gets the shipped dashboard and a Prometheus data source on the compose service', () => {
    const mounts = mountsOf(services.grafana.volumes);
    const dash = Object.entries(mounts).find(([c]) => c.endsWith('.json'))!;
    expect(JSON.parse(readFileSync(join(DEPLOY, dash[1]), 'utf8'))).toHaveProperty('panels');
    const provider = YAML.parse(read('grafana/provisioning/dashboards/lookout.yml')) as { providers: Array<{ options: { path: string } }> };
    expect(dash[0].startsWith(provider.providers[0]!.options.path + '/')).toBe(true);
    const ds = YAML.parse(read('grafana/provisioning/datasources/prometheus.yml')) as { datasources: Array<{ url: string }> };
    expect(services).toHaveProperty(new URL(ds.datasources[0]!.url).hostname);
    expect(new URL(ds.datasources[0]!.url).port).toBe('9090');
  });
});

describe('deploy/kubernetes/lookout.yaml', () => {
  const docs = YAML.parseAllDocuments(read('kubernetes/lookout.yaml')).map((d) => d.toJS()) as any[];
  const cm = docs.find((d) => d.kind === 'ConfigMap');
  const sts = docs.find((d) => d.kind === 'StatefulSet');
  const c = sts.spec.template.spec.containers[0];
  const d = dockerfile();

  it('a StatefulSet whose pods run the image’s command on the ConfigMap’s config, with a volume for the DB', () => {
    expect(sts.apiVersion).toBe('apps/v1');
    expect(c.args).toEqual(d.cmd);
    const configMount = c.volumeMounts.find((m: any) => m.name === 'config');
    expect(join(configMount.mountPath, 'config.yaml')).toBe(d.cmd[2]);
    expect(sts.spec.template.spec.volumes.find((v: any) => v.name === 'config').configMap.name).toBe(cm.metadata.name);
    const cfg = loadAsContainer(cm.data['config.yaml'], {}, { DATA_BASE_URL: 'https://data.example' });
    expect(cfg.storage.path.startsWith(c.volumeMounts.find((m: any) => m.name === 'data').mountPath + '/')).toBe(true);
    expect(c.ports[0].containerPort).toBe(d.expose);
    expect(cfg.server.listen).toBe(`0.0.0.0:${d.expose}`);
    expect([c.readinessProbe.httpGet.path, c.livenessProbe.httpGet.path]).toEqual(['/readyz', '/healthz']);
  });

  it('each pod takes its share from its name: lookout-a-0 … lookout-a-(n−1) are shards 0 … n−1 of n', () => {
    const env = Object.fromEntries(c.env.map((e: any) => [e.name, e]));
    expect(env.LOOKOUT_SHARD_INDEX.valueFrom.fieldRef.fieldPath).toBe('metadata.name');
    const total = Number(env.LOOKOUT_SHARD_TOTAL.value);
    expect(total).toBe(sts.spec.replicas);
    const shards = Array.from({ length: total }, (_, i) => shardFromEnv({ LOOKOUT_SHARD_INDEX: `${sts.metadata.name}-${i}`, LOOKOUT_SHARD_TOTAL: String(total) }, []));
    expect(shards).toEqual(Array.from({ length: total }, (_, i) => ({ index: i, total })));
  });
});

describe('the Dockerfile', () => {
  it("sets glibc's malloc for the runtime as the bench's daemon children run (what B6 and B6s measure is what the image runs)", () => {
    const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
    const runtime = text.slice(text.lastIndexOf('\nFROM '));
    // The last value each gets in the runtime stage's ENV lines (a later ENV overrides an earlier one).
    const image = Object.fromEntries(Object.keys(RECOMMENDED_MALLOC).map((k) => [k, [...runtime.matchAll(new RegExp(`^ENV .*\\b${k}=(\\d+)(?:\\s|$)`, 'gm'))].at(-1)?.[1]]));
    expect(image).toEqual(RECOMMENDED_MALLOC);
    const keys = [...Object.keys(RECOMMENDED_MALLOC), 'GLIBC_TUNABLES'];
    const saved = Object.fromEntries(keys.map((k) => [k, process.env[k]]));
    for (const k of keys) delete process.env[k];
    try {
      for (const [k, v] of Object.entries(RECOMMENDED_MALLOC)) expect(deployedEnv()[k]).toBe(v);
      expect(mallocNote()).toBe('MALLOC_ARENA_MAX=2 as the image sets it, MALLOC_MMAP_THRESHOLD_=32768 as the image sets it');
      // A bench run told otherwise runs its daemons so, and its notes say whose setting it was; the other stays the image's.
      process.env.MALLOC_ARENA_MAX = '8';
      expect(deployedEnv().MALLOC_ARENA_MAX).toBe('8');
      expect(deployedEnv().MALLOC_MMAP_THRESHOLD_).toBe('32768');
      expect(mallocNote()).toBe("MALLOC_ARENA_MAX=8 from the bench's environment (the image sets 2), MALLOC_MMAP_THRESHOLD_=32768 as the image sets it");
      // A tunable in GLIBC_TUNABLES wins over the variable in glibc: the bench's own tunable is not shadowed by the image's variable.
      process.env.GLIBC_TUNABLES = 'glibc.malloc.mmap_threshold=65536';
      expect(deployedEnv().MALLOC_MMAP_THRESHOLD_).toBeUndefined();
      expect(mallocNote()).toBe(
        "MALLOC_ARENA_MAX=8 from the bench's environment (the image sets 2), glibc.malloc.mmap_threshold=65536 (GLIBC_TUNABLES) from the bench's environment (the image sets 32768)",
      );
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v !== undefined) process.env[k] = v;
        else delete process.env[k];
      }
    }
  });
});
