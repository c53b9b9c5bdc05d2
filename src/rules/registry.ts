/** The rule kinds lookout knows. STUB for the config loader: the rules work replaces it with one module per kind. */
import { z } from 'zod';
import { duration, positiveDuration } from '../config/duration.js';
import type { RuleKindSchema } from './schema.js';

/** Every rule kind's schema, in the order `lookout check` lists them. */
export const ruleKinds: readonly RuleKindSchema[] = [
  { kind: 'utilization_above', params: { threshold: z.number().min(0).max(1), clear_below: z.number().min(0).max(1).optional() } },
  {
    kind: 'apy_jump',
    params: {
      field: z.enum(['borrow_apy', 'supply_apy']).default('borrow_apy'),
      window: positiveDuration,
      min_change: z.number().positive().optional(),
      min_change_rel: z.number().positive().optional(),
      direction: z.enum(['up', 'down', 'both']).default('up'),
    },
  },
  { kind: 'oracle_lag', params: { max_lag: positiveDuration } },
  { kind: 'unverified_position', params: { min_value_usd: z.number().min(0).default(0) } },
  { kind: 'stale_benchmark', params: { max_age: positiveDuration.default(36 * 3_600_000), incomplete_for: duration.default(6 * 3_600_000) } },
  { kind: 'threshold', params: { field: z.string().min(1), op: z.enum(['>', '>=', '<', '<=', '==', '!=']), value: z.number() } },
  { kind: 'price_deviation', params: { max_deviation: z.number().positive() } },
];
