/**
 * Notifications of the real daemon through a Slack-like recorder on loopback: one message per alert with untrusted
 * text escaped; kill -9 and a restart neither forget a firing alert nor announce it again, and a resolve follows
 * once; a notification pending through a Slack outage survives kill -9 and goes out once, under the same dedup key.
 */
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { createdAfter, METRICS_QUERY } from '../src/source/graphql.js';
import { apiAlerts, DaemonProcess, killAll, tempDirs, until, type ApiAlert } from './fixtures/daemon/harness.js';
import { SimHandle, SlackRecorder, utilRule, writeConfig, type ConfigInput } from './fixtures/daemon/world.js';

const dirs = tempDirs();
let sim: SimHandle | undefined;
let slack: SlackRecorder | undefined;
afterEach(async () => {
  await killAll();
  await sim?.close();
  await slack?.stop();
  sim = undefined;
  slack = undefined;
  dirs.cleanup();
});

/** Starts a spiking simulator, a recorder and writes a config with one utilization rule on market #0 sent to Slack. */
async function setup(extra: Partial<ConfigInput> = {}) {
  sim = await SimHandle.spiking();
  slack = await new SlackRecorder().start();
  const dir = dirs.make();
  const market = sim.market(0);
  const file = writeConfig(join(dir, 'lookout.yaml'), {
    sim,
    db: join(dir, 'lookout.db'),
    rules: [utilRule('util-high', market)],
    notifiers: { slack: { type: 'slack', webhook_url: slack.url, rate_limit: 10 } },
    // A swap of the simulator may fail a poll; source_down is not what these tests look at.
    sourceDownAfter: 50,
    ...extra,
  });
  return { file, market, slack, sim };
}

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
