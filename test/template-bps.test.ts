/** The `bps` template filter never shows a negative zero ("up -0 bps" for an APY that did not move). */
import { describe, expect, it } from 'vitest';
import { compileTemplate } from '../src/rules/template.js';

describe('bps filter', () => {
  it.each([
    [-0, '0 bps'],
    [-1e-12, '0 bps'],
    [-0.000001, '0 bps'],
    [0.0123, '123 bps'],
    [-0.0123, '-123 bps'],
    [0.000004, '0 bps'],
    [-0.00005, '-0.5 bps'],
  ])('%s renders as %s', (change, want) => {
    expect(compileTemplate('{{change | bps}}').render({ change })).toBe(want);
  });
});
