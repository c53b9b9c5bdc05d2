/** `lookout demo`: a newcomer sees real alerts of every kind within a minute, and /metrics answers meanwhile. */
import { afterEach, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';

let child: ChildProcess | undefined;
afterEach(() => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
});

/** Resolves when `predicate` holds for the text seen so far, or rejects at the deadline. */
function waitFor(getText: () => string, predicate: (text: string) => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  return new Promise((resolve, reject) => {
    const check = () => {
      if (predicate(getText())) return resolve();
      if (Date.now() > deadline) return reject(new Error(`timed out waiting for ${what}; output so far:\n${getText()}`));
      setTimeout(check, 100);
    };
    check();
  });
}

describe('lookout demo', () => {
  it(
    'fires utilization, APY jump, oracle lag, unverified position and stale benchmark alerts, resolves one, serves /metrics, exits 0 on SIGINT',
    async () => {
      expect(existsSync('dist/cli.js'), 'run `npm run build` first (npm test does)').toBe(true);
      child = spawn(process.execPath, ['dist/cli.js', 'demo', '--duration', '45s'], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
      const exited = new Promise<number | null>((res) => child!.once('exit', (code) => res(code)));

      await waitFor(() => out, (t) => /metrics\s+http:\/\/127\.0\.0\.1:\d+\/metrics/.test(t), 20_000, 'the banner');
      const metricsUrl = /metrics\s+(http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(out)![1]!;
      expect(out).toMatch(/status page\s+http:\/\/127\.0\.0\.1:\d+\//);
      expect(out).toMatch(/database\s+\S+lookout\.db/);

      const firing = (rule: RegExp) => new RegExp(`FIRING \\w+ ${rule.source}`);
      const expected = {
        utilization: firing(/utilization-critical/),
        'APY jump': firing(/borrow-apy-jump/),
        'oracle lag': firing(/oracle-lag/),
        'unverified position': firing(/unverified-position/),
        'stale benchmark': firing(/benchmark-stale/),
        resolved: /RESOLVED \w+ /,
      };
      await waitFor(() => out, (t) => Object.values(expected).every((re) => re.test(t)), 44_000, 'a firing alert of each kind and a resolve');

      // /metrics answers during the run, with a market's utilization.
      const res = await fetch(metricsUrl);
      expect(res.status).toBe(200);
      expect(await res.text()).toMatch(/^lookout_market_utilization_ratio\{/m);

      child.kill('SIGINT');
      expect(await exited).toBe(0);
      expect(out).toMatch(/lookout demo: stopped\./);
      // Plain output when not a TTY: no colour codes.
      expect(out).not.toMatch(/\x1b\[/);
      // Nothing went wrong along the way.
      expect(err).not.toMatch(/"level":"error"/);
    },
    70_000,
  );
});
