/**
 * The two Slack Web API calls the bot mode makes (chat.postMessage, chat.update) through @slack/web-api, with its own
 * retries off: a failure is only classified here (retryable or not, Retry-After kept) and the dispatcher's retry stage
 * owns the backoff, as for the webhook. The token travels in the Authorization header and never reaches an error.
 */
import type { FetchFunction, LogLevel, Logger as SlackLogger } from '@slack/web-api';
import { fetch as undiciFetch } from '../../net/undici.js';
import { NotifyError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { NotifierDeps } from '../notifier-module.js';
import { httpError, networkError } from './http.js';

/** What the bot mode needs of its notifier config. */
export interface SlackApiConfig {
  token: string;
  api_url: string;
  timeout: number;
}

/** The body of a post or an edit: text (the fallback when there are blocks) and Block Kit blocks. */
export interface SlackContent {
  text: string;
  blocks?: Array<Record<string, unknown>>;
}

/** Where a posted message is: the channel ID Slack answered with, and the message's `ts`. */
export interface SlackMessageRef {
  channel: string;
  ts: string;
}

/** The calls, bound to one delivery attempt (its abort signal). */
export interface SlackApi {
  /** chat.postMessage; a reply when `threadTs` is given. */
  post(channel: string, content: SlackContent, threadTs?: string): Promise<SlackMessageRef>;
  /** chat.update of the message at `ref`. */
  update(ref: SlackMessageRef, content: SlackContent): Promise<void>;
}

/** Platform errors worth trying again: Slack's side, not the request's. */
const RETRYABLE = new Set(['ratelimited', 'internal_error', 'fatal_error', 'service_unavailable', 'request_timeout', 'team_added_to_org']);

/** Platform errors that mean the parent can no longer be edited (a person deleted it, or it is not the bot's): post a new one. */
const PARENT_GONE = new Set(['message_not_found', 'cant_update_message', 'edit_window_closed']);

/** The Slack error code carried by a classified error. */
export class SlackPlatformError extends NotifyError {
  /** Slack's `error`, e.g. `message_not_found`, `channel_not_found`. */
  readonly slackError: string;
  constructor(notifier: string, what: string, slackError: string) {
    const retryable = RETRYABLE.has(slackError);
    super(`${notifier}: ${what} answered ${slackError}${retryable ? '' : ' (not retried)'}`, { notifier, retryable });
    this.slackError = slackError;
  }
}

/** True when an edit failed because the parent is gone or cannot be edited: a new parent is posted instead. */
export function isParentGone(err: unknown): boolean {
  return err instanceof SlackPlatformError && PARENT_GONE.has(err.slackError);
}

/** @slack/web-api, loaded with the bot mode's first call: ~14 MB of memory a daemon without a Slack bot never needs. */
let webApi: Promise<typeof import('@slack/web-api')> | undefined;
const loadWebApi = () => (webApi ??= import('@slack/web-api'));

/** Binds the Web API calls to one attempt: `signal` (and the config's timeout) abort them. */
export function slackApi(notifier: string, cfg: SlackApiConfig, deps: NotifierDeps, signal: AbortSignal): SlackApi {
  const call = async <T>(method: string, args: Record<string, unknown>): Promise<T> => {
    // Our own fetch: honours the attempt's signal and the injected dispatcher, and keeps the status and Retry-After.
    const last: { status?: number; retryAfter?: string | null } = {};
    const fetchFn = (async (url: string | URL, init?: Record<string, unknown>) => {
      const res = await undiciFetch(url, {
        ...init,
        signal: AbortSignal.any([signal, AbortSignal.timeout(cfg.timeout)]),
        ...(deps.dispatcher ? { dispatcher: deps.dispatcher } : {}),
      } as Parameters<typeof undiciFetch>[1]);
      last.status = res.status;
      last.retryAfter = res.headers.get('retry-after');
      return res;
    }) as unknown as FetchFunction;
    const { WebClient } = await loadWebApi();
    const client = new WebClient(cfg.token, {
      slackApiUrl: cfg.api_url.endsWith('/') ? cfg.api_url : `${cfg.api_url}/`,
      fetch: fetchFn,
      retryConfig: { retries: 0 },
      rejectRateLimitedCalls: true,
      allowAbsoluteUrls: false,
      logger: quietLogger(deps.log, notifier),
    });
    try {
      return (await client.apiCall(method, args)) as T;
    } catch (err) {
      throw classify(notifier, `slack ${method}`, err, last);
    }
  };
  return {
    async post(channel, content, threadTs) {
      const r = await call<{ channel?: string; ts?: string }>('chat.postMessage', {
        channel,
        ...content,
        ...(threadTs ? { thread_ts: threadTs } : {}),
        unfurl_links: false,
        unfurl_media: false,
      });
      if (!r.ts) throw new NotifyError(`${notifier}: slack chat.postMessage answered ok without a ts`, { notifier, retryable: false });
      return { channel: r.channel ?? channel, ts: r.ts };
    },
    async update(ref, content) {
      await call('chat.update', { channel: ref.channel, ts: ref.ts, ...content });
    },
  };
}

/** Turns what @slack/web-api threw into a NotifyError for the retry stage; no token, no URL, no body in it. */
function classify(notifier: string, what: string, err: unknown, last: { status?: number; retryAfter?: string | null }): NotifyError {
  const e = err as { code?: string; statusCode?: number; data?: { error?: unknown }; original?: unknown };
  // A 429 the library rejected (rejectRateLimitedCalls) or could not read: the status and Retry-After as the webhook reports them.
  if (last.status === 429) return httpError(notifier, what, 429, last.retryAfter);
  if (e.code === 'slack_webapi_http_error' && typeof e.statusCode === 'number') return httpError(notifier, what, e.statusCode, last.retryAfter);
  if (e.code === 'slack_webapi_platform_error') return new SlackPlatformError(notifier, what, String(e.data?.error ?? 'an unknown error'));
  if (e.code === 'slack_webapi_request_error') return networkError(notifier, what, e.original);
  return networkError(notifier, what, err);
}

/** @slack/web-api's logger, quiet: its warnings go to ours at debug level (they are about our arguments, not about Slack). */
function quietLogger(log: Logger, notifier: string): SlackLogger {
  const warn = (...msg: unknown[]) => log.debug('slack_api_warning', { notifier, message: msg.map(String).join(' ') });
  return {
    debug: () => {},
    info: () => {},
    warn,
    error: warn,
    setLevel: () => {},
    getLevel: () => 'warn' as LogLevel, // LogLevel.WARN, without loading the library for its enum
    setName: () => {},
  };
}
