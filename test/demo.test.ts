/** `lookout demo`: a newcomer sees real alerts of every kind within a minute, and /metrics answers meanwhile. */
import { afterEach, describe, expect, it } from 'vitest';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { parseScrape, SPEC_FAMILIES, type MetricFamily } from './metrics-fixtures.js';
import { tool } from './tools.js';

const promtool = tool('promtool', 'prometheus', { probe: true });

/** Counters that have no sample until their first error: a live scrape shows their HELP/TYPE lines only. */
const UNTIL_FIRST_ERROR = new Set(['lookout_poll_errors_total', 'lookout_rows_rejected_total', 'lookout_fields_rejected_total']);
/** The SPEC §5 families, and one of prom-client's process metrics. */
const LIVE_FAMILIES: readonly MetricFamily[] = [...SPEC_FAMILIES, { name: 'process_cpu_seconds_total', type: 'counter', labels: [] }];

/** What a live scrape lacks or gets wrong against {@link LIVE_FAMILIES}: one line per problem, none when it conforms. */
function specProblems(text: string): string[] {
  const problems: string[] = [];
  const all = parseScrape(text);
  for (const f of LIVE_FAMILIES) {
    if (!new RegExp(`^# HELP ${f.name} \\S`, 'm').test(text)) problems.push(`${f.name}: no HELP line`);
    if (!new RegExp(`^# TYPE ${f.name} ${f.type}$`, 'm').test(text)) problems.push(`${f.name}: no TYPE line of type ${f.type}`);
    const own = f.type === 'histogram' ? [`${f.name}_bucket`, `${f.name}_sum`, `${f.name}_count`] : [f.name];
    const samples = all.filter((s) => own.includes(s.name));
    if (samples.length === 0 && !UNTIL_FIRST_ERROR.has(f.name)) problems.push(`${f.name}: no sample`);
    for (const s of samples) {
      const got = Object.keys(s.labels).filter((l) => !(s.name.endsWith('_bucket') && l === 'le')).sort();
      if (got.join() !== [...f.labels].sort().join()) {
        problems.push(`${f.name}: labels {${got.join()}} instead of {${[...f.labels].sort().join()}} on ${s.name}${JSON.stringify(s.labels)}`);
        break;
      }
    }
    if (f.type === 'histogram' && !all.some((s) => s.name === `${f.name}_count` && s.value > 0)) problems.push(`${f.name}: nothing observed`);
  }
  return problems;
}

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
    'fires utilization, APY jump, oracle lag, unverified position and stale benchmark alerts, resolves one, serves every SPEC §5 metric family on a promtool-clean /metrics, exits 0 on SIGINT',
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

      // /metrics answers during the run, wired to the running daemon: every family of SPEC §5 with its label names.
      const res = await fetch(metricsUrl, { signal: AbortSignal.timeout(10_000) });
      expect(res.status).toBe(200);
      const scrape = await res.text();
      expect(specProblems(scrape)).toEqual([]);
      const samples = parseScrape(scrape);
      // Market labels carry the assets' symbols, not their addresses.
      const market = samples.find((s) => s.name === 'lookout_market_utilization_ratio')!;
      expect(market.labels.loan_asset).toMatch(/^(?!0x)\w/);
      expect(market.labels.collateral_asset).toMatch(/^(?!0x)\w/);
      // The alerts that printed are counted as firing, and the console notifier (`stdout` in the demo config) counted its sends.
      const lines = (name: string) => scrape.split('\n').filter((l) => l.startsWith(`${name}{`)).join('\n');
      expect(samples.filter((s) => s.name === 'lookout_alerts' && s.labels.state === 'firing' && s.value > 0), lines('lookout_alerts')).not.toEqual([]);
      const sent = samples.find((s) => s.name === 'lookout_notifications_total' && s.labels.notifier === 'stdout' && s.labels.outcome === 'sent');
      expect(sent?.value ?? 0, lines('lookout_notifications_total')).toBeGreaterThan(0);
      // The same live scrape passes promtool's linter (skipped without promtool outside CI; under CI a missing one fails).
      if (!promtool.skip) {
        const r = spawnSync(promtool.require(), ['check', 'metrics'], { input: scrape, encoding: 'utf8', timeout: 30_000 });
        expect(`${r.stdout}${r.stderr}`).toBe('');
        expect(r.status).toBe(0);
      }

      child.kill('SIGINT');
      expect(await exited).toBe(0);
      expect(out).toMatch(/lookout demo: stopped\./);
      // Plain output when not a TTY: no colour codes.
      expect(out).not.toMatch(/\x1b\[/);
      // Nothing went wrong along the way, and no JSON log line landed among the human lines (the demo logs as text).
      expect(err).not.toMatch(/^\d\d:\d\d:\d\d ERROR/m);
      expect(`${out}\n${err}`.split('\n').filter((l) => l.trimStart().startsWith('{'))).toEqual([]);
    },
    70_000,
  );
});
