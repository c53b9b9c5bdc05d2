/**
 * Notifications of the real daemon through a Slack-like recorder on loopback: one message per alert with untrusted
 * text escaped; kill -9 and a restart neither forget a firing alert nor announce it again, and a resolve follows
 * once; a notification pending through a Slack outage survives kill -9 and goes out once, under the same dedup key.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { createdAfter, METRICS_QUERY } from '../src/source/graphql.js';
import { apiAlerts, CLI, DaemonProcess, getJson, getText, ROOT, sample, until, type ApiAlert } from './fixtures/daemon/harness.js';
import { daemonScope } from './fixtures/daemon/scope.js';
import { utilRule, writeConfig, type ConfigInput } from './fixtures/daemon/world.js';

const { dirs, startSim, startSlack, slackWorld } = daemonScope();

const setup = (extra: Partial<ConfigInput> = {}) => slackWorld(() => extra);

const firingOf = (alerts: ApiAlert[], rule: string, entity: string) => alerts.find((a) => a.rule === rule && a.entity === entity && a.state === 'firing');

it('an alert fires and exactly one Slack message arrives for it, with the service’s text escaped for mrkdwn', async () => {
  const { file, market, slack, sim } = await setup();
  // The service names the market's tokens with Slack control sequences: serve its real answer with those names.
  const res = await fetch(`${sim.url}/yields/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': sim.sim.apiKey ?? '' },
    body: JSON.stringify({ query: METRICS_QUERY, variables: { limit: 1000, where: { created_at: { _gt: createdAfter(Date.now(), 86_400_000) } } } }),
    signal: AbortSignal.timeout(5_000),
  });
  const answer = (await res.json()) as { data: { metrics: Array<{ market_id: string; market: Record<string, unknown> }> } };
  const rows = answer.data.metrics.filter((r) => r.market_id === market);
  expect(rows.length).toBeGreaterThan(0);
  for (const r of rows) Object.assign(r.market, { loan_asset_symbol: '<!channel>', collateral_asset_symbol: '<https://evil.example|click> & co' });
  sim.sim.faults.add({ path: '/yields/graphql', method: 'POST', body: answer, times: 1_000_000 });

  const { daemon, url } = await DaemonProcess.start(file);
  await slack.waitFor('the FIRING message', (p) => p.some((x) => x.text.startsWith('FIRING') && x.text.includes(market)), 20_000, () => daemon.diag());
  await daemon.waitForLog((l) => l.msg === 'notify_sent' && l.status === 'firing', 10_000, 'notify_sent');
  // A few more polls and dispatcher rounds: still one message.
  await daemon.waitForPolls(2, 10_000);
  expect(slack.posts, slack.summary()).toHaveLength(1);
  const post = slack.posts[0]!;
  expect(post.status).toBe(200);
  expect(post.key).toMatch(/^lk-/);
  expect(post.text).toContain('util-high');
  // Escaped everywhere in the payload: no live <!channel> or link, the text still readable.
  expect(post.raw).not.toContain('<!channel>');
  expect(post.raw).not.toContain('<https://evil');
  expect(post.raw).toContain('&lt;!channel&gt;');
  expect(post.raw).toContain('&lt;https://evil.example|click&gt; &amp; co');
  const alert = firingOf(await apiAlerts(url), 'util-high', market);
  expect(alert?.last_notified).toEqual(expect.any(String));
}, 45_000);

it('kill -9 and a restart on the same DB: the alert is still firing, not announced again; when it clears, one RESOLVED', async () => {
  const { file, market, slack, sim } = await setup();
  const first = await DaemonProcess.start(file);
  await first.daemon.waitForLog((l) => l.msg === 'notify_sent' && l.status === 'firing', 20_000, 'the FIRING notification sent');
  const before = await until('the firing alert', async () => firingOf(await apiAlerts(first.url), 'util-high', market), 5_000);
  expect(slack.about('FIRING', market, true)).toHaveLength(1);
  expect(await first.daemon.kill9()).toEqual({ code: null, signal: 'SIGKILL' });

  const second = await DaemonProcess.start(file);
  const after = await until('the firing alert after the restart', async () => firingOf(await apiAlerts(second.url), 'util-high', market), 10_000, () => second.daemon.diag());
  expect(after).toMatchObject({ fingerprint: before.fingerprint, since: before.since, last_notified: before.last_notified, state: 'firing' });
  // Several polls and dispatcher rounds later: still the one FIRING message.
  await second.daemon.waitForPolls(3, 15_000);
  expect(slack.about('FIRING', market), slack.summary()).toHaveLength(1);
  expect(second.daemon.count((l) => l.msg === 'notify_sent')).toBe(0);

  // The condition clears: the same world, calm.
  await sim.swap({ scenario: 'calm', startedAt: Date.now() });
  await slack.waitFor('the RESOLVED message', (p) => p.some((x) => x.status === 200 && x.text.startsWith('RESOLVED') && x.text.includes(market)), 20_000, () => second.daemon.diag());
  await second.daemon.waitForPolls(2, 10_000);
  expect(slack.about('RESOLVED', market), slack.summary()).toHaveLength(1);
  expect(slack.about('FIRING', market), slack.summary()).toHaveLength(1);
  const resolved = slack.about('RESOLVED', market)[0]!;
  expect(resolved.key).not.toBe(slack.about('FIRING', market)[0]!.key);
  expect(firingOf(await apiAlerts(second.url), 'util-high', market)).toBeUndefined();
}, 60_000);

it('a notification pending through a Slack outage survives kill -9 and is delivered once after the restart, under the same dedup key', async () => {
  const { file, market, slack } = await setup();
  slack.respond(500);
  const first = await DaemonProcess.start(file);
  // Slack fails twice or more (retries with backoff), each time the same message.
  await first.daemon.waitForLog((l) => l.msg === 'notify_retry', 20_000, 'the second failed attempt', 2);
  expect(slack.posts.length).toBeGreaterThanOrEqual(2);
  const keys = new Set(slack.posts.map((p) => p.key));
  expect(keys.size, slack.summary()).toBe(1);
  const [key] = [...keys];
  expect(key).toMatch(/^lk-/);
  expect(slack.posts.every((p) => p.status === 500 && p.text.startsWith('FIRING') && p.text.includes(market))).toBe(true);
  await first.daemon.kill9();

  slack.respond(200);
  const failed = slack.posts.length;
  const second = await DaemonProcess.start(file);
  await slack.waitFor('the delivery after the restart', (p) => p.some((x) => x.status === 200), 20_000, () => second.daemon.diag());
  await second.daemon.waitForLog((l) => l.msg === 'notify_sent', 10_000, 'notify_sent');
  await second.daemon.waitForPolls(2, 10_000);
  const delivered = slack.delivered();
  expect(delivered, slack.summary()).toHaveLength(1);
  expect(delivered[0]!.key).toBe(key);
  // Nothing but that one delivery after the restart.
  expect(slack.posts.slice(failed).map((p) => [p.status, p.key])).toEqual([[200, key]]);
  expect(firingOf(await apiAlerts(second.url), 'util-high', market)?.last_notified).toEqual(expect.any(String));
}, 60_000);

/** How a silence on rule `util-high` is added, listed and expired: through the daemon's HTTP API, or the CLI on its DB. */
interface SilenceWay {
  add(url: string, file: string): Promise<string>;
  /** The ids of the silences in force, as this way lists them. */
  active(url: string, file: string): Promise<string[]>;
  expire(url: string, file: string, id: string): Promise<void>;
}

