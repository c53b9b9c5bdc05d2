/**
 * The CLI against a running daemon (issue 18, item 7): `lookout alerts|rules|silence … --url` as child processes talk
 * to a real `lookout run` on the simulator through its HTTP API — run from a folder with no config and no DB, so
 * nothing but the API can answer. With `server.token` set, the same commands without the token are refused (401,
 * nothing stored) and with it (--token or LOOKOUT_TOKEN) work; the token never appears in what the CLI prints.
 */
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, DaemonProcess, freePort, getJson, until } from './fixtures/daemon/harness.js';
import { daemonScope } from './fixtures/daemon/scope.js';
import { configObject, writeConfig, type SimHandle } from './fixtures/daemon/world.js';

const { dirs, startSim } = daemonScope();

const TOKEN = 'cli-url-token-5f2a9c';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** `lookout ARGS` as a child process in `cwd`, with LOOKOUT_URL/LOOKOUT_TOKEN only as `env` gives them. */
function lookout(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  const base = { ...process.env };
  delete base.LOOKOUT_URL;
  delete base.LOOKOUT_TOKEN;
  return new Promise((resolve, reject) =>
    execFile(process.execPath, [CLI, ...args], { cwd, env: { ...base, ...env }, timeout: 30_000 }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') reject(err);
      else resolve({ code: err ? (err.code as number) : 0, stdout, stderr });
    }),
  );
}

/** Two rules that fire at once on the calm simulator: a critical one on market #0 and a warning on market #1. */
function rules(s: SimHandle): Array<Record<string, unknown>> {
  return [
    { name: 'util-critical', kind: 'utilization_above', severity: 'critical', select: { market_id: s.market(0) }, threshold: 0.001 },
    { name: 'util-warning', kind: 'utilization_above', severity: 'warning', select: { market_id: s.market(1) }, threshold: 0.001 },
  ];
}

async function startDaemon(token?: string): Promise<{ url: string; db: string; cwd: string; sim: SimHandle }> {
  const sim = await startSim({ scenario: 'calm' });
  const dir = dirs.make();
  const db = join(dir, 'lookout.db');
  const cfg = configObject({ sim, db, rules: rules(sim) }) as { server: Record<string, unknown> };
  if (token) cfg.server.token = token;
  const { daemon, url } = await DaemonProcess.start(writeConfig(join(dir, 'lookout.yaml'), cfg));
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  await until(
    'both rules firing',
    async () => {
      const res = await fetch(`${url}/api/alerts?state=firing`, { headers, signal: AbortSignal.timeout(5_000) });
      const list = (await res.json()) as Array<{ rule: string }>;
      return list.length >= 2 ? list : undefined;
    },
    20_000,
    () => daemon.diag(),
  );
  // The CLI runs elsewhere: an empty folder, no config.yaml, no DB file.
  return { url, db, cwd: dirs.make(), sim };
}

