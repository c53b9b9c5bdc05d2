/**
 * `utilization_above`: a market's utilization above `threshold`. With `clear_below`, an active alert (pending or
 * firing) stays in breach until utilization drops below clear_below, so a market hovering at the threshold does not
 * flap. Utilization above 1.0001 or below 0 cannot happen in a lending market: a data error, never a breach.
 */

import { num } from '../coerce.js';
import { defineKind, notANumber, notMine } from '../define.js';
import { LEAN_OK } from '../rule-kind.js';

/** Tolerance above 1 for rounding in the service's utilization before it is a data error. */
export const UTILIZATION_MAX = 1.0001;

/** The `utilization_above` rule kind. */
export const utilizationAbove = defineKind({
  kind: 'utilization_above',
  description: 'a market’s utilization is above `threshold` (resolves only below `clear_below`)',
  reads: ['market'],
  context: ['utilization', 'clear_below'],
  needs: () => ['utilization'],
  worst: () => ({ utilization: 'max' }),
  params: { threshold: ({ fraction }) => fraction, clear_below: ({ fraction }) => fraction.optional() },
  check(rule) {
    if (rule.clear_below !== undefined && rule.clear_below >= rule.threshold) {
      return [{ path: ['clear_below'], message: `clear_below: must be below threshold (${rule.clear_below} ≥ ${rule.threshold})` }];
    }
    return [];
  },
  evaluate({ rule, reading, active, lean }) {
    if (reading.kind !== 'market') return notMine('market', reading);
    const raw = reading.fields.utilization;
    const u = num(raw);
    if (u === null) return notANumber('utilization', raw);
    if (u > UTILIZATION_MAX || u < 0) return { status: 'data_error', reason: `utilization ${u} outside [0, 1]`, value: u };
    const clear = rule.clear_below;
    const breach = u > rule.threshold || (active && clear !== undefined && u >= clear);
    if (!breach && lean) return LEAN_OK;
    return { status: breach ? 'breach' : 'ok', value: u, threshold: rule.threshold };
  },
  explain: ({ rule }, v) => ({ utilization: v.value, clear_below: rule.clear_below ?? null }),
});

