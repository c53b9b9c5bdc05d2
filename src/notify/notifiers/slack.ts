/**
 * The `slack` notifier. Webhook mode (the default, `webhook_url`): each message is posted as Block Kit over an
 * incoming webhook (@slack/webhook), split under Slack's limits. Bot mode (`token` + `channel`): one message per
 * incident, edited in place, with a thread (slack-bot.ts).
 */
import { IncomingWebhook, type FetchFunction } from '@slack/webhook';
import { NotifyError } from '../../errors.js';
import type { Notifier } from '../message.js';
import type { NotifierDeps, NotifierModule } from '../notifier-module.js';
import type { NotifierConfig } from '../schema.js';
import { httpError, networkError } from './http.js';
import { slackPayloads } from './slack-blocks.js';
import { slackBotNotifier, type SlackBotConfig } from './slack-bot.js';
import { webhookFetch } from './slack-fetch.js';
import { incidentMessage, parentContent } from './slack-incident.js';

export { SLACK_MAX_BLOCKS, SLACK_MAX_TEXT, slackPayloads, type SlackPayload } from './slack-blocks.js';

type SlackConfig = Extract<NotifierConfig, { type: 'slack' }>;

/** True when the config is in bot mode (the schema allows token and channel only together, and not with webhook_url). */
const isBot = (cfg: SlackConfig): cfg is SlackBotConfig => cfg.token !== undefined && cfg.channel !== undefined;

/** The slack notifier module. */
export const slackNotifier = {
  type: 'slack',
  create(name, cfg, deps) {
    return isBot(cfg) ? slackBotNotifier(name, cfg, deps) : webhookMode(name, cfg, deps);
  },
  render(_name, cfg, message) {
    if (!isBot(cfg)) return JSON.stringify(slackPayloads(message, cfg.max_alerts), null, 2);
    // A group's first message: the parent as chat.postMessage gets it (later ones edit it and reply in its thread).
    return JSON.stringify({ method: 'chat.postMessage', channel: cfg.channel, ...parentContent(incidentMessage([], message), cfg.max_alerts) }, null, 2);
  },
} satisfies NotifierModule<'slack'>;

/** Webhook mode: each message as one or more posts to the incoming webhook. */
function webhookMode(name: string, cfg: SlackConfig, deps: NotifierDeps): Notifier {
  const webhookUrl = cfg.webhook_url!;
  const send = webhookFetch(deps.dispatcher);
  return {
    name,
    type: 'slack',
    async send(message, signal, progress) {
      const payloads = slackPayloads(message, cfg.max_alerts);
      // A retry or a restart starts after the parts Slack already accepted: none is posted twice.
      const from = progress?.partsSent ?? 0;
      for (let i = from; i < payloads.length; i++) {
        const payload = payloads[i]!;
        if (i > from) await progress?.beforePart();
        let retryAfter: string | null = null;
        // Our own fetch: honours the dispatcher's abort signal and keeps Retry-After, which the library drops.
        const fetchFn: FetchFunction = async (url, init) => {
          const res = await send(url, { ...init, signal: AbortSignal.any([signal, AbortSignal.timeout(cfg.timeout)]) });
          retryAfter = res.headers.get('retry-after');
          return res;
        };
        const hook = new IncomingWebhook(webhookUrl, { fetch: fetchFn, retryConfig: { retries: 0 } });
        try {
          await hook.send({ ...payload, blocks: payload.blocks as never });
        } catch (err) {
          throw classifySlackError(name, err, retryAfter);
        }
        await progress?.partSent(i);
      }
    },
  };
}

function classifySlackError(name: string, err: unknown, retryAfter: string | null): NotifyError {
  // @slack/webhook throws its HTTP error itself for any status (p-retry unwraps the AbortError a 4xx rides in), and
  // wraps a network failure with the fetch error as its cause.
  const e = err as { statusCode?: number; cause?: unknown };
  if (typeof e.statusCode === 'number') return httpError(name, 'slack webhook', e.statusCode, retryAfter);
  return networkError(name, 'slack webhook', e.cause ?? err);
}
