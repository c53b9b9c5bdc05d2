/**
 * The Slack bot mode's two Web API calls (notifiers/slack-api.ts) against a loopback Web API: what each failure
 * means for the retry stage (retried or not, Retry-After kept), which failures of an edit mean "post a new parent",
 * and that the token travels only in the Authorization header.
 */
import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { NotifyError } from '../src/errors.js';
import { createLogger, silentLogger } from '../src/log.js';
import { isParentGone, SlackPlatformError, slackApi, type SlackApiConfig } from '../src/notify/notifiers/slack-api.js';
import { closedPort } from './notify-helpers.js';
import { SlackApiRecorder } from './slack-api-recorder.js';

const TOKEN = 'xoxb-1111-2222-apiSECRETtoken';
const servers: SlackApiRecorder[] = [];
const agents: Agent[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
  for (const a of agents.splice(0)) await a.destroy();
});

/** The calls' deps: a connection pool of the test's own, so no keep-alive socket of an earlier test (to a port since reused) is picked up. */
function deps(log = silentLogger) {
  const dispatcher = new Agent();
  agents.push(dispatcher);
  return { clock: new ManualClock(0), log, dispatcher };
}

async function setup(cfg: Partial<SlackApiConfig> = {}) {
  const clock = new ManualClock(1_700_000_000_000);
  const server = await new SlackApiRecorder(clock, TOKEN).start();
  servers.push(server);
  const api = slackApi('incidents', { token: TOKEN, api_url: server.url, timeout: 5000, ...cfg }, deps(), new AbortController().signal);
  return { server, api };
}

/** What a failed call threw, with the token checked absent. */
async function failure(p: Promise<unknown>): Promise<NotifyError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(NotifyError);
  expect(String((err as Error).message)).not.toContain(TOKEN);
  return err as NotifyError;
}

const content = { text: 'FIRING:1 util' };

