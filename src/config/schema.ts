/** The config file's schema, assembled from the registries (poll kinds, notifier types) and lookout's own sections. */
import { z } from 'zod';
import { SEVERITIES } from '../model.js';
import { duration, positiveDuration } from './duration-schema.js';
import { pollSchema } from '../source/polls/schemas.js';
import { ORACLE_PRICE_MODES } from '../source/read/oracle.js';
import { inhibitSchema, notifierSchema, routeSchema } from '../notify/schema.js';

const allowedHost = z
  .string()
  .regex(/^(\*|\.?[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\.?)$/, 'an allowed host is a name (lookout), a domain with a leading dot (.example.com: it and its subdomains), or * (any)');
/** An http(s) URL people open in a browser (the scheme's case spelled out: a JSON Schema pattern carries no flags). */
const externalUrl = z.string().regex(/^[Hh][Tt][Tt][Pp][Ss]?:\/\/\S+$/, 'external_url must be an http(s) URL, e.g. https://lookout.example.com');
const listen = z.string().regex(/^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]*):\d{1,5}$/, 'listen must be host:port, e.g. 127.0.0.1:9464');

/** The `source:` section: where the data service is and how to talk to it. */
export const sourceSchema = z.strictObject({
  base_url: z.string().url(),
  catalog_url: z.string().url().optional(),
  graphql_path: z.string().startsWith('/').default('/yields/graphql'),
  api_key: z.string().optional(),
  timeout: positiveDuration.default(10_000),
  retries: z.int().min(0).max(10).default(3),
  /** First retry delay; doubles each attempt, with full jitter. */
  backoff: positiveDuration.default(500),
  max_backoff: positiveDuration.default(30_000),
  concurrency: z.int().min(1).max(64).default(4),
  max_pages: z.int().min(1).default(1000),
  /** How `oracle_price` is sent: a scaled integer, a unit price, or `auto` (decided per value, SPEC §6); absent = auto. */
  oracle_price: z.enum(ORACLE_PRICE_MODES).optional(),
});

/** The whole config file, before rule files are read (rules are validated per file, see load.ts). */
export const configSchema = z.strictObject({
  source: sourceSchema,
  storage: z
    .strictObject({
      path: z.string().min(1).default('./lookout.db'),
      retention: positiveDuration.default(30 * 86_400_000),
      /** Full-resolution history for this long; older history is kept as 5-minute buckets up to `retention`. */
      raw_retention: positiveDuration.default(2 * 86_400_000),
    })
    .default({ path: './lookout.db', retention: 30 * 86_400_000, raw_retention: 2 * 86_400_000 }),
  server: z
    .strictObject({
      listen: listen.default('127.0.0.1:9464'),
      token: z.string().min(8).optional(),
      enabled: z.boolean().default(true),
      /** More names the Host header may carry (a scrape through a service name); IPs and localhost always pass. */
      allowed_hosts: z.array(allowedHost).default([]),
      /** Where people reach this listener (e.g. https://lookout.example.com): messages link each alert to its page there. */
      external_url: externalUrl.optional(),
    })
    .default({ listen: '127.0.0.1:9464', enabled: true, allowed_hosts: [] }),
  log: z
    .strictObject({
      level: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
      /** json: one object per line (collectors); text: a short line for a terminal; auto: text when stderr is a terminal. */
      format: z.enum(['auto', 'text', 'json']).default('auto'),
    })
    .default({ level: 'info', format: 'auto' }),
  polls: z.array(pollSchema).min(1),
  rules: z
    .strictObject({ files: z.array(z.string()).default([]), inline: z.array(z.unknown()).default([]) })
    .default({ files: [], inline: [] }),
  alerting: z
    .strictObject({
      /** More state changes than this within flap_window make an alert flapping. */
      flap_threshold: z.int().min(2).default(6),
      flap_window: positiveDuration.default(3_600_000),
      /** A reading older than this (by its own timestamp) is a data-quality problem, not a breach. */
      max_reading_age: positiveDuration.default(6 * 3_600_000),
      /** How often the evaluator runs when no poll has, to move `for`/keep_firing_for timers. */
      tick: positiveDuration.default(5_000),
    })
    .default({ flap_threshold: 6, flap_window: 3_600_000, max_reading_age: 6 * 3_600_000, tick: 5_000 }),
  source_down: z
    .strictObject({ after: z.int().min(1).default(3), severity: z.enum(SEVERITIES).default('warning') })
    .default({ after: 3, severity: 'warning' }),
  watchdog: z
    .strictObject({ enabled: z.boolean().default(false), severity: z.enum(SEVERITIES).default('info'), notify: z.array(z.string()).optional() })
    .default({ enabled: false, severity: 'info' }),
  notifiers: z.record(z.string().regex(/^[A-Za-z0-9_.-]+$/), notifierSchema).default({}),
  routes: z.array(routeSchema).default([]),
  inhibit: z.array(inhibitSchema).optional(),
  /** Retry policy of the notification outbox. */
  delivery: z
    .strictObject({
      backoff: positiveDuration.default(1_000),
      max_backoff: positiveDuration.default(5 * 60_000),
      /** Give up (and record the failure) after trying for this long. */
      give_up_after: positiveDuration.default(24 * 3_600_000),
    })
    .default({ backoff: 1_000, max_backoff: 5 * 60_000, give_up_after: 24 * 3_600_000 }),
  shard: z.strictObject({ index: z.int().min(0), total: z.int().min(1) }).optional(),
  /** Unused by lookout: a place for YAML anchors shared across the file. */
  definitions: z.unknown().optional(),
});

/** The config file as validated (durations in ms, defaults applied). */
export type ConfigFile = z.output<typeof configSchema>;
/** Re-exported for helpers that only need the duration types. */
export { duration };
