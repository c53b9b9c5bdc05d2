/**
 * Reload of the real daemon: SIGHUP and a change of the config or a rule file. An invalid new config is reported
 * (`reload_rejected`, each problem as file:line:col) and the old one keeps polling; a valid one takes effect.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { expect, it } from 'vitest';
import { apiAlerts, DaemonProcess, until, type LogLine } from './fixtures/daemon/harness.js';
import { daemonScope } from './fixtures/daemon/scope.js';
import { configObject, writeAtomic, type ConfigInput } from './fixtures/daemon/world.js';

const { dirs, startSim } = daemonScope();

/** A rule that fires at once on one market of the calm world. */
const always = (name: string, market: string) => ({ name, kind: 'threshold', severity: 'info', select: { market_id: market }, field: 'utilization', op: '>=', value: 0 });
/** A rule that never fires in the calm world. */
const never = (name: string, market: string) => ({ name, kind: 'utilization_above', severity: 'critical', select: { market_id: market }, threshold: 0.99, clear_below: 0.9 });

const yaml = (o: unknown) => YAML.stringify(o);
const INVALID = (good: string) => good.replace('retention: 1d', 'retention: 1d\n  retension: 2d');

async function setup() {
  const sim = await startSim({ scenario: 'calm' });
  const dir = dirs.make();
  mkdirSync(join(dir, 'rules'));
  const ruleFile = join(dir, 'rules', 'base.yaml');
  writeFileSync(ruleFile, yaml({ rules: [never('quiet', sim.market(1))] }));
  const input: ConfigInput = { sim, db: join(dir, 'lookout.db'), ruleFiles: ['rules/*.yaml'] };
  const file = join(dir, 'lookout.yaml');
  const good = yaml(configObject(input));
  writeFileSync(file, good);
  const { daemon, url } = await DaemonProcess.start(file);
  await daemon.waitForPolls(1, 15_000);
  const alertFor = (rule: string) =>
    until(`a firing alert of ${rule} in /api/alerts`, async () => (await apiAlerts(url)).find((a) => a.rule === rule && a.state === 'firing'), 15_000, () => daemon.diag());
  return { dir, file, ruleFile, input, good, daemon, url, alertFor, market: sim.market(0) };
}

const reloaded = (l: LogLine) => l.msg === 'reloaded';
const rejected = (l: LogLine) => l.msg === 'reload_rejected';

it('SIGHUP with an invalid config is rejected and the old config keeps polling; SIGHUP with a valid one applies it', async () => {
  const { dir, file, good, daemon, url, alertFor, market } = await setup();

  writeFileSync(file, INVALID(good));
  daemon.signal('SIGHUP');
  const line = await daemon.waitForLog((l) => rejected(l) && l.why === 'SIGHUP', 10_000, 'reload_rejected after SIGHUP');
  expect(line.level).toBe('error');
  // The problem names the file, the line and the column of the unknown key.
  const at = INVALID(good).split('\n').findIndex((l) => l.includes('retension')) + 1;
  expect(line.problems).toEqual([expect.stringMatching(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:${at}:3: .*retension`))]);
  expect(daemon.count(reloaded)).toBe(0);
  // Still polling with the old config, still ready.
  await daemon.waitForPolls(2, 10_000);
  expect(daemon.running).toBe(true);
  expect((await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(5_000) })).status).toBe(200);
  expect(await apiAlerts(url)).toEqual([]);

  // Put the good file back (its watcher may reload it too), then add a rule file the watcher does not know of:
  // only SIGHUP can pick it up.
  writeFileSync(file, good);
  await daemon.waitForLog(reloaded, 10_000, 'the reload after the file was fixed');
  await daemon.waitForPolls(1, 10_000);
  expect(await apiAlerts(url)).toEqual([]);
  writeFileSync(join(dir, 'rules', 'extra.yaml'), yaml({ rules: [always('hup-rule', market)] }));
  const before = daemon.count(reloaded);
  daemon.signal('SIGHUP');
  await daemon.waitForLog(reloaded, 10_000, 'reloaded after SIGHUP', before + 1);
  const alert = await alertFor('hup-rule');
  expect(alert).toMatchObject({ rule: 'hup-rule', entity: market, state: 'firing', labels: expect.objectContaining({ market_id: market }) });
  expect(daemon.count((l) => l.level === 'error' && !rejected(l)), daemon.diag()).toBe(0);
}, 45_000);

it('a change of the config file or of a rule file reloads without a signal, also when saved by rename', async () => {
  const { file, ruleFile, input, daemon, alertFor, market } = await setup();

  // In place: the config gains an inline rule.
  writeFileSync(file, yaml(configObject({ ...input, rules: [always('inline-rule', market)] })));
  await alertFor('inline-rule');
  expect(daemon.count(reloaded)).toBeGreaterThanOrEqual(1);

  // A rule file changes.
  writeFileSync(ruleFile, yaml({ rules: [never('quiet', market), always('file-rule', market)] }));
  await alertFor('file-rule');

  // Saved by rename (as many editors do): first an invalid version, then a valid one. Both must be seen.
  const n = daemon.count(rejected);
  writeAtomic(file, INVALID(yaml(configObject({ ...input, rules: [always('inline-rule', market)] }))));
  await daemon.waitForLog(rejected, 10_000, 'reload_rejected after a rename-save of an invalid config', n + 1);
  await daemon.waitForPolls(1, 10_000);
  writeAtomic(file, yaml(configObject({ ...input, rules: [always('inline-rule', market), always('renamed-rule', market)] })));
  await alertFor('renamed-rule');
  expect(daemon.running).toBe(true);
}, 45_000);

it('a reload that changes what only a restart can apply says so (keys, never values) and keeps serving as before', async () => {
  const { file, input, daemon, url } = await setup();
  const token = `tok-${Date.now()}-secret`;
  const next = configObject({ ...input, listen: '127.0.0.1:1', logLevel: 'warn' }) as { server: Record<string, unknown> };
  next.server.token = token;
  writeAtomic(file, yaml(next));
  daemon.signal('SIGHUP');
  const line = await daemon.waitForLog((l) => l.msg === 'reload_needs_restart', 10_000, 'reload_needs_restart');
  expect(line.level).toBe('warn');
  expect(line.keys).toEqual(expect.arrayContaining(['server.listen', 'server.token', 'log.level']));
  await daemon.waitForLog(reloaded, 10_000, 'reloaded');
  // The old listener, without a token, still answers.
  expect((await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(5_000) })).status).toBe(200);
  expect((await fetch(`${url}/api/alerts`, { signal: AbortSignal.timeout(5_000) })).status).toBe(200);
  expect(daemon.stderr).not.toContain(token);
}, 30_000);