const viaHttp: SilenceWay = {
  async add(url) {
    const res = await fetch(`${url}/api/silences`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ matchers: [{ name: 'rule', op: '=', value: 'util-high' }], endsAt: Date.now() + 3_600_000, author: 'ops', comment: 'maintenance' }),
      signal: AbortSignal.timeout(5_000),
    });
    const body = (await res.json()) as { id: string; status: string };
    expect(res.status, JSON.stringify(body)).toBe(201);
    expect(body.status).toBe('active');
    expect(res.headers.get('location')).toBe(`/api/silences/${body.id}`);
    return body.id;
  },
  async active(url) {
    const list = await getJson<Array<{ id: string; status: string; matchers: unknown }>>(`${url}/api/silences`);
    for (const s of list) expect(s).toMatchObject({ status: 'active', matchers: [{ name: 'rule', op: '=', value: 'util-high' }] });
    return list.map((s) => s.id);
  },
  async expire(url, _file, id) {
    const res = await fetch(`${url}/api/silences/${encodeURIComponent(id)}`, { method: 'DELETE', signal: AbortSignal.timeout(5_000) });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id, status: 'expired' });
  },
};

const lookout = (...args: string[]) => promisify(execFile)(process.execPath, [CLI, ...args], { cwd: ROOT, timeout: 15_000 });
const viaCli: SilenceWay = {
  async add(_url, file) {
    const { stdout } = await lookout('silence', 'add', '-c', file, '--match', 'rule=util-high', '--for', '1h', '--comment', 'maintenance', '--author', 'ops');
    const id = stdout.trim();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    return id;
  },
  async active(_url, file) {
    const { stdout } = await lookout('silence', 'list', '--json', '-c', file);
    const list = JSON.parse(stdout) as Array<{ id: string; status: string; matchers: unknown }>;
    for (const s of list) expect(s).toMatchObject({ status: 'active', matchers: [{ name: 'rule', op: '=', value: 'util-high' }] });
    return list.map((s) => s.id);
  },
  async expire(_url, file, id) {
    const { stdout } = await lookout('silence', 'expire', id, '-c', file);
    expect(stdout.trim()).toBe(`expired ${id}`);
  },
};

