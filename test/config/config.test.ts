import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, loadConfigText } from '../../src/config/load.js';
import { ConfigError } from '../../src/errors.js';
import { runCheck } from '../../src/commands/check.js';
import { parseDuration, formatDuration } from '../../src/config/duration.js';
import { interpolate } from '../../src/config/env.js';

const dir = 'test/config/fixtures';
const root = join(import.meta.dirname, '..', '..');
const badDurationLine = "test/config/fixtures/bad-duration.yaml:3:12: timeout: invalid duration '10 seconds': write it like 30s, 5m, 2h or 7d";

function check(file: string, env: NodeJS.ProcessEnv = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const code = runCheck(file, { out: (l) => out.push(l), err: (l) => err.push(l) }, env);
  return { code, out, err };
}

describe('lookout check: one fixture per config error, exact message and position', () => {
  it.each([
    ['YAML syntax error', 'syntax-error.yaml', ['test/config/fixtures/syntax-error.yaml:7:1: Sequence item without - indicator']],
    [
      'unknown key in a rule (a typo must not pass silently)',
      'unknown-key.yaml',
      [
        "test/config/fixtures/unknown-key.yaml:11:7: unknown key 'treshold' — did you mean 'threshold'?",
      ],
    ],
    [
      'unknown rule kind',
      'unknown-rule-kind.yaml',
      [expect.stringMatching(/^test\/config\/fixtures\/unknown-rule-kind\.yaml:10:13: unknown rule kind 'utilisation_above' \(known: utilization_above, /)],
    ],
    ['bad duration', 'bad-duration.yaml', [badDurationLine]],
    [
      'bad cron expression',
      'bad-cron.yaml',
      ["test/config/fixtures/bad-cron.yaml:6:11: invalid cron expression '61 * * * *' (minute: 61 is a invalid expression for minute)"],
    ],
    [
      'unset environment variable',
      'missing-env.yaml',
      [
        'test/config/fixtures/missing-env.yaml:3:12: environment variable LOOKOUT_TEST_SURELY_UNSET_KEY is not set (write ${LOOKOUT_TEST_SURELY_UNSET_KEY:-default} to give a default)',
      ],
    ],
    [
      'an allowed host written as a URL',
      'bad-allowed-host.yaml',
      [
        'test/config/fixtures/bad-allowed-host.yaml:4:28: allowed_hosts: an allowed host is a name (lookout), a domain with a leading dot (.example.com: it and its subdomains), or * (any)',
      ],
    ],
    ['route naming an unknown notifier', 'unknown-notifier.yaml', ["test/config/fixtures/unknown-notifier.yaml:11:22: unknown notifier 'risk-slak'"]],
    [
      'unknown poll kind',
      'unknown-poll-kind.yaml',
      ["test/config/fixtures/unknown-poll-kind.yaml:5:11: unknown poll kind 'market' (known: metrics, positions, assets, holdings, performance, benchmarks)"],
    ],
    [
      'a mistake inside a rule file names the rule file',
      'rule-file-error.yaml',
      ["test/config/fixtures/rules-bad/markets.yaml:8:10: for: invalid duration 'ten minutes': write it like 30s, 5m, 2h or 7d"],
    ],
    [
      'duplicate rule name across files',
      'duplicate-rule.yaml',
      ["test/config/fixtures/base-rules.yaml:2:5: duplicate rule name 'util-high' (first at test/config/fixtures/duplicate-rule.yaml:10:7)"],
    ],
    [
      'a slack notifier in both modes',
      'slack-both-modes.yaml',
      ['test/config/fixtures/slack-both-modes.yaml:11:12: token: a slack notifier takes either webhook_url, or token and channel (bot mode), not both'],
    ],
    ['a slack bot token without a channel', 'slack-token-no-channel.yaml', ['test/config/fixtures/slack-token-no-channel.yaml:9:5: channel: bot mode (token) needs a channel to post in']],
    ['rule file glob matching nothing', 'no-match.yaml', ["test/config/fixtures/no-match.yaml:8:11: rule file pattern 'nothing-here/*.yaml' matches no file"]],
  ])('%s → exit 1 with file:line:col', (_name, file, expected) => {
    const r = check(join(dir, file));
    expect(r.code).toBe(1);
    expect(r.err.slice(0, -1)).toEqual(expected);
    expect(r.err.at(-1)).toMatch(/^\d+ problems? found$/);
  });

  it('the built CLI, as a child process: `node dist/cli.js check -c` a bad config exits 1 with the file:line:col line on stderr', async () => {
    expect(existsSync(join(root, 'dist', 'cli.js')), 'run `npm run build` first (npm test does)').toBe(true);
    const r = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve, reject) =>
      execFile(process.execPath, ['dist/cli.js', 'check', '-c', join(dir, 'bad-duration.yaml')], { cwd: root, timeout: 20_000 }, (err, stdout, stderr) => {
        if (err && typeof err.code !== 'number') reject(err); // not started, or killed by the timeout
        else resolve({ code: err ? (err.code as number) : 0, stdout, stderr });
      }),
    );
    expect(r.code).toBe(1);
    expect(r.stderr.split('\n')).toEqual([badDurationLine, '1 problem found', '']);
    expect(r.stdout).toBe('');
  });

  it('a valid config prints a summary and exits 0', () => {
    const r = check(join(dir, 'good.yaml'), { LOOKOUT_TEST_API_KEY: 'k-123456' });
    expect(r.code).toBe(0);
    expect(r.out.join('\n')).toMatch(/polls \(2\): markets \[metrics/);
    expect(r.out.join('\n')).toMatch(/rules \(1\)/);
    expect(r.out.join('\n')).toMatch(/notifiers \(1\): stdout \[console\]/);
  });
});

