import { describe, expect, it } from 'vitest';
import { HOUR, historyOf, judge, market, MIN, NOW, position, rule } from '../../../test/rules-helpers.js';
import { apyJump } from './apy-jump.js';

const base = { kind: 'apy_jump', window: '1h', min_change: 0.02, min_change_rel: 0.5 };
const allUp = rule({ ...base, require: 'all' });
const anyUp = rule({ ...base });
const before = (borrow_apy: unknown, at = NOW - HOUR) => market({ borrow_apy }, at);

describe('apy_jump', () => {
  it.each([
    { name: 'up exactly 2 points and 50% (float noise tolerated)', prev: 0.04, cur: 0.06, r: allUp, want: 'breach' },
    { name: 'up 1.9 points and 47.5%: ok', prev: 0.04, cur: 0.059, r: allUp, want: 'ok' },
    { name: 'up 3 points but only 30%, all: ok', prev: 0.1, cur: 0.13, r: allUp, want: 'ok' },
    { name: 'up 3 points but only 30%, any: breach', prev: 0.1, cur: 0.13, r: anyUp, want: 'breach' },
    { name: 'up 75% but only 1.5 points, all: ok', prev: 0.02, cur: 0.035, r: allUp, want: 'ok' },
    { name: 'up 75% but only 1.5 points, any: breach', prev: 0.02, cur: 0.035, r: anyUp, want: 'breach' },
    { name: 'down 5 points with direction up: ok', prev: 0.1, cur: 0.05, r: allUp, want: 'ok' },
    { name: 'down 5 points (50%) with direction down: breach', prev: 0.1, cur: 0.05, r: rule({ ...base, require: 'all', direction: 'down' }), want: 'breach' },
    { name: 'down 5 points (50%) with direction both: breach', prev: 0.1, cur: 0.05, r: rule({ ...base, require: 'all', direction: 'both' }), want: 'breach' },
    { name: 'up 5 points with direction down: ok', prev: 0.05, cur: 0.1, r: rule({ ...base, direction: 'down' }), want: 'ok' },
    { name: 'numeric strings', prev: '0.04', cur: '0.07', r: allUp, want: 'breach' },
    { name: 'from zero: any rise is an infinite relative change', prev: 0, cur: 0.03, r: allUp, want: 'breach' },
    { name: 'unchanged at zero: ok', prev: 0, cur: 0, r: allUp, want: 'ok' },
    { name: 'only min_change_rel given', prev: 0.04, cur: 0.061, r: rule({ kind: 'apy_jump', window: '1h', min_change_rel: 0.5 }), want: 'breach' },
  ])('$name', ({ prev, cur, r, want }) => {
    const v = judge(apyJump, r, market({ borrow_apy: cur }), { history: historyOf([before(prev)]) });
    expect(v.status).toBe(want);
  });

  it('reports previous, change and change_rel', () => {
    const v = judge(apyJump, allUp, market({ borrow_apy: 0.09 }), { history: historyOf([before(0.05)]) });
    expect(v).toMatchObject({ status: 'breach', value: 0.09, previous: 0.05, threshold: 0.02 });
    if (v.status !== 'breach') throw new Error('unreachable');
    expect(v.context?.change).toBeCloseTo(0.04, 12);
    expect(v.context?.change_rel).toBeCloseTo(0.8, 12);
    expect(v.context).toMatchObject({ field: 'borrow_apy', window: 3600, direction: 'up', apy: 0.09 });
  });

  it.each([
    { name: 'no history at all', history: [], want: 'wait' },
    { name: 'only a reading newer than now − window', history: [before(0.01, NOW - HOUR + 1)], want: 'wait' },
    { name: 'a reading exactly at now − window', history: [before(0.01, NOW - HOUR)], want: 'breach' },
    { name: 'the newest reading at or before now − window is the one compared', history: [before(0.01, NOW - 2 * HOUR), before(0.07, NOW - HOUR - MIN), before(0.01, NOW - 30 * MIN)], want: 'ok' },
    { name: 'the old reading has no value', history: [before(null)], want: 'wait' },
  ])('window: $name', ({ history, want }) => {
    expect(judge(apyJump, allUp, market({ borrow_apy: 0.07 }), { history: historyOf(history) }).status).toBe(want);
  });

  it('reads supply_apy when asked', () => {
    const r = rule({ ...base, field: 'supply_apy' });
    const h = historyOf([market({ borrow_apy: 0.5, supply_apy: 0.02 }, NOW - HOUR)]);
    expect(judge(apyJump, r, market({ borrow_apy: 0.5, supply_apy: 0.05 }), { history: h }).status).toBe('breach');
    expect(judge(apyJump, r, market({ borrow_apy: 0.9, supply_apy: 0.02 }), { history: h }).status).toBe('ok');
  });

  it.each([
    { name: 'current value null', cur: null, reason: 'borrow_apy missing' },
    { name: 'current value not a number', cur: 'n/a', reason: 'borrow_apy not a number: n/a' },
  ])('data error: $name', ({ cur, reason }) => {
    expect(judge(apyJump, allUp, market({ borrow_apy: cur }), { history: historyOf([before(0.04)]) })).toEqual({ status: 'data_error', reason });
  });

  it('check: min_change or min_change_rel alone is enough; neither is refused', () => {
    expect(apyJump.check!(rule({ kind: 'apy_jump', window: '1h', min_change: 0.02 }))).toEqual([]);
    expect(apyJump.check!(rule({ kind: 'apy_jump', window: '1h', min_change_rel: 0.5 }))).toEqual([]);
    expect(apyJump.check!(rule({ kind: 'apy_jump', window: '1h' }))).toEqual([
      { path: [], message: 'apy_jump needs min_change (absolute, 0.02 = 2 points) and/or min_change_rel (relative, 0.5 = 50%)' },
    ]);
  });

  it('defaults: borrow_apy, direction up, require any', () => {
    expect(rule({ kind: 'apy_jump', window: '1h', min_change: 0.02 })).toMatchObject({ field: 'borrow_apy', direction: 'up', require: 'any' });
  });

  it('every direction and require value may be written out', () => {
    for (const direction of ['up', 'down', 'both']) for (const require of ['any', 'all']) expect(rule({ ...base, direction, require })).toMatchObject({ direction, require });
  });

  it('a position reading waits, naming what it got', () => {
    expect(judge(apyJump, allUp, position())).toEqual({ status: 'wait', reason: 'not a market reading (got position)' });
  });

  it('waits with a reason when the old reading lacks the field; a current field absent altogether is missing', () => {
    expect(judge(apyJump, allUp, market({ borrow_apy: 0.07 }), { history: historyOf([before(null)]) })).toEqual({ status: 'wait', reason: 'the reading 3600s ago has no borrow_apy' });
    expect(judge(apyJump, allUp, market({ borrow_apy: undefined }), { history: historyOf([before(0.04)]) })).toEqual({ status: 'data_error', reason: 'borrow_apy missing' });
  });

  it('a change exactly at the minimum less the float tolerance is a breach (≥), for both minimums', () => {
    // 1 + 1e-12 − 1e-12 and 0.5 + 1e-12 − 1e-12 are exactly 1 and 0.5 in doubles: the change (2 → 3) meets them exactly.
    const abs = rule({ kind: 'apy_jump', window: '1h', min_change: 1 + 1e-12 });
    const rel = rule({ kind: 'apy_jump', window: '1h', min_change_rel: 0.5 + 1e-12 });
    for (const r of [abs, rel]) expect(judge(apyJump, r, market({ borrow_apy: 3 }), { history: historyOf([before(2)]) }).status).toBe('breach');
  });

  it('require all with one minimum given judges that one alone', () => {
    const h = { history: historyOf([before(0.04)]) };
    expect(judge(apyJump, rule({ kind: 'apy_jump', window: '1h', min_change: 0.02, require: 'all' }), market({ borrow_apy: 0.07 }), h).status).toBe('breach');
    expect(judge(apyJump, rule({ kind: 'apy_jump', window: '1h', min_change_rel: 0.5, require: 'all' }), market({ borrow_apy: 0.07 }), h).status).toBe('breach');
  });

  it('from zero: unchanged is a relative change of 0, a fall is −∞ (a breach going down), a rise with direction both is a breach', () => {
    const unchanged = judge(apyJump, allUp, market({ borrow_apy: 0 }), { history: historyOf([before(0)]) });
    expect(unchanged.status === 'ok' && unchanged.context?.change_rel).toBe(0);
    const down = rule({ kind: 'apy_jump', window: '1h', min_change_rel: 0.5, direction: 'down' });
    const fell = judge(apyJump, down, market({ borrow_apy: -0.01 }), { history: historyOf([before(0)]) });
    expect(fell.status).toBe('breach');
    const both = rule({ ...base, require: 'all', direction: 'both' });
    expect(judge(apyJump, both, market({ borrow_apy: 0.1 }), { history: historyOf([before(0.05)]) }).status).toBe('breach');
  });
});
