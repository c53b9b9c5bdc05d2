/**
 * `oracle_lag`: the market's oracle has not updated for longer than allowed: now − oracle_last_update > max_lag.
 * Give `max_lag` directly, or the feed's `heartbeat`: max_lag = heartbeat × (1 + margin) + grace (margin 10%,
 * grace 5m by default), e.g. 95,340 s for a 24h feed. A timestamp that is not milliseconds (looks like seconds)
 * or lies more than 5 minutes in the future is a data error.
 */
import { num } from '../coerce.js';
import { defineKind, notANumber, notMine, type RuleOf, type RuleProblem } from '../define.js';
import type { ParamShape } from '../param-kit.js';
import { LEAN_OK } from '../rule-kind.js';

/** Default heartbeat margin (fraction) and grace (ms) when `heartbeat` is given. */
export const ORACLE_LAG_DEFAULTS = { margin: 0.1, grace: 5 * 60_000 } as const;
const FUTURE_TOLERANCE = 5 * 60_000;
const MS_EPOCH_FLOOR = 1e12; // 2001-09-09 in ms; a seconds timestamp is far below it

const params = {
  max_lag: ({ positiveDuration }) => positiveDuration.optional(),
  heartbeat: ({ positiveDuration }) => positiveDuration.optional(),
  margin: ({ nonNegative }) => nonNegative.optional(),
  grace: ({ duration }) => duration.optional(),
} satisfies ParamShape;

/** The lag allowed by an oracle_lag rule, ms. */
export function maxLagMs(rule: RuleOf<typeof params>): number {
  if (rule.max_lag !== undefined) return rule.max_lag;
  const hb = rule.heartbeat ?? 0;
  return Math.round(hb * (1 + (rule.margin ?? ORACLE_LAG_DEFAULTS.margin)) + (rule.grace ?? ORACLE_LAG_DEFAULTS.grace));
}

/** The `oracle_lag` rule kind. */
export const oracleLag = defineKind({
  kind: 'oracle_lag',
  description: 'a market’s oracle last updated longer ago than `max_lag` (or `heartbeat` × (1 + margin) + grace)',
  reads: ['market'],
  context: ['lag', 'max_lag', 'heartbeat'],
  needs: () => ['oracle_last_update'],
  params,
  check(rule) {
    const out: RuleProblem[] = [];
    if (rule.max_lag !== undefined && rule.heartbeat !== undefined) out.push({ path: ['heartbeat'], message: 'heartbeat: give max_lag or heartbeat, not both' });
    if (rule.max_lag === undefined && rule.heartbeat === undefined) out.push({ path: [], message: 'oracle_lag needs max_lag, or the feed’s heartbeat' });
    if (rule.max_lag !== undefined) {
      for (const k of ['margin', 'grace'] as const) {
        if (rule[k] !== undefined) out.push({ path: [k], message: `${k}: applies only with heartbeat (max_lag is used as written)` });
      }
    }
    return out;
  },
  // The oldest update in a bucket, judged at the bucket's end: the worst lag it could have shown.
  worst: () => ({ oracle_last_update: 'min' }),
  evaluate({ rule, reading, now, lean }) {
    if (reading.kind !== 'market') return notMine('market', reading);
    const raw = reading.fields.oracle_last_update;
    const ts = num(raw);
    if (ts === null) return notANumber('oracle_last_update', raw);
    if (ts < MS_EPOCH_FLOOR) return { status: 'data_error', reason: `oracle_last_update ${ts} is not a millisecond timestamp` };
    if (ts > now + FUTURE_TOLERANCE) return { status: 'data_error', reason: `oracle_last_update ${new Date(ts).toISOString()} is in the future` };
    const lag = Math.max(0, now - ts) / 1000;
    const max = maxLagMs(rule) / 1000;
    if (!(lag > max) && lean) return LEAN_OK;
    return { status: lag > max ? 'breach' : 'ok', value: lag, threshold: max };
  },
  explain: ({ rule }, v) => ({ lag: v.value, max_lag: v.threshold, heartbeat: rule.heartbeat !== undefined ? rule.heartbeat / 1000 : null }),
});

