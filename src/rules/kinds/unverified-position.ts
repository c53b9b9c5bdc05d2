/**
 * `unverified_position`: a position the service could not verify against chain state (`verified: false`) worth at
 * least `min_value_usd`. `verified` missing means the service did not say: not a breach. An unverified position
 * without a value cannot be judged against the minimum: a data error.
 */
import { bool, num } from '../coerce.js';
import { defineKind, notANumber, notMine } from '../define.js';
import { LEAN_OK } from '../rule-kind.js';

/** The `unverified_position` rule kind. */
export const unverifiedPosition = defineKind({
  kind: 'unverified_position',
  description: 'a position with `verified: false` and value_usd ≥ `min_value_usd`',
  reads: ['position'],
  context: ['verified', 'value_usd'],
  needs: () => ['verified', 'value_usd'],
  params: { min_value_usd: ({ nonNegative }) => nonNegative.default(0) },
  evaluate({ rule, reading, lean }) {
    if (reading.kind !== 'position') return notMine('position', reading);
    const verified = bool(reading.fields.verified);
    const rawValue = reading.fields.value_usd;
    const value = num(rawValue);
    if (verified !== false) return lean ? LEAN_OK : { status: 'ok', value, threshold: rule.min_value_usd };
    if (value === null) return notANumber('value_usd', rawValue);
    if (value < rule.min_value_usd && lean) return LEAN_OK;
    return { status: value >= rule.min_value_usd ? 'breach' : 'ok', value, threshold: rule.min_value_usd };
  },
  explain: ({ reading }, v) => ({ verified: bool(reading.fields.verified), value_usd: v.value }),
});