it.each([
  ['the HTTP API', viaHttp],
  ['the CLI on the daemon’s DB', viaCli],
])('a silence added through %s mutes a firing alert of the running daemon, evaluation goes on; expired, the alert is announced once', async (_way, way) => {
  // Calm first, so the silence is in force before anything can fire: no race with the first flush.
  const sim = await startSim({ scenario: 'calm' });
  const slack = await startSlack();
  const dir = dirs.make();
  const market = sim.market(0);
  const control = sim.market(1); // also spikes; its rule is not silenced
  const file = writeConfig(join(dir, 'lookout.yaml'), {
    sim,
    db: join(dir, 'lookout.db'),
    rules: [utilRule('util-high', market), utilRule('util-control', control)],
    notifiers: { slack: { type: 'slack', webhook_url: slack.url, rate_limit: 10 } },
    sourceDownAfter: 50,
  });
  const { daemon, url } = await DaemonProcess.start(file);
  const diag = () => `${slack.summary()}\n${daemon.diag()}`;
  const silencedCount = async () => sample(await getText(`${url}/metrics`), 'lookout_notifications_total', { notifier: 'slack', outcome: 'silenced' }) ?? 0;
  await daemon.waitForPolls(1, 10_000);
  expect((await apiAlerts(url)).filter((a) => a.state === 'firing')).toEqual([]);

  const id = await way.add(url, file);
  expect(await way.active(url, file)).toEqual([id]);
  // The daemon serves it too, whichever way it came in.
  expect(await viaHttp.active(url, file)).toEqual([id]);

  // The spike starts: both rules fire.
  await sim.swap({ scenario: 'utilization_spike', startedAt: Date.now() - 60_000 });
  await slack.waitFor('the FIRING message of the unsilenced control alert', (p) => p.some((x) => x.status === 200 && x.text.startsWith('FIRING') && x.text.includes(control)), 20_000, diag);
  // Evaluation goes on: the silenced alert fires...
  const firing = await until('the silenced alert firing', async () => firingOf(await apiAlerts(url), 'util-high', market), 10_000, diag);
  // ...and the dispatcher has flushed its group past group_wait and muted it (counted once, as `silenced`).
  await until('the muted notification counted', async () => ((await silencedCount()) >= 1 ? true : undefined), 10_000, diag);
  await daemon.waitForPolls(2, 10_000);
  expect(slack.about('FIRING', market), slack.summary()).toEqual([]);
  expect(firingOf(await apiAlerts(url), 'util-high', market)).toMatchObject({ fingerprint: firing.fingerprint, last_notified: null });
  expect(await silencedCount()).toBe(1);
  expect(await viaHttp.active(url, file)).toEqual([id]);

  await way.expire(url, file, id);
  expect(await way.active(url, file)).toEqual([]);
  expect(await viaHttp.active(url, file)).toEqual([]);
  await slack.waitFor('the FIRING message once the silence ended', (p) => p.some((x) => x.text.startsWith('FIRING') && x.text.includes(market)), 20_000, diag);
  await daemon.waitForLog((l) => l.msg === 'notify_sent' && l.status === 'firing', 10_000, 'both notify_sent lines', 2);
  // Several polls and dispatcher rounds later: exactly one message each, nothing else.
  await daemon.waitForPolls(3, 15_000);
  expect(slack.about('FIRING', market), slack.summary()).toHaveLength(1);
  expect(slack.about('FIRING', control), slack.summary()).toHaveLength(1);
  expect(slack.posts.map((p) => p.status), slack.summary()).toEqual([200, 200]);
  expect(slack.about('FIRING', market)[0]!.text).toContain('util-high');
  expect(firingOf(await apiAlerts(url), 'util-high', market)).toMatchObject({ fingerprint: firing.fingerprint, since: firing.since, last_notified: expect.any(String) });
  expect(await silencedCount()).toBe(1);
}, 90_000);

