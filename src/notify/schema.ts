/** Config schemas of notifiers (by `type`), routes and inhibit rules (SPEC §2, §4). */
import { z } from 'zod';
import { duration, positiveDuration } from '../config/duration-schema.js';

const url = z.string().url();

/** Schema of each notifier type, by type name. */
export const notifierSchemas = {
  slack: z
    .strictObject({
      type: z.literal('slack'),
      /** Webhook mode (the default): one post per message to an incoming webhook. */
      webhook_url: url.optional(),
      /** Bot mode: a bot token (`xoxb-…`, scope chat:write); one message per incident, edited in place, with a thread. */
      token: z.string().min(1).optional(),
      /** Bot mode: the channel to post in (an ID such as C0123456789, or #name). */
      channel: z.string().min(1).optional(),
      /** Bot mode: the Web API's base URL. */
      api_url: url.default('https://slack.com/api/'),
      /** Most alerts listed in one grouped message; the rest are counted. */
      max_alerts: z.int().min(1).max(45).default(20),
      /** Messages per second to this webhook (Slack takes about one). */
      rate_limit: z.number().positive().default(1),
      timeout: positiveDuration.default(10_000),
    })
    .superRefine((v, ctx) => {
      const bot = v.token !== undefined || v.channel !== undefined;
      if (v.webhook_url !== undefined && bot) {
        ctx.addIssue({ code: 'custom', path: ['token'], message: 'a slack notifier takes either webhook_url, or token and channel (bot mode), not both' });
      } else if (v.webhook_url === undefined && !bot) {
        ctx.addIssue({ code: 'custom', path: ['webhook_url'], message: 'a slack notifier needs webhook_url, or token and channel (bot mode)' });
      } else if (v.channel === undefined && v.token !== undefined) {
        ctx.addIssue({ code: 'custom', path: ['channel'], message: 'bot mode (token) needs a channel to post in' });
      } else if (v.token === undefined && v.channel !== undefined) {
        ctx.addIssue({ code: 'custom', path: ['token'], message: 'bot mode (channel) needs a token: a bot token with chat:write, from the environment' });
      }
    }),
  email: z.strictObject({
    type: z.literal('email'),
    smtp: z.strictObject({
      host: z.string().min(1),
      port: z.int().min(1).max(65535).default(587),
      /** true: TLS from the first byte (port 465); false: plain, upgraded by STARTTLS when offered. */
      secure: z.boolean().default(false),
      require_tls: z.boolean().default(false),
      user: z.string().optional(),
      pass: z.string().optional(),
      tls_reject_unauthorized: z.boolean().default(true),
    }),
    from: z.string().min(3),
    to: z.array(z.string().min(3)).min(1),
    rate_limit: z.number().positive().default(5),
    timeout: positiveDuration.default(20_000),
  }),
  webhook: z.strictObject({
    type: z.literal('webhook'),
    url,
    bearer_token: z.string().optional(),
    hmac_secret: z.string().optional(),
    headers: z.record(z.string(), z.string()).default({}),
    /** Sent as `externalURL` (a link back to this lookout's status page). */
    external_url: url.optional(),
    rate_limit: z.number().positive().default(10),
    timeout: positiveDuration.default(10_000),
  }),
  alertmanager: z.strictObject({
    type: z.literal('alertmanager'),
    urls: z.array(url).min(1),
    /** How often a firing alert is posted again (Alertmanager resolves alerts that stop being posted). */
    resend_interval: positiveDuration.default(60_000),
    /** Sent as each alert's `generatorURL` (a link back to this lookout's status page). */
    external_url: url.optional(),
    rate_limit: z.number().positive().default(10),
    timeout: positiveDuration.default(10_000),
  }),
  console: z.strictObject({
    type: z.literal('console'),
    color: z.enum(['auto', 'always', 'never']).default('auto'),
  }),
} as const;

/** A notifier entry: a union discriminated by `type`. */
export const notifierSchema = z.discriminatedUnion('type', [
  notifierSchemas.slack,
  notifierSchemas.email,
  notifierSchemas.webhook,
  notifierSchemas.alertmanager,
  notifierSchemas.console,
]);
/** One validated notifier config. */
export type NotifierConfig = z.output<typeof notifierSchema>;

const matcherValue = z.union([z.string(), z.number(), z.boolean(), z.array(z.union([z.string(), z.number()]))]);

/** A route: first match wins; `default: true` catches the rest. */
export const routeSchema = z.strictObject({
  default: z.boolean().default(false),
  /** label → value (or list of values): equality. */
  match: z.record(z.string(), matcherValue).default({}),
  /** label → regular expression (anchored). */
  match_re: z.record(z.string(), z.string()).default({}),
  notify: z.array(z.string()).min(1),
  group_by: z.array(z.string()).default(['rule']),
  group_wait: duration.default(10_000),
  group_interval: duration.default(60_000),
  repeat_interval: duration.default(4 * 3_600_000),
  send_resolved: z.boolean().default(true),
  /** An alert announced as firing that resolves while silenced or inhibited gets its RESOLVED (Alertmanager: dropped). */
  send_resolved_when_muted: z.boolean().default(true),
});
/** One validated route. */
export type RouteConfig = z.output<typeof routeSchema>;

/** An inhibit rule, as in Alertmanager: a firing source mutes matching targets that share the `equal` labels. */
export const inhibitSchema = z.strictObject({
  source_match: z.record(z.string(), matcherValue).default({}),
  source_match_re: z.record(z.string(), z.string()).default({}),
  target_match: z.record(z.string(), matcherValue).default({}),
  target_match_re: z.record(z.string(), z.string()).default({}),
  equal: z.array(z.string()).default([]),
});
/** One validated inhibit rule. */
export type InhibitConfig = z.output<typeof inhibitSchema>;
