/**
 * The rule-side commands of issue 18 as a user runs them (the built CLI, child processes): `check --rules FILE` checks
 * rule files alone like `promtool check rules`, `test --run NAME` runs one rule test, `rules` lists the loaded rules.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');

function lookout(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) =>
    execFile(process.execPath, ['dist/cli.js', ...args], { cwd: root, timeout: 30_000 }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') reject(err);
      else resolve({ code: err ? (err.code as number) : 0, stdout, stderr });
    }),
  );
}

beforeAll(() => {
  if (!existsSync(join(root, 'dist', 'cli.js'))) throw new Error('dist/cli.js is missing: run `npm run build`');
});

describe('lookout check --rules FILE', () => {
  it('a rule file with mistakes: every one as file:line:col, exit 1, no config needed', async () => {
    const file = 'test/config/fixtures/every-mistake-rules.yaml';
    const r = await lookout('check', '--rules', file);
    expect(r.code).toBe(1);
    expect(r.stderr.split('\n')).toEqual([
      `${file}:4:5: unknown key 'windw' — did you mean 'window'?`,
      `${file}:6:5: missing required key 'op'`,
      `${file}:13:15: severity: 'high' is not one of info, warning, critical`,
      `${file}:18:18: clear_below: must be below threshold (0.95 ≥ 0.92)`,
      `${file}:24:16: summary: unknown field 'utilizaton' in template for a market reading (did you mean 'utilization'?)`,
      '5 problems found',
      '',
    ]);
  });

  it('the starter rule files pass, each with its count; a name used in two of the files given is a problem', async () => {
    const ok = await lookout('check', '--rules', 'rules/markets.yaml', '--rules', 'rules/oracles.yaml');
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/^rules\/markets\.yaml: OK, 4 rules: market-utilization-warning, /m);
    expect(ok.stdout).toMatch(/^rules\/oracles\.yaml: OK, 7 rules: /m);
    const twice = await lookout('check', '--rules', 'rules/markets.yaml', '--rules', 'rules/markets.yaml');
    expect(twice.code).toBe(1);
    expect(twice.stderr).toMatch(/^rules\/markets\.yaml:15:5: duplicate rule name 'market-utilization-warning' \(first at rules\/markets\.yaml:15:5\)$/m);
  });
});

describe('lookout test --run NAME', () => {
  const file = 'rules/tests/markets.test.yaml';

  it('runs only the test of that name', async () => {
    const all = await lookout('test', file);
    const total = Number(/^(\d+) passed, 0 failed$/m.exec(all.stdout)?.[1]);
    expect(total).toBeGreaterThan(1);
    const name = /^ {2}✓ (.+)$/m.exec(all.stdout)![1]!;
    const one = await lookout('test', file, '--run', name);
    expect(one.code, one.stdout).toBe(0);
    expect(one.stdout.split('\n').filter((l) => /^ {2}[✓✗] /.test(l))).toEqual([`  ✓ ${name}`]);
    expect(one.stdout).toMatch(/^1 passed, 0 failed$/m);
  });

  it('a name no test has: exit 1 and says so', async () => {
    const r = await lookout('test', file, '--run', 'no such test');
    expect(r.code).toBe(1);
    expect(r.stdout).toBe(`no test named or matching 'no such test' in ${file}\n`);
  });
});

describe('lookout rules', () => {
  it('lists the rules the config loads, with kind, severity, for and where each is written', async () => {
    const r = await lookout('rules', '-c', 'config.example.yaml');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^NAME\s+KIND\s+SEVERITY\s+FOR\s+ENABLED\s+SOURCE$/m);
    expect(r.stdout).toMatch(/^market-utilization-warning\s+utilization_above\s+warning\s+10m\s+yes\s+rules\/markets\.yaml:15:5$/m);
    const json = JSON.parse((await lookout('rules', '-c', 'config.example.yaml', '--json')).stdout) as Array<{ name: string }>;
    expect(json.length).toBeGreaterThan(10);
  });
});
