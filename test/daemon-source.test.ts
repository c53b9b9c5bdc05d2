/**
 * The real daemon against a failing data service: failed polls change no alert, `source_down` fires after
 * `source_down.after` failures and resolves when the service is back, `lookout_source_up` follows; and no secret
 * (API key, Slack webhook URL) reaches stdout, stderr, /metrics, the API, the status page or a message, also when
 * the service answers 401 and Slack answers 500.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { apiAlerts, DaemonProcess, getJson, getText, sample, until, type ApiAlert } from './fixtures/daemon/harness.js';
import { daemonScope } from './fixtures/daemon/scope.js';
import { utilRule, writeConfig } from './fixtures/daemon/world.js';

const { dirs, spikingSim, startSlack, slackWorld } = daemonScope();

interface ApiPoll {
  name: string;
  ok: boolean;
  error: string | null;
  consecutive_failures: number;
}

const find = (alerts: ApiAlert[], rule: string, state?: string) => alerts.find((a) => a.rule === rule && (state === undefined || a.state === state));

it('failed polls change no alert; source_down fires after `after` failures with lookout_source_up 0, and resolves when the service is back', async () => {
  const { sim, slack, market, file } = await slackWorld(() => ({ sourceDownAfter: 2 }));
  const { daemon, url } = await DaemonProcess.start(file);
  const firing = await until('util-high firing', async () => find(await apiAlerts(url), 'util-high', 'firing'), 15_000, () => daemon.diag());
  await until('lookout_source_up 1', async () => (sample(await getText(`${url}/metrics`), 'lookout_source_up', { poll: 'markets' }) === 1 ? true : undefined), 5_000);

  sim.sim.faults.add({ path: '/yields/graphql', status: 500, times: 1_000_000 });
  // More failures than `absent_for` (3): were a failure read as absence, the market's alert would resolve.
  await until(
    'four failed polls in a row',
    async () => ((await getJson<ApiPoll[]>(`${url}/api/polls`)).find((p) => p.name === 'markets')!.consecutive_failures >= 4 ? true : undefined),
    20_000,
    () => daemon.diag(),
  );
  const during = await apiAlerts(url);
  expect(find(during, 'util-high'), JSON.stringify(during)).toMatchObject({ state: 'firing', fingerprint: firing.fingerprint, since: firing.since });
  expect(find(during, 'source_down'), JSON.stringify(during)).toMatchObject({ state: 'firing', labels: expect.objectContaining({ poll: 'markets', severity: 'warning' }) });
  expect(sample(await getText(`${url}/metrics`), 'lookout_source_up', { poll: 'markets' })).toBe(0);
  const poll = (await getJson<ApiPoll[]>(`${url}/api/polls`)).find((p) => p.name === 'markets')!;
  expect(poll).toMatchObject({ ok: false, error: expect.stringMatching(/500/) });
  await slack.waitFor('the source_down FIRING message', (p) => p.some((x) => x.status === 200 && x.text.startsWith('FIRING') && x.text.includes('source_down')), 10_000, () => daemon.diag());

  sim.sim.faults.clear();
  await until('source_down no longer firing', async () => (find(await apiAlerts(url), 'source_down', 'firing') ? undefined : true), 15_000, () => daemon.diag());
  expect(sample(await getText(`${url}/metrics`), 'lookout_source_up', { poll: 'markets' })).toBe(1);
  expect(find(await apiAlerts(url), 'util-high')).toMatchObject({ state: 'firing', since: firing.since });
  await slack.waitFor('the source_down RESOLVED message', (p) => p.some((x) => x.status === 200 && x.text.startsWith('RESOLVED') && x.text.includes('source_down')), 10_000, () => daemon.diag());
  // The market's alert was announced once, before the outage, and never resolved.
  expect(slack.about('FIRING', market).filter((p) => p.text.includes('util-high')), slack.summary()).toHaveLength(1);
  expect(slack.posts.filter((p) => p.text.includes('util-high') && p.text.startsWith('RESOLVED')), slack.summary()).toHaveLength(0);
}, 60_000);

it('no secret reaches stdout, stderr, /metrics, the API, the status page or a Slack message — also after a 401 and a Slack 500', async () => {
  const apiKey = `sk-e2e-${randomUUID()}`;
  const hookSecret = `hook-${randomUUID()}`;
  const sim = await spikingSim({ apiKey });
  const slack = await startSlack({ path: `/services/T0/B0/${hookSecret}` });
  slack.respond(500);
  const dir = dirs.make();
  const market = sim.market(0);
  const file = writeConfig(join(dir, 'lookout.yaml'), {
    sim,
    db: join(dir, 'lookout.db'),
    apiKey: '${E2E_API_KEY}',
    rules: [utilRule('util-high', market)],
    notifiers: { slack: { type: 'slack', webhook_url: '${E2E_SLACK_URL}', rate_limit: 10 }, stdout: { type: 'console', color: 'never' } },
    sourceDownAfter: 2,
    logLevel: 'debug',
  });
  const { daemon, url } = await DaemonProcess.start(file, { E2E_API_KEY: apiKey, E2E_SLACK_URL: slack.url });

  // Slack fails, then takes the message.
  await daemon.waitForLog((l) => l.msg === 'notify_retry', 20_000, 'a failed Slack delivery');
  slack.respond(200);
  await slack.waitFor('a delivered message', (p) => p.some((x) => x.status === 200), 15_000, () => daemon.diag());

  // The service now rejects the key: 401 on every poll.
  await sim.swap({ apiKey: 'another-key' });
  await until(
    'failed polls with a 401',
    async () => {
      const p = (await getJson<ApiPoll[]>(`${url}/api/polls`)).find((x) => x.name === 'markets')!;
      return p.consecutive_failures >= 2 && /401|api key/i.test(p.error ?? '') ? p : undefined;
    },
    20_000,
    () => daemon.diag(),
  );
  await until('source_down firing', async () => find(await apiAlerts(url), 'source_down', 'firing'), 10_000, () => daemon.diag());
  // The simulator did answer 401 (the daemon sent the old key, not nothing).
  expect(sim.sim.requests.last().filter((r) => r.status === 401).length).toBeGreaterThanOrEqual(2);

  const surfaces: Record<string, string> = {
    metrics: await getText(`${url}/metrics`),
    alerts: await getText(`${url}/api/alerts`),
    polls: await getText(`${url}/api/polls`),
    silences: await getText(`${url}/api/silences`),
    status: await getText(`${url}/`),
  };
  daemon.signal('SIGTERM');
  expect((await daemon.waitExit(10_000)).code).toBe(0);
  surfaces.stdout = daemon.stdout;
  surfaces.stderr = daemon.stderr;
  surfaces.slack = slack.posts.map((p) => p.raw).join('\n');
  // Something was said on every surface, so their silence about the secrets means something.
  expect(surfaces.stderr).toMatch(/401/);
  expect(surfaces.stdout).toContain('util-high');
  expect(surfaces.polls).toMatch(/401|API key/i);
  for (const [where, text] of Object.entries(surfaces)) {
    expect(text.length, where).toBeGreaterThan(0);
    for (const secret of [apiKey, apiKey.slice(7), hookSecret, slack.url]) expect(text.includes(secret), `${where} contains a secret`).toBe(false);
  }
}, 60_000);