it('a source outage: the announced market alert is not announced again when source_down resolves; one that began firing during the outage is announced once after it', async () => {
  const { sim, slack, file } = await slackWorld((sim) => ({
    rules: [utilRule('util-high', sim.market(0)), { ...utilRule('util-late', sim.market(1)), for: '15s' }],
    routes: [{ default: true, notify: ['slack'], group_by: ['rule'], group_wait: '0s', group_interval: '1s', repeat_interval: '1h' }],
    sourceDownAfter: 2,
  }));
  const [market, late] = [sim.market(0), sim.market(1)];
  const rec = slack;
  const { daemon, url } = await DaemonProcess.start(file);
  const diag = () => `${rec.summary()}\n${daemon.diag()}`;
  const stateOf = async (rule: string) => (await apiAlerts(url)).find((a) => a.rule === rule)?.state;
  await rec.waitFor('util-high announced', () => rec.about('FIRING', market).length > 0, 15_000, diag);
  // util-late is pending (for: 15s) when the source goes down.
  expect(await stateOf('util-late')).toBe('pending');
  const outage = sim.sim.faults.add({ path: '/yields/graphql', method: 'POST', status: 500, times: 1_000_000 });
  await until('source_down firing', async () => ((await stateOf('source_down')) === 'firing' ? true : undefined), 15_000, diag);
  expect(await stateOf('util-late')).toBe('pending');
  // util-late's `for` runs out during the outage: it fires, muted by source_down.
  await until('util-late firing', async () => ((await stateOf('util-late')) === 'firing' ? true : undefined), 25_000, diag);
  await daemon.waitForPolls(2, 10_000, 'markets', 'failed'); // flushes while muted: nothing about it may go out
  expect(rec.about('FIRING', late)).toEqual([]);
  sim.sim.faults.remove(outage);
  await until('source_down resolved', async () => ((await stateOf('source_down')) === 'firing' ? undefined : true), 15_000, diag);
  await rec.waitFor('util-late announced', () => rec.about('FIRING', late).length > 0, 15_000, diag);
  // Several group_intervals later: still one FIRING about each market.
  await daemon.waitForPolls(4, 15_000);
  expect(rec.about('FIRING', market)).toHaveLength(1);
  expect(rec.about('FIRING', late)).toHaveLength(1);
}, 120_000);