describe('the CLI reaches a running daemon with --url', () => {
  it('alerts (with --match, --rule, --severity), rules and silence add|list|expire work against the API, with no local config or DB', async () => {
    const { url, cwd, sim } = await startDaemon();

    const all = await lookout(cwd, ['alerts', '--url', url]);
    expect(all.code, all.stderr).toBe(0);
    expect(all.stdout).toMatch(/^RULE\s+ENTITY\s+STATE\s+SEVERITY\s+SINCE\s+LAST NOTIFIED$/m);
    expect(all.stdout).toMatch(/^util-critical\s.*\sfiring\s+critical\s/m);
    expect(all.stdout).toMatch(/^util-warning\s.*\sfiring\s+warning\s/m);

    const critical = await lookout(cwd, ['alerts', '--severity', 'critical', '--json'], { LOOKOUT_URL: url });
    expect(critical.code, critical.stderr).toBe(0);
    const crit = JSON.parse(critical.stdout) as Array<{ rule: string; since: string }>;
    expect(crit.map((a) => a.rule)).toEqual(['util-critical']);
    expect(crit[0]!.since).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const byLabel = await lookout(cwd, ['alerts', '--url', url, '--json', '--match', `market_id=${sim.market(1)}`]);
    expect((JSON.parse(byLabel.stdout) as Array<{ rule: string }>).map((a) => a.rule)).toEqual(['util-warning']);
    const byRegex = await lookout(cwd, ['alerts', '--url', url, '--json', '--match', 'rule=~util-.*', '--match', 'severity!=critical']);
    expect((JSON.parse(byRegex.stdout) as Array<{ rule: string }>).map((a) => a.rule)).toEqual(['util-warning']);
    const byRule = await lookout(cwd, ['alerts', '--url', url, '--rule', 'util-critical']);
    expect(byRule.stdout).toMatch(/^util-critical\s/m);
    expect(byRule.stdout).not.toMatch(/util-warning/);

    const listed = await lookout(cwd, ['rules', '--url', url]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/^NAME\s+KIND\s+SEVERITY\s+FOR\s+ENABLED\s+SOURCE$/m);
    expect(listed.stdout).toMatch(/^util-critical\s+utilization_above\s+critical\s+0s\s+yes\s+.*lookout\.yaml:\d+:\d+$/m);
    expect(listed.stdout).toMatch(/^util-warning\s+utilization_above\s+warning\s/m);

    const add = await lookout(cwd, ['silence', 'add', '--url', url, '--match', 'rule=util-warning', '--for', '1h', '--comment', 'maintenance']);
    expect(add.code, add.stderr).toBe(0);
    const id = add.stdout.trim();
    const stored = await getJson<Array<{ id: string; author: string; comment: string }>>(`${url}/api/silences`);
    expect(stored).toEqual([expect.objectContaining({ id, author: userInfo().username, comment: 'maintenance' })]);

    const list = await lookout(cwd, ['silence', 'list', '--url', url, '--json']);
    expect(list.code, list.stderr).toBe(0);
    const silences = JSON.parse(list.stdout) as Array<{ id: string; status: string; endsAt: string }>;
    expect(silences).toEqual([expect.objectContaining({ id, status: 'active', endsAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/) })]);

    const expire = await lookout(cwd, ['silence', 'expire', '--url', url, id]);
    expect(expire.code, expire.stderr).toBe(0);
    expect(await getJson(`${url}/api/silences`)).toEqual([]);
    const again = await lookout(cwd, ['silence', 'expire', '--url', url, 'no-such-id']);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/no silence with id 'no-such-id'/);

    // Nothing was written where the CLI ran.
    expect(readdirSync(cwd)).toEqual([]);
  }, 90_000);

  it('with server.token: without the token 401 (nothing stored), with it the same commands work; the token is never printed', async () => {
    const { url, cwd } = await startDaemon(TOKEN);
    const silenceArgs = ['silence', 'add', '--url', url, '--match', 'rule=util-warning', '--for', '1h', '--comment', 'with token?'];

    const alertsNoToken = await lookout(cwd, ['alerts', '--url', url]);
    expect(alertsNoToken.code).not.toBe(0);
    expect(alertsNoToken.stderr).toMatch(/wants a token \(server\.token\): pass --token or set LOOKOUT_TOKEN/);
    const addNoToken = await lookout(cwd, silenceArgs);
    expect(addNoToken.code).not.toBe(0);
    expect(addNoToken.stderr).toMatch(/wants a token/);
    const wrong = await lookout(cwd, [...silenceArgs, '--token', 'not-the-token-at-all']);
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toMatch(/did not accept the token/);
    expect(wrong.stderr).not.toContain('not-the-token-at-all');
    const auth = { authorization: `Bearer ${TOKEN}` };
    const none = await fetch(`${url}/api/silences`, { headers: auth, signal: AbortSignal.timeout(5_000) });
    expect(await none.json()).toEqual([]);

    const alerts = await lookout(cwd, ['alerts', '--url', url], { LOOKOUT_TOKEN: TOKEN });
    expect(alerts.code, alerts.stderr).toBe(0);
    expect(alerts.stdout).toMatch(/^util-critical\s/m);
    const add = await lookout(cwd, [...silenceArgs, '--token', TOKEN]);
    expect(add.code, add.stderr).toBe(0);
    const listed = await lookout(cwd, ['silence', 'list', '--url', url], { LOOKOUT_TOKEN: TOKEN });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(add.stdout.trim());

    for (const r of [alertsNoToken, addNoToken, wrong, alerts, add, listed]) {
      expect(r.stdout + r.stderr).not.toContain(TOKEN);
    }
  }, 90_000);

  it('no daemon at --url: one line naming the URL and the cause, exit 2, the token not in it', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const r = await lookout(dirs.make(), ['alerts', '--url', url, '--token', TOKEN]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`lookout: cannot reach the daemon at ${url}: ECONNREFUSED (is \`lookout run\` listening there?) (E_DAEMON)\n`);
  }, 30_000);
});