describe('config values', () => {
  it('interpolates ${VAR} and ${VAR:-default} from the environment and keeps secrets for redaction', () => {
    const cfg = loadConfig(join(dir, 'good.yaml'), { env: { LOOKOUT_TEST_API_KEY: 'secret-key-42' } });
    expect(cfg.source.api_key).toBe('secret-key-42');
    expect(cfg.source.base_url).toBe('http://127.0.0.1:8080');
    expect(cfg.secrets).toContain('secret-key-42');
    const other = loadConfig(join(dir, 'good.yaml'), { env: { LOOKOUT_TEST_API_KEY: 'k-1', LOOKOUT_TEST_BASE_URL: 'http://10.0.0.1:9' } });
    expect(other.source.base_url).toBe('http://10.0.0.1:9');
  });

  it('applies defaults and parses durations to milliseconds', () => {
    const cfg = loadConfig(join(dir, 'good.yaml'), { env: { LOOKOUT_TEST_API_KEY: 'k-1' } });
    expect(cfg.source.timeout).toBe(5_000);
    expect(cfg.source.retries).toBe(3);
    expect(cfg.storage.retention).toBe(7 * 86_400_000);
    expect(cfg.source.catalog_url).toBe(cfg.source.base_url);
    expect(cfg.storage.path).toMatch(/test\/config\/fixtures\/data\/lookout\.db$/);
    expect(cfg.rules[0]?.rule).toMatchObject({ name: 'util-high', kind: 'utilization_above', threshold: 0.95, for: 0, severity: 'warning' });
  });

  it('a plain ${VAR} that holds a number reads as a number; a quoted one stays a string', () => {
    const text = 'source:\n  base_url: http://x.test\n  retries: ${R}\n  api_key: "${R}"\npolls:\n  - {name: m, kind: metrics, cron: "* * * * *"}\n';
    const cfg = loadConfigText('inline.yaml', text, { env: { R: '5' } });
    expect(cfg.source.retries).toBe(5);
    expect(cfg.source.api_key).toBe('5');
  });

  it('storage.raw_retention shorter than a rule window is a problem at its line, or at the top when left at its default', () => {
    const text = (storage: string) =>
      `source:\n  base_url: http://x.test\n${storage}polls:\n  - {name: m, kind: metrics, cron: "* * * * *"}\nrules:\n  inline:\n    - {name: jump, kind: apy_jump, severity: warning, window: 3d, min_change: 0.02}\n`;
    const problems = (t: string) => {
      try {
        loadConfigText('r.yaml', t, { env: {} });
        return [];
      } catch (err) {
        return (err as ConfigError).problems.map((p) => `${p.file}:${p.line}:${p.col}: ${p.message}`);
      }
    };
    expect(problems(text('storage:\n  raw_retention: 1d\n'))).toEqual([
      "r.yaml:4:18: storage.raw_retention (1d) is shorter than the window of rule 'jump' (3d, r.yaml:9:7): it would judge 5-minute buckets; set raw_retention to 3d or more",
    ]);
    expect(problems(text(''))).toEqual([expect.stringMatching(/^r\.yaml:1:1: storage\.raw_retention \(2d, the default\) is shorter than the window of rule 'jump' \(3d/)]);
    expect(loadConfigText('r.yaml', text('storage:\n  raw_retention: 3d\n'), { env: {} }).storage.raw_retention).toBe(3 * 86_400_000);
  });

  it('server.external_url takes an http(s) URL in any case of the scheme, and refuses anything else', () => {
    const text = (u: string) => `source:\n  base_url: http://x.test\nserver:\n  external_url: ${u}\npolls:\n  - {name: m, kind: metrics, cron: "* * * * *"}\n`;
    for (const u of ['https://lookout.example.com', 'HTTPS://Lookout.example.com/', 'http://10.0.0.5:9464/lookout']) expect(loadConfigText('u.yaml', text(u), { env: {} }).server.external_url).toBe(u);
    for (const u of ['javascript:alert(1)', 'lookout.example.com', 'ftp://x']) expect(() => loadConfigText('u.yaml', text(u), { env: {} }), u).toThrow(/external_url must be an http\(s\) URL/);
  });

  it('collects every problem, not just the first', () => {
    const text = 'source:\n  base_url: nope\n  timeout: 5 minutes\npolls: []\nbogus: 1\n';
    try {
      loadConfigText('many.yaml', text, { env: {} });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const msgs = (err as ConfigError).problems.map((p) => `${p.line}:${p.col} ${p.message}`);
      expect(msgs).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^2:13 base_url: /),
          "3:12 timeout: invalid duration '5 minutes': write it like 30s, 5m, 2h or 7d",
          expect.stringMatching(/^4:8 polls: /),
          "5:1 unknown key 'bogus'",
        ]),
      );
    }
  });

  it('a secret in a config value never appears in a problem message', () => {
    const dirTmp = mkdtempSync(join(tmpdir(), 'lookout-cfg-'));
    try {
      const file = join(dirTmp, 'c.yaml');
      // Each secret also sits where it fails validation, so a message that quotes the value it got would show it.
      writeFileSync(
        file,
        [
          'source:\n  base_url: http://x.test\n  api_key: ${KEY}\n  retries: ${KEY}',
          'server:\n  token: ${TOKEN}\n  allowed_hosts: ${TOKEN}',
          'polls:\n  - {name: m, kind: metrics, cron: "* * * * *"}',
          'notifiers:\n  s:\n    type: slack\n    webhook_url: ${HOOK}\n    rate_limit: ${HOOK}',
          '  w:\n    type: webhook\n    url: https://example.test/hook\n    headers: {authorization: "Bearer pasted-header-secret"}\n    timeout: Bearer pasted-header-secret',
        ].join('\n') + '\n',
      );
      const r = check(file, { KEY: 'super-secret-api-key', TOKEN: 'server-token-secret', HOOK: 'https://hooks.slack.com/services/T0/B0/hook-secret' });
      expect(r.code).toBe(1);
      const text = r.err.join('\n');
      expect(r.err.filter((l) => /retries|allowed_hosts|rate_limit|timeout/.test(l)), text).toHaveLength(4); // each failing value reported
      for (const secret of ['super-secret-api-key', 'server-token-secret', 'hook-secret', 'pasted-header-secret']) expect(text).not.toContain(secret);
    } finally {
      rmSync(dirTmp, { recursive: true, force: true });
    }
  });
});