describe('slack Web API calls', () => {
  it('a post answers where the message is; a reply carries its thread; the token goes only in the Authorization header', async () => {
    const { server, api } = await setup();
    const ref = await api.post('#risk', content);
    expect(ref).toEqual({ channel: server.channelId, ts: '1700000000.000001' });
    await api.post(ref.channel, { text: 'note' }, ref.ts);
    await api.update(ref, { text: 'edited' });
    expect(server.calls.map((c) => [c.method, c.args.thread_ts, c.authorization])).toEqual([
      ['chat.postMessage', undefined, `Bearer ${TOKEN}`],
      ['chat.postMessage', ref.ts, `Bearer ${TOKEN}`],
      ['chat.update', undefined, `Bearer ${TOKEN}`],
    ]);
    expect(server.messages.get(ref.ts)!.text).toBe('edited');
    expect(server.calls[0]!.args).toMatchObject({ unfurl_links: 'false', unfurl_media: 'false' });
  });

  it('an api_url without the trailing slash reaches the same methods', async () => {
    const { server } = await setup();
    const api = slackApi('incidents', { token: TOKEN, api_url: server.url.replace(/\/$/, ''), timeout: 5000 }, deps(), new AbortController().signal);
    await api.post('#risk', content);
    expect(server.calls.map((c) => c.method)).toEqual(['chat.postMessage']);
  });

  it('an answer without a channel keeps the one asked for; an ok without a ts is a failure not worth retrying', async () => {
    const { server, api } = await setup();
    server.answerOnce('chat.postMessage', 200, JSON.stringify({ ok: true, ts: '1.2' }));
    expect(await api.post('C0OTHER', content)).toEqual({ channel: 'C0OTHER', ts: '1.2' });
    server.answerOnce('chat.postMessage', 200, JSON.stringify({ ok: true, channel: 'C0OTHER' }));
    const err = await failure(api.post('C0OTHER', content));
    expect([err.message, err.retryable]).toEqual(['incidents: slack chat.postMessage answered ok without a ts', false]);
  });

  it.each(['ratelimited', 'internal_error', 'fatal_error', 'service_unavailable', 'request_timeout', 'team_added_to_org'])(
    'the platform error %s is Slack’s side: retried',
    async (code) => {
      const { server, api } = await setup();
      server.failOnce('chat.postMessage', code);
      const err = await failure(api.post('#risk', content));
      expect(err).toBeInstanceOf(SlackPlatformError);
      expect([err.message, err.retryable, (err as SlackPlatformError).slackError]).toEqual([`incidents: slack chat.postMessage answered ${code}`, true, code]);
      expect(isParentGone(err)).toBe(false);
    },
  );

  it.each(['channel_not_found', 'not_in_channel', 'invalid_blocks'])('the platform error %s is the request’s: not retried', async (code) => {
    const { server, api } = await setup();
    server.failOnce('chat.postMessage', code);
    const err = await failure(api.post('#risk', content));
    expect([err.message, err.retryable]).toEqual([`incidents: slack chat.postMessage answered ${code} (not retried)`, false]);
  });

  it.each(['message_not_found', 'cant_update_message', 'edit_window_closed'])('an edit answered %s means the parent is gone: post a new one', async (code) => {
    const { server, api } = await setup();
    const ref = await api.post('#risk', content);
    server.failOnce('chat.update', code);
    const err = await failure(api.update(ref, content));
    expect([err.message, err.retryable, isParentGone(err)]).toEqual([`incidents: slack chat.update answered ${code} (not retried)`, false, true]);
  });

  it('other failures of an edit do not mean the parent is gone', async () => {
    const { server, api } = await setup();
    const ref = await api.post('#risk', content);
    server.failOnce('chat.update', 'channel_not_found');
    expect(isParentGone(await failure(api.update(ref, content)))).toBe(false);
    server.answerOnce('chat.update', 503, 'down');
    expect(isParentGone(await failure(api.update(ref, content)))).toBe(false);
    expect(isParentGone(new Error('message_not_found'))).toBe(false);
  });

  it('an HTTP error page: 5xx retried with its Retry-After, 4xx not; a 429 keeps its Retry-After', async () => {
    const { server, api } = await setup();
    server.answerOnce('chat.postMessage', 503, '<html>down</html>', { 'content-type': 'text/html', 'retry-after': '30' });
    const e503 = await failure(api.post('#risk', content));
    expect([e503.message, e503.retryable, e503.retryAfterMs]).toEqual(['incidents: slack chat.postMessage answered HTTP 503', true, 30_000]);
    server.answerOnce('chat.postMessage', 500, 'oops', { 'content-type': 'text/plain' });
    const e500 = await failure(api.post('#risk', content));
    expect([e500.message, e500.retryable, e500.retryAfterMs]).toEqual(['incidents: slack chat.postMessage answered HTTP 500', true, undefined]);
    server.answerOnce('chat.postMessage', 404, 'no', { 'content-type': 'text/plain' });
    const e404 = await failure(api.post('#risk', content));
    expect([e404.message, e404.retryable]).toEqual(['incidents: slack chat.postMessage answered HTTP 404 (not retried)', false]);
    server.rateLimitOnce('chat.postMessage', '7');
    const e429 = await failure(api.post('#risk', content));
    expect([e429.message, e429.retryable, e429.retryAfterMs]).toEqual(['incidents: slack chat.postMessage answered HTTP 429', true, 7000]);
  });

  it('no answer at all (connection refused) is retried and named by its code', async () => {
    const port = await closedPort();
    const api = slackApi('incidents', { token: TOKEN, api_url: `http://127.0.0.1:${port}/api/`, timeout: 5000 }, deps(), new AbortController().signal);
    const err = await failure(api.post('#risk', content));
    expect([err.message, err.retryable]).toEqual(['incidents: slack chat.postMessage: request ECONNREFUSED', true]);
  });

  it('an answer that does not come within the timeout, or an attempt aborted, is retried', async () => {
    const slow = await setup({ timeout: 100 });
    const held = slow.server.holdNext('chat.postMessage'); // released only after the call ended by its own timeout
    const err = await failure(slow.api.post('#risk', content));
    held.release();
    expect([err.message, err.retryable]).toEqual(['incidents: slack chat.postMessage: request timed out or was aborted', true]);
    const { server } = await setup();
    const abort = new AbortController();
    const aborted = slackApi('incidents', { token: TOKEN, api_url: server.url, timeout: 5000 }, deps(), abort.signal);
    const hold = server.holdNext('chat.postMessage');
    const p = failure(aborted.post('#risk', content));
    await hold.reached;
    abort.abort();
    hold.release();
    expect((await p).retryable).toBe(true);
  });

  it('a 429 with a long Retry-After fails the attempt at once: the retry stage waits, not the call', async () => {
    const { server, api } = await setup();
    server.rateLimitOnce('chat.postMessage', '3600');
    const deadline = new Promise((r) => setTimeout(() => r('still waiting'), 10_000).unref());
    const err = await Promise.race([failure(api.post('#risk', content)), deadline]);
    expect([(err as NotifyError).message, (err as NotifyError).retryAfterMs]).toEqual(['incidents: slack chat.postMessage answered HTTP 429', 3_600_000]);
  });

  it('a refusal that names no error says so, not retried', async () => {
    const { server, api } = await setup();
    server.answerOnce('chat.postMessage', 200, JSON.stringify({ ok: false }));
    const err = await failure(api.post('#risk', content));
    expect([err.message, err.retryable]).toEqual(['incidents: slack chat.postMessage answered an unknown error (not retried)', false]);
  });

  it('warnings Slack sends with an answer go to lookout’s log at debug level, with the notifier', async () => {
    const { server } = await setup();
    const lines: string[] = [];
    const log = createLogger({ level: 'debug', write: (l) => lines.push(l) });
    const api = slackApi('incidents', { token: TOKEN, api_url: server.url, timeout: 5000 }, deps(log), new AbortController().signal);
    server.answerOnce('chat.postMessage', 200, JSON.stringify({ ok: true, channel: 'C1', ts: '1.1', response_metadata: { warnings: ['superfluous_charset'] } }));
    await api.post('#risk', content);
    const warned = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'slack_api_warning');
    expect(warned.map((l) => [l.level, l.notifier, l.message])).toEqual([['debug', 'incidents', expect.stringMatching(/^superfluous_charset\b/)]]);
  });
});
