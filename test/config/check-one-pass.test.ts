/**
 * `lookout check` reports every problem in one run (issue 18): an unset variable, a 7-field cron, a duplicate poll
 * name, unknown notifiers, a key typo, a missing key, a bad severity, clear_below ≥ threshold and a template typo,
 * all at once, each as file:line:col — before, the unset variable stopped it at one problem and fixing that showed
 * the others in two more rounds. Run as the user runs it: the built CLI, as a child process.
 */
import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');
const config = 'test/config/fixtures/every-mistake.yaml';
const rules = 'test/config/fixtures/every-mistake-rules.yaml';

function check(env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) =>
    execFile(process.execPath, ['dist/cli.js', 'check', '-c', config], { cwd: root, env, timeout: 20_000 }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') reject(err);
      else resolve({ code: err ? (err.code as number) : 0, stdout, stderr });
    }),
  );
}

describe('lookout check: every mistake in one run', () => {
  it('a config and rule file with every mistake of issue 18 → all reported at once, each with file:line:col, exit 1', async () => {
    expect(existsSync(join(root, 'dist', 'cli.js')), 'run `npm run build` first (npm test does)').toBe(true);
    const env = { ...process.env };
    delete env.SLACK_WEBHOOK_URL;
    const r = await check(env);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.split('\n')).toEqual([
      `${config}:7:11: invalid cron expression '0 */5 * * * * *' (expression: expected 5 or 6 fields but got 7)`,
      `${config}:8:11: duplicate poll name 'markets'`,
      `${config}:17:18: environment variable SLACK_WEBHOOK_URL is not set (write \${SLACK_WEBHOOK_URL:-default} to give a default)`,
      `${config}:20:22: unknown notifier 'pager'`,
      `${rules}:4:5: unknown key 'windw' — did you mean 'window'?`,
      `${rules}:6:5: missing required key 'op'`,
      `${rules}:13:15: severity: 'high' is not one of info, warning, critical`,
      `${rules}:18:18: clear_below: must be below threshold (0.95 ≥ 0.92)`,
      `${rules}:19:14: rule 'utilization-hovering' notifies 'risk-slak', which is not in notifiers — did you mean 'risk-slack'?`,
      `${rules}:24:16: summary: unknown field 'utilizaton' in template for a market reading (did you mean 'utilization'?)`,
      '10 problems found',
      '',
    ]);
  });

  it('with the variable set, the same run finds the same other nine — and never prints the webhook URL', async () => {
    const secret = 'https://hooks.slack.com/services/T000/B000/sekrit-token';
    const r = await check({ ...process.env, SLACK_WEBHOOK_URL: secret });
    expect(r.code).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines.at(-1)).toBe('9 problems found');
    expect(lines.filter((l) => /^test\/config\/fixtures\/every-mistake(-rules)?\.yaml:\d+:\d+: /.test(l))).toHaveLength(9);
    expect(r.stderr).not.toContain('sekrit');
  });
});
