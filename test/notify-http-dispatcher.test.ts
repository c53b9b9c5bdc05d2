/**
 * The undici dispatcher given to notifications (`createNotifications({ http })`, e.g. a proxy or pinned DNS) carries
 * every HTTP notifier's requests: webhook, Alertmanager (its posts and the adoption read at start), Slack webhook mode
 * and Slack bot mode. Each is configured with a host that does not resolve (`.invalid`); only a dispatcher that
 * connects to the loopback server lets the request arrive.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { afterEach, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { silentLogger } from '../src/log.js';
import { fetchAdoptable } from '../src/notify/adopt.js';
import { createNotifications } from '../src/notify/index.js';
import { buildMessage } from '../src/notify/message.js';
import { slackApi } from '../src/notify/notifiers/slack-api.js';
import { NotifierRegistry } from '../src/notify/registry.js';
import { alert, event, notifier, route, tempStores } from './notify-helpers.js';
import { SlackApiRecorder } from './slack-api-recorder.js';

const T0 = 1_700_000_000_000;
const clock = new ManualClock(T0);
const cleanups: Array<() => Promise<unknown> | void> = [];
const stores = tempStores();
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
  stores.cleanup();
});

/** A loopback server that answers 200 (`[]` to a GET) and records each request's method, host header and path. */
async function recorder(): Promise<{ port: number; got: string[] }> {
  const got: string[] = [];
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      got.push(`${req.method} ${req.headers.host} ${req.url}`);
      res.writeHead(200, { 'content-type': req.method === 'GET' ? 'application/json' : 'text/plain' });
      res.end(req.method === 'GET' ? '[]' : 'ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise((r) => server.close(r)));
  return { port: (server.address() as AddressInfo).port, got };
}

/** An agent that connects every request to 127.0.0.1:`port`, whatever host its URL names (pinned DNS). */
function pinnedTo(port: number): Agent {
  const connect = buildConnector({});
  const agent = new Agent({ connect: (opts, cb) => connect({ ...opts, hostname: '127.0.0.1', port: String(port) }, cb) });
  cleanups.push(() => agent.close());
  return agent;
}

const message = () =>
  buildMessage({ dedupKey: 'lk-d', notifier: 'n', groupKey: 'g', groupLabels: { rule: 'util' }, alerts: [{ status: 'firing', alert: alert('util', 'm1') }], createdAt: T0 });

it('webhook, Alertmanager and Slack webhook mode send through the given dispatcher', async () => {
  const srv = await recorder();
  const deps = { clock, log: silentLogger, dispatcher: pinnedTo(srv.port) };
  const made = new NotifierRegistry().createAll(
    {
      hook: notifier({ type: 'webhook', url: 'http://hooks.invalid:8080/lookout' }),
      am: notifier({ type: 'alertmanager', urls: ['http://am.invalid:8080'] }),
      slack: notifier({ type: 'slack', webhook_url: 'http://slack.invalid:8080/services/T/B/x' }),
    },
    deps,
  );
  for (const n of made.values()) await n.send(message(), new AbortController().signal);
  expect(srv.got).toEqual(['POST hooks.invalid:8080 /lookout', 'POST am.invalid:8080 /api/v2/alerts', 'POST slack.invalid:8080 /services/T/B/x']);
});

it('createNotifications hands its `http` dispatcher to the notifiers it builds', async () => {
  const srv = await recorder();
  const store = stores.open();
  const manual = new ManualClock(T0);
  const n = createNotifications({
    db: store.db,
    clock: manual,
    http: pinnedTo(srv.port),
    config: {
      notifiers: { hook: notifier({ type: 'webhook', url: 'http://hooks.invalid:8080/lookout' }) },
      routes: [route({ default: true, notify: ['hook'], group_wait: '0s' })],
      delivery: { backoff: 1000, max_backoff: 60_000, give_up_after: 3_600_000 },
      watchdog: { enabled: false, severity: 'info' },
    },
  });
  cleanups.push(() => n.close());
  n.outbox.enqueue([event('firing', alert('util', 'm1'), T0)], T0);
  manual.advance(1000);
  await n.dispatcher.runDue();
  await n.dispatcher.runDue();
  expect(srv.got).toEqual(['POST hooks.invalid:8080 /lookout']);
});

it('the Alertmanager adoption read at start goes through the given dispatcher', async () => {
  const srv = await recorder();
  const got = await fetchAdoptable({ urls: ['http://am.invalid:8080'], timeoutMs: 5000, dispatcher: pinnedTo(srv.port) });
  expect(got).toEqual({ candidates: [], failed: [] });
  expect(srv.got).toEqual(['GET am.invalid:8080 /api/v2/alerts?active=true&silenced=true&inhibited=true&unprocessed=true']);
});

it('Slack bot mode calls the Web API through the given dispatcher', async () => {
  const api = await new SlackApiRecorder(clock, 'xoxb-d').start();
  cleanups.push(() => api.stop());
  const port = Number(new URL(api.url).port);
  const calls = slackApi('bot', { token: 'xoxb-d', api_url: 'http://slack-api.invalid:8080/api/', timeout: 5000 }, { clock, log: silentLogger, dispatcher: pinnedTo(port) }, new AbortController().signal);
  expect((await calls.post('#risk', { text: 'hi' })).ts).toBe('1700000000.000001');
  expect(api.calls.map((c) => c.method)).toEqual(['chat.postMessage']);
});

it('an answer’s body is read and let go: a webhook that answers 1 MB does not hold the only connection of the dispatcher', async () => {
  const big = 'x'.repeat(1 << 20);
  let n = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      n++;
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(big);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise((r) => (server.closeAllConnections(), server.close(r))));
  const agent = new Agent({ connections: 1 });
  cleanups.push(() => agent.destroy());
  const hook = new NotifierRegistry()
    .createAll({ hook: notifier({ type: 'webhook', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/h`, timeout: '60s' }) }, { clock, log: silentLogger, dispatcher: agent })
    .get('hook')!;
  // A body left unread keeps the connection until the attempt's 60 s timeout: the next send would wait for it.
  const three = (async () => {
    for (let i = 0; i < 3; i++) await hook.send(message(), new AbortController().signal);
    return 'sent';
  })();
  const deadline = new Promise((r) => setTimeout(() => r('still waiting for the connection'), 10_000).unref());
  expect(await Promise.race([three, deadline])).toBe('sent');
  expect(n).toBe(3);
});
