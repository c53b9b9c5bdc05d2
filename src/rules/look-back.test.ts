import { expect, it } from 'vitest';
import { lookBack } from './look-back.js';

it('is the longest window among the rules, 0 without one; other parameters and non-numbers do not count', () => {
  expect(lookBack([])).toBe(0);
  expect(lookBack([{ threshold: 0.9 }, { window: 600_000 }, { window: 3_600_000 }, { window: 60_000 }])).toBe(3_600_000);
  expect(lookBack([{ for: 7_200_000, max_age: 86_400_000 }])).toBe(0);
  expect(lookBack([{ window: '1h' }, { window: Infinity }, { window: 5 }])).toBe(5);
});
