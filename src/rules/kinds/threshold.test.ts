import { describe, expect, it } from 'vitest';
import { benchmark, judge, market, position, rule } from '../../../test/rules-helpers.js';
import { operators } from '../operators.js';
import { threshold } from './threshold.js';

describe('threshold', () => {
  it.each([
    { name: '> above', op: '>', a: 0.3, want: 'breach' },
    { name: '> equal', op: '>', a: 0.25, want: 'ok' },
    { name: '>= equal', op: '>=', a: 0.25, want: 'breach' },
    { name: '< below', op: '<', a: 0.2, want: 'breach' },
    { name: '< equal', op: '<', a: 0.25, want: 'ok' },
    { name: '<= equal', op: '<=', a: 0.25, want: 'breach' },
    { name: '== equal', op: '==', a: 0.25, want: 'breach' },
    { name: '== different', op: '==', a: 0.26, want: 'ok' },
    { name: '!= different', op: '!=', a: 0.26, want: 'breach' },
    { name: '!= equal', op: '!=', a: 0.25, want: 'ok' },
    { name: 'numeric string', op: '>', a: '0.3', want: 'breach' },
  ])('borrow_apy $name', ({ op, a, want }) => {
    const r = rule({ kind: 'threshold', field: 'borrow_apy', op, value: 0.25 });
    expect(judge(threshold, r, market({ borrow_apy: a })).status).toBe(want);
  });

  it('every operator is a tiny {id, test} object named by its spelling, whose test is a op b', () => {
    // a = 1, 2, 3 against b = 2: below, equal, above.
    const truth: Record<string, boolean[]> = { '>': [false, false, true], '>=': [false, true, true], '<': [true, false, false], '<=': [true, true, false], '==': [false, true, false], '!=': [true, false, true] };
    expect(Object.keys(operators).sort()).toEqual(Object.keys(truth).sort());
    for (const [id, op] of Object.entries(operators)) {
      expect(op.id).toBe(id);
      expect([1, 2, 3].map((a) => op.test(a, 2)), id).toEqual(truth[id]);
    }
  });

  it.each([
    { name: 'nested market field', raw: { field: 'market.loan_asset_decimals', op: '<', value: 8 }, reading: market(), want: 'breach' },
    { name: 'position value', raw: { reading: 'position', field: 'value_usd', op: '>', value: 1e6 }, reading: position({ value_usd: 2e6 }), want: 'breach' },
    { name: 'benchmark 7-day total APY', raw: { reading: 'benchmark', field: 'apy.7day.total', op: '<', value: 0.01 }, reading: benchmark({ apy: { '7day': { base: 0, reward: 0, total: 0.005 } } }), want: 'breach' },
    { name: 'an exact decimal string field', raw: { field: 'total_borrowed', op: '>', value: 1e20 }, reading: market({ total_borrowed: '98765432109876543210000' }), want: 'breach' },
    { name: 'a reading of another kind is not judged', raw: { field: 'utilization', op: '>', value: 0 }, reading: position(), want: 'wait' },
  ])('$name', ({ raw, reading, want }) => {
    expect(judge(threshold, rule({ kind: 'threshold', ...raw }), reading).status).toBe(want);
  });

  it('reports value, threshold, field and op', () => {
    const r = rule({ kind: 'threshold', field: 'borrow_apy', op: '>', value: 0.25 });
    expect(judge(threshold, r, market({ borrow_apy: 0.4 }))).toEqual({ status: 'breach', value: 0.4, threshold: 0.25, context: { field: 'borrow_apy', op: '>' } });
  });

  it('reads only the kind its `reading` names', () => {
    expect(threshold.readingKinds?.(rule({ kind: 'threshold', reading: 'position', field: 'value_usd', op: '>', value: 1 }) as never)).toEqual(['position']);
  });

  it('a reading of another kind waits and says which kind it got', () => {
    const r = rule({ kind: 'threshold', field: 'utilization', op: '>', value: 0 });
    expect(judge(threshold, r, position())).toEqual({ status: 'wait', reason: 'not a market reading (got position)' });
  });

  it('a field of a kind whose fields are not specified (holding) is taken on trust at load; an empty field name is refused with a hint', () => {
    expect(threshold.check!(rule({ kind: 'threshold', reading: 'holding', field: 'anything.at_all', op: '>', value: 1 }))).toEqual([]);
    expect(() => rule({ kind: 'threshold', field: '', op: '>', value: 1 })).toThrow('name a field, e.g. borrow_apy or market.loan_asset_decimals');
  });

  it("a position's debt, collateral and yield (sent beside the interface's table) may be alerted on; a typo of one is refused", () => {
    for (const field of ['debt_usd', 'collateral_usd', 'apy']) {
      expect(threshold.check!(rule({ kind: 'threshold', reading: 'position', field, op: '>', value: 1 }))).toEqual([]);
    }
    expect(threshold.check!(rule({ kind: 'threshold', reading: 'position', field: 'dept_usd', op: '>', value: 1 }))).toEqual([
      { path: ['field'], message: "field: unknown field 'dept_usd' of a position reading (did you mean 'debt_usd'?)" },
    ]);
  });

  it.each([
    { name: 'missing field', fields: { borrow_apy: undefined }, reason: 'borrow_apy missing' },
    { name: 'null field', fields: { borrow_apy: null }, reason: 'borrow_apy missing' },
    { name: 'non-numeric field', fields: { borrow_apy: 'high' }, reason: 'borrow_apy not a number: high' },
    { name: 'boolean field', fields: { borrow_apy: true }, reason: 'borrow_apy not a number: true' },
  ])('data error: $name', ({ fields, reason }) => {
    const r = rule({ kind: 'threshold', field: 'borrow_apy', op: '>', value: 0.25 });
    expect(judge(threshold, r, market(fields))).toEqual({ status: 'data_error', reason });
  });
});
