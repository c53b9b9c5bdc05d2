/**
 * The shared parameter types of the rule kinds (src/rules/define.ts): a value out of range is refused at load time
 * with a message that says what the parameter must be, for every kind that uses the type.
 */
import { describe, expect, it } from 'vitest';
import { ruleSchema } from '../src/config/load.js';

/** The (path, message) pairs the rule schema refuses `raw` with; empty when it loads. */
function refusals(raw: Record<string, unknown>): Array<[string, string]> {
  const r = ruleSchema.safeParse({ name: 'r', ...raw });
  return r.success ? [] : r.error.issues.map((i): [string, string] => [i.path.join('.'), i.message]);
}

const FRACTION = 'must be between 0 and 1 (a fraction: 0.95 = 95%)';

describe('rule parameters', () => {
  it.each<[string, Record<string, unknown>, Array<[string, string]>]>([
    ['a change of 0 (positive)', { kind: 'apy_jump', window: '1h', min_change: 0 }, [['min_change', 'must be greater than 0']]],
    ['a negative relative change (positive)', { kind: 'apy_jump', window: '1h', min_change_rel: -0.5 }, [['min_change_rel', 'must be greater than 0']]],
    ['a deviation of 0 (positive)', { kind: 'price_deviation', max_deviation: 0 }, [['max_deviation', 'must be greater than 0']]],
    ['a threshold in words (fraction)', { kind: 'utilization_above', threshold: 'high' }, [['threshold', 'expected a number']]],
    ['a threshold above 1 (fraction)', { kind: 'utilization_above', threshold: 1.5 }, [['threshold', FRACTION]]],
    ['a threshold below 0 (fraction)', { kind: 'utilization_above', threshold: -0.1 }, [['threshold', FRACTION]]],
    ['a clear_below above 1 (fraction)', { kind: 'utilization_above', threshold: 0.9, clear_below: 1.2 }, [['clear_below', FRACTION]]],
    ['a negative minimum value (0 or more)', { kind: 'unverified_position', min_value_usd: -1 }, [['min_value_usd', 'must be 0 or more']]],
  ])('refuses %s with what it must be', (_what, raw, want) => {
    expect(refusals(raw)).toEqual(want);
  });

  it.each<[string, Record<string, unknown>]>([
    ['the smallest change above 0', { kind: 'apy_jump', window: '1h', min_change: 1e-9 }],
    ['a threshold of exactly 0 and of exactly 1', { kind: 'utilization_above', threshold: 1, clear_below: 0 }],
    ['a minimum value of 0', { kind: 'unverified_position', min_value_usd: 0 }],
  ])('accepts %s', (_what, raw) => {
    expect(refusals(raw)).toEqual([]);
  });
});
