/** Config schemas of the poll kinds (the `polls:` list): one entry per kind, keyed by `kind`. */
import { z } from 'zod';
import { duration, positiveDuration } from '../../config/duration-schema.js';

const common = {
  name: z.string().regex(/^[A-Za-z0-9_.:-]+$/, 'poll names use letters, digits, _ . : - only'),
  cron: z.string().min(1),
  /** Per-run deadline; defaults to the source timeout × (retries + 1) pages' worth. */
  timeout: positiveDuration.optional(),
  enabled: z.boolean().default(true),
};

const snapshotMode = z.enum(['all', 'daily_only', 'interaction_only', 'harmonized_only']);
const listParams = z.strictObject({
  chain: z.string().optional(),
  wallet: z.string().optional(),
  snapshot_mode: snapshotMode.default('all'),
  limit: z.int().min(1).max(500).default(500),
});

/** Schema of each poll kind, by kind name. */
export const pollSchemas = {
  metrics: z.strictObject({
    ...common,
    kind: z.literal('metrics'),
    markets: z.array(z.string()).default([]),
    limit: z.int().min(1).default(1000),
    /** Ask only for rows created after now − lookback (the filter takes dates, so at least a day). */
    lookback: duration.default(0),
  }),
  positions: z.strictObject({ ...common, kind: z.literal('positions'), params: listParams.default({ snapshot_mode: 'all', limit: 500 }) }),
  assets: z.strictObject({ ...common, kind: z.literal('assets'), params: listParams.default({ snapshot_mode: 'all', limit: 500 }) }),
  holdings: z.strictObject({ ...common, kind: z.literal('holdings'), params: listParams.default({ snapshot_mode: 'all', limit: 500 }) }),
  performance: z.strictObject({
    ...common,
    kind: z.literal('performance'),
    params: z.record(z.string(), z.union([z.string(), z.number()])).default({}),
  }),
  benchmarks: z.strictObject({
    ...common,
    kind: z.literal('benchmarks'),
    networks: z.union([z.literal('all'), z.array(z.string()).min(1)]).default('all'),
    codes: z.array(z.enum(['usd', 'eth'])).min(1).default(['usd', 'eth']),
    lookback: positiveDuration.default(7 * 86_400_000),
    per_page: z.int().min(1).max(1000).default(1000),
  }),
} as const;

/** The `polls:` entry schema: a union discriminated by `kind`. */
export const pollSchema = z.discriminatedUnion('kind', [
  pollSchemas.metrics,
  pollSchemas.positions,
  pollSchemas.assets,
  pollSchemas.holdings,
  pollSchemas.performance,
  pollSchemas.benchmarks,
]);

/** One validated poll config. */
export type PollConfig = z.output<typeof pollSchema>;
/** The poll config of one kind. */
export type PollConfigOf<K extends PollConfig['kind']> = Extract<PollConfig, { kind: K }>;
