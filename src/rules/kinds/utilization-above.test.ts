import { describe, expect, it } from 'vitest';
import { judge, market, position, rule } from '../../../test/rules-helpers.js';
import { utilizationAbove } from './utilization-above.js';

const withBand = rule({ kind: 'utilization_above', threshold: 0.95, clear_below: 0.92 });
const noBand = rule({ kind: 'utilization_above', threshold: 0.95 });

describe('utilization_above', () => {
  it.each([
    { name: 'well below', u: 0.5, active: false, want: 'ok' },
    { name: 'exactly at threshold is not a breach (>)', u: 0.95, active: false, want: 'ok' },
    { name: 'just above threshold', u: 0.9501, active: false, want: 'breach' },
    { name: 'at 1.0 (suppliers cannot withdraw)', u: 1, active: false, want: 'breach' },
    { name: 'rounding just above 1 is tolerated', u: 1.00005, active: false, want: 'breach' },
    { name: 'in the band, not active: ok', u: 0.93, active: false, want: 'ok' },
    { name: 'in the band, active: stays breach', u: 0.93, active: true, want: 'breach' },
    { name: 'exactly at clear_below, active: still breach (resolves only below)', u: 0.92, active: true, want: 'breach' },
    { name: 'just below clear_below, active: ok', u: 0.9199, active: true, want: 'ok' },
    { name: 'numeric string above', u: '0.96', active: false, want: 'breach' },
    { name: 'numeric string in band, active', u: ' 0.93 ', active: true, want: 'breach' },
  ])('$name', ({ u, active, want }) => {
    const v = judge(utilizationAbove, withBand, market({ utilization: u }), { active });
    expect(v.status).toBe(want);
    if (v.status === 'breach' || v.status === 'ok') {
      expect(v.value).toBe(Number(u));
      expect(v.threshold).toBe(0.95);
      expect(v.context).toEqual({ utilization: Number(u), clear_below: 0.92 });
    }
  });

  it.each([
    { name: 'active, at threshold, no clear_below: ok', u: 0.95, want: 'ok' },
    { name: 'active, above threshold, no clear_below: breach', u: 0.951, want: 'breach' },
    { name: 'active, below threshold, no clear_below: ok', u: 0.94, want: 'ok' },
  ])('$name', ({ u, want }) => {
    expect(judge(utilizationAbove, noBand, market({ utilization: u }), { active: true }).status).toBe(want);
  });

  it.each([
    { name: 'above 1.0001', u: 1.0002, reason: 'utilization 1.0002 outside [0, 1]' },
    { name: 'negative', u: -0.01, reason: 'utilization -0.01 outside [0, 1]' },
    { name: 'null', u: null, reason: 'utilization missing' },
    { name: 'missing', u: undefined, reason: 'utilization missing' },
    { name: 'not a number', u: 'high', reason: 'utilization not a number: high' },
    { name: 'a numeric string out of range', u: '1.5', reason: 'utilization 1.5 outside [0, 1]' },
  ])('data error: $name', ({ u, reason }) => {
    const v = judge(utilizationAbove, withBand, market({ utilization: u }), { active: true });
    expect(v).toMatchObject({ status: 'data_error', reason });
  });

  it('waits on a reading it does not judge', () => {
    expect(judge(utilizationAbove, withBand, position()).status).toBe('wait');
  });

  it('a position reading waits, naming what it got', () => {
    expect(judge(utilizationAbove, noBand, position())).toEqual({ status: 'wait', reason: 'not a market reading (got position)' });
  });

  it('exactly 0 and exactly the rounding limit 1.0001 are utilizations, not data errors', () => {
    expect(judge(utilizationAbove, noBand, market({ utilization: 0 })).status).toBe('ok');
    expect(judge(utilizationAbove, noBand, market({ utilization: 1.0001 })).status).toBe('breach');
  });
});