describe('durations and interpolation', () => {
  it.each([
    ['30s', 30_000],
    ['5m', 300_000],
    ['2h', 7_200_000],
    ['7d', 604_800_000],
    ['1h30m', 5_400_000],
    ['250ms', 250],
    ['0', 0],
    ['10 seconds', undefined],
    ['5', undefined],
    ['-5m', undefined],
  ])('parseDuration(%j) = %j', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it('formatDuration is the inverse for whole units', () => {
    for (const t of ['45s', '1h30m', '2d', '250ms']) expect(formatDuration(parseDuration(t)!)).toBe(t);
  });

  it('interpolate reports unset variables and honours defaults and $$', () => {
    expect(interpolate('a ${X} b', { X: '1' })).toEqual({ value: 'a 1 b', missing: [] });
    expect(interpolate('${Y:-dflt}', {})).toEqual({ value: 'dflt', missing: [] });
    expect(interpolate('${Z}', {})).toEqual({ value: '', missing: ['Z'] });
    expect(interpolate('cost $$5', {})).toEqual({ value: 'cost $5', missing: [] });
  });
});

describe('shard from the environment (LOOKOUT_SHARD_INDEX, LOOKOUT_SHARD_TOTAL)', () => {
  const text = 'source:\n  base_url: http://x.test\npolls:\n  - {name: m, kind: metrics, cron: "* * * * *"}\nshard: {index: 0, total: 2}\n';
  const problems = (env: Record<string, string>) => {
    try {
      loadConfigText('shard.yaml', text, { env });
      return [];
    } catch (err) {
      return (err as ConfigError).problems.map((p) => `${p.file}: ${p.message}`);
    }
  };
  it.each([
    [{ LOOKOUT_SHARD_INDEX: '2', LOOKOUT_SHARD_TOTAL: '3' }, { index: 2, total: 3 }],
    [{ LOOKOUT_SHARD_INDEX: 'lookout-1', LOOKOUT_SHARD_TOTAL: '4' }, { index: 1, total: 4 }],
    [{}, { index: 0, total: 2 }],
  ])('%j replaces the file’s shard: %j', (env, shard) => {
    expect(loadConfigText('shard.yaml', text, { env }).shard).toEqual(shard);
  });
  it.each([
    [{ LOOKOUT_SHARD_INDEX: '1' }, /set both or neither/],
    [{ LOOKOUT_SHARD_INDEX: '3', LOOKOUT_SHARD_TOTAL: '3' }, /LOOKOUT_SHARD_INDEX 3 must be below LOOKOUT_SHARD_TOTAL 3/],
    [{ LOOKOUT_SHARD_INDEX: 'lookout', LOOKOUT_SHARD_TOTAL: '3' }, /pod name ending in its ordinal/],
    [{ LOOKOUT_SHARD_INDEX: '0', LOOKOUT_SHARD_TOTAL: 'two' }, /whole number of replicas/],
  ])('%j is a clear problem', (env, message) => {
    expect(problems(env)).toEqual([expect.stringMatching(message)]);
    expect(problems(env)[0]).toMatch(/^\(environment\): /);
  });
});
