/**
 * `npm run bench -- --quick` as CI runs it, so the benchmarks never rot: every benchmark runs to its row, none
 * fails, and the targets table judges B1–B12. No timing is asserted (the figures are for docs/performance.md).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { expect, it } from 'vitest';
import { tool } from './tools.js';

const promTools = [tool('prometheus', 'prometheus', { probe: true }), tool('prometheus-alertmanager', 'prometheus-alertmanager', { probe: true })];

it('npm run bench -- --quick runs every benchmark and prints the targets table', async () => {
  expect(existsSync('dist/bench/index.js'), 'run `npm run build` first (npm test does)').toBe(true);
  const child = spawn(process.execPath, ['dist/bench/index.js', '--quick'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 280_000);
  const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
  clearTimeout(timer);
  expect(code, `${out}\n${err}`).toBe(0);
  expect(out).not.toMatch(/FAILED/);
  for (const name of ['client.metrics', 'client.positions', 'store.save', 'store.replay', 'backtest.replay', 'backtest.buckets', 'rules.seven', 'rules.seven.incident', 'metrics.http', 'e2e.markets', 'e2e.positions', 'e2e.metrics.polling', 'e2e.small', 'storm', 'cycles']) {
    expect(out, name).toMatch(new RegExp(`^\\| ${name.replace('.', '\\.')}\\s`, 'm'));
  }
  // B8 needs the Debian packages: installed (or under CI, which installs them) a row; else a note saying what is missing.
  if (promTools.every((t) => !t.skip)) expect(out).toMatch(/^\| alert\.latency\s/m);
  else expect(out).toMatch(/^alert\.latency: not measured: prometheus(-alertmanager)? not installed/m);
  const targets = [...out.matchAll(/^\| (B\d+s?) \|.*\| (met|missed|not measured) \|$/gm)].map((m) => m[1]);
  expect(targets).toEqual(['B1', 'B2', 'B3', 'B4', 'B5', 'B6', 'B6s', 'B7', 'B8', 'B9', 'B10', 'B11', 'B12']);
}, 300_000);
