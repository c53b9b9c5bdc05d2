import { describe, expect, it } from 'vitest';
import { judge, market, position, rule } from '../../../test/rules-helpers.js';
import { unverifiedPosition } from './unverified-position.js';

const over10k = rule({ kind: 'unverified_position', min_value_usd: 10_000 });

describe('unverified_position', () => {
  it.each([
    { name: 'verified, large', verified: true, value: 1e6, want: 'ok' },
    { name: 'unverified, large', verified: false, value: 50_000, want: 'breach' },
    { name: 'unverified, exactly the minimum (≥)', verified: false, value: 10_000, want: 'breach' },
    { name: 'unverified, just under the minimum', verified: false, value: 9_999.99, want: 'ok' },
    { name: 'verified as the string "false"', verified: 'false', value: 20_000, want: 'breach' },
    { name: 'value as a numeric string', verified: false, value: '12000.5', want: 'breach' },
    { name: 'verified unknown (null): not a breach', verified: null, value: 1e6, want: 'ok' },
  ])('$name', ({ verified, value, want }) => {
    expect(judge(unverifiedPosition, over10k, position({ verified, value_usd: value })).status).toBe(want);
  });

  it('reports value and minimum', () => {
    expect(judge(unverifiedPosition, over10k, position({ verified: false, value_usd: 25_000 }))).toEqual({
      status: 'breach',
      value: 25_000,
      threshold: 10_000,
      context: { verified: false, value_usd: 25_000 },
    });
  });

  it('defaults to any value (min 0)', () => {
    expect(judge(unverifiedPosition, rule({ kind: 'unverified_position' }), position({ verified: false, value_usd: 0 })).status).toBe('breach');
  });

  it.each([
    { name: 'unverified without a value', value: null, reason: 'value_usd missing' },
    { name: 'unverified with a non-numeric value', value: 'lots', reason: 'value_usd not a number: lots' },
  ])('data error: $name', ({ value, reason }) => {
    expect(judge(unverifiedPosition, over10k, position({ verified: false, value_usd: value }))).toEqual({ status: 'data_error', reason });
  });

  it('waits on a market reading', () => {
    expect(judge(unverifiedPosition, over10k, market()).status).toBe('wait');
  });

  it('needs verified and value_usd; a market reading waits, naming what it got; an absent value is missing', () => {
    expect(unverifiedPosition.needs?.(over10k as never)).toEqual(['verified', 'value_usd']);
    expect(judge(unverifiedPosition, over10k, market())).toEqual({ status: 'wait', reason: 'not a position reading (got market)' });
    expect(judge(unverifiedPosition, over10k, position({ verified: false, value_usd: undefined }))).toEqual({ status: 'data_error', reason: 'value_usd missing' });
  });
});
