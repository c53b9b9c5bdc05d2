import { describe, expect, it } from 'vitest';
import { HOUR, judge, market, MIN, NOW, position, rule } from '../../../test/rules-helpers.js';
import { maxLagMs, oracleLag } from './oracle-lag.js';

const hb24 = rule({ kind: 'oracle_lag', heartbeat: '24h' });
const hb1 = rule({ kind: 'oracle_lag', heartbeat: '1h' });
const fixed = rule({ kind: 'oracle_lag', max_lag: '2h' });
const updated = (agoMs: number) => market({ oracle_last_update: NOW - agoMs });

describe('oracle_lag', () => {
  it.each([
    { name: '24h feed: heartbeat × 1.1 + 5m = 95,340 s', r: hb24, s: 95_340 },
    { name: '1h feed: heartbeat × 1.1 + 5m = 4,260 s', r: hb1, s: 4_260 },
    { name: '1h feed without grace: 3,960 s', r: rule({ kind: 'oracle_lag', heartbeat: '1h', grace: 0 }), s: 3_960 },
    { name: 'custom margin', r: rule({ kind: 'oracle_lag', heartbeat: '1h', margin: 0.5, grace: '1m' }), s: 5_460 },
    { name: 'max_lag as written', r: fixed, s: 7_200 },
  ])('max lag: $name', ({ r, s }) => {
    expect(maxLagMs(r as never) / 1000).toBe(s);
  });

  it.each([
    { name: '24h feed just updated', r: hb24, ago: MIN, want: 'ok' },
    { name: '24h feed exactly at max lag: not a breach (>)', r: hb24, ago: 95_340_000, want: 'ok' },
    { name: '24h feed one second over', r: hb24, ago: 95_341_000, want: 'breach' },
    { name: '1h feed at 70 minutes: within grace', r: hb1, ago: 70 * MIN, want: 'ok' },
    { name: '1h feed at 72 minutes', r: hb1, ago: 72 * MIN, want: 'breach' },
    { name: 'max_lag 2h at 2h01m', r: fixed, ago: 2 * HOUR + MIN, want: 'breach' },
    { name: 'timestamp slightly in the future (clock skew) reads as 0 lag', r: fixed, ago: -MIN, want: 'ok' },
  ])('$name', ({ r, ago, want }) => {
    expect(judge(oracleLag, r, updated(ago)).status).toBe(want);
  });

  it('reports the lag and the limit in seconds', () => {
    expect(judge(oracleLag, hb1, updated(2 * HOUR))).toEqual({
      status: 'breach',
      value: 7200,
      threshold: 4260,
      context: { lag: 7200, max_lag: 4260, heartbeat: 3600 },
    });
  });

  it('reads a numeric string timestamp', () => {
    expect(judge(oracleLag, fixed, market({ oracle_last_update: String(NOW - 3 * HOUR) })).status).toBe('breach');
  });

  it.each([
    { name: 'missing', ts: null, reason: 'oracle_last_update missing' },
    { name: 'not a number', ts: 'yesterday', reason: 'oracle_last_update not a number: yesterday' },
    { name: 'seconds instead of ms', ts: Math.floor(NOW / 1000), reason: `oracle_last_update ${Math.floor(NOW / 1000)} is not a millisecond timestamp` },
    { name: 'an hour in the future', ts: NOW + HOUR, reason: `oracle_last_update ${new Date(NOW + HOUR).toISOString()} is in the future` },
  ])('data error: $name', ({ ts, reason }) => {
    expect(judge(oracleLag, fixed, market({ oracle_last_update: ts }))).toEqual({ status: 'data_error', reason });
  });

  it.each([
    { name: 'max_lag alone', raw: { max_lag: '2h' }, want: [] },
    { name: 'heartbeat with margin and grace', raw: { heartbeat: '1h', margin: 0.2, grace: '1m' }, want: [] },
    { name: 'both', raw: { max_lag: '2h', heartbeat: '1h' }, want: [{ path: ['heartbeat'], message: 'heartbeat: give max_lag or heartbeat, not both' }] },
    { name: 'neither', raw: {}, want: [{ path: [], message: 'oracle_lag needs max_lag, or the feed’s heartbeat' }] },
    {
      name: 'max_lag with margin and grace',
      raw: { max_lag: '2h', margin: 0.2, grace: '1m' },
      want: [
        { path: ['margin'], message: 'margin: applies only with heartbeat (max_lag is used as written)' },
        { path: ['grace'], message: 'grace: applies only with heartbeat (max_lag is used as written)' },
      ],
    },
  ])('check: $name', ({ raw, want }) => {
    expect(oracleLag.check!(rule({ kind: 'oracle_lag', ...raw }))).toEqual(want);
  });

  it('a position reading waits, naming what it got', () => {
    expect(judge(oracleLag, fixed, position())).toEqual({ status: 'wait', reason: 'not a market reading (got position)' });
  });

  it('an absent timestamp is missing; the epoch floor itself and exactly 5 minutes ahead are still judged', () => {
    expect(judge(oracleLag, fixed, market({ oracle_last_update: undefined }))).toEqual({ status: 'data_error', reason: 'oracle_last_update missing' });
    expect(judge(oracleLag, fixed, market({ oracle_last_update: 1e12 })).status).toBe('breach');
    expect(judge(oracleLag, fixed, updated(-5 * MIN)).status).toBe('ok');
  });

  it('a max_lag rule reports no heartbeat', () => {
    expect(judge(oracleLag, fixed, updated(MIN))).toEqual({ status: 'ok', value: 60, threshold: 7200, context: { lag: 60, max_lag: 7200, heartbeat: null } });
  });
});
