import { describe, expect, it } from 'vitest';
import { judge, market, position, rule } from '../../../test/rules-helpers.js';
import { priceDeviation } from './price-deviation.js';

const onePct = rule({ kind: 'price_deviation', max_deviation: 0.01 });
const prices = (oracle_price_scaled: unknown, service_price: unknown) => market({ oracle_price_scaled, service_price });

describe('price_deviation', () => {
  it.each([
    { name: 'equal prices', o: 3000, s: 3000, want: 'ok' },
    { name: '0.5% above', o: 3015, s: 3000, want: 'ok' },
    { name: 'exactly 1%: not a breach (>)', o: 1.01, s: 1, want: 'ok' },
    { name: '1.5% above', o: 3045, s: 3000, want: 'breach' },
    { name: '1.5% below', o: 2955, s: 3000, want: 'breach' },
    { name: 'numeric strings', o: '1.02', s: '1', want: 'breach' },
  ])('$name', ({ o, s, want }) => {
    expect(judge(priceDeviation, onePct, prices(o, s)).status).toBe(want);
  });

  it('reports the deviation and both prices', () => {
    const v = judge(priceDeviation, onePct, prices(1.03, 1));
    expect(v).toMatchObject({ status: 'breach', threshold: 0.01, context: { oracle_price: 1.03, service_price: 1 } });
    if (v.status !== 'breach') throw new Error('unreachable');
    expect(v.value).toBeCloseTo(0.03, 12);
    expect(v.context?.deviation).toBeCloseTo(0.03, 12);
  });

  it.each([
    { name: 'oracle price missing', o: null, s: 1, reason: 'oracle_price_scaled missing' },
    { name: 'oracle price not a number', o: 'n/a', s: 1, reason: 'oracle_price_scaled not a number: n/a' },
    { name: 'service price missing', o: 1, s: null, reason: 'service_price missing' },
    { name: 'service price zero', o: 1, s: 0, reason: 'service_price 0 is not positive' },
    { name: 'oracle price negative', o: -1, s: 1, reason: 'oracle price -1 is negative' },
  ])('data error: $name', ({ o, s, reason }) => {
    expect(judge(priceDeviation, onePct, prices(o, s))).toMatchObject({ status: 'data_error', reason });
  });

  it('needs both prices; a position reading waits, naming what it got', () => {
    expect(priceDeviation.needs?.(onePct as never)).toEqual(['oracle_price', 'service_price']);
    expect(judge(priceDeviation, onePct, position())).toEqual({ status: 'wait', reason: 'not a market reading (got position)' });
  });

  it('an oracle price of 0 is judged (100% off), and a deviation exactly at max + ε is not a breach (>)', () => {
    // (1 − 1e-12) + 1e-12 is exactly 1 in doubles, the deviation of 0 from 1.
    const edge = rule({ kind: 'price_deviation', max_deviation: 1 - 1e-12 });
    expect(judge(priceDeviation, edge, prices(0, 1)).status).toBe('ok');
    expect(judge(priceDeviation, onePct, prices(0, 1)).status).toBe('breach');
  });
});
