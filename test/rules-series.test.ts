/**
 * What the alert page and the backtest draw as a rule's value line (src/rules/series.ts), the in-memory history view
 * the rule tests and `lookout render` judge against (`historyOf`), and how a bucket of older history is judged: at
 * its worst value for the rule's direction (`judgedReading`, SPEC §storage: a rule judges a bucket's worst).
 */
import { describe, expect, it } from 'vitest';
import type { Reading } from '../src/model.js';
import { apyJump } from '../src/rules/kinds/apy-jump.js';
import { oracleLag } from '../src/rules/kinds/oracle-lag.js';
import { threshold } from '../src/rules/kinds/threshold.js';
import { unverifiedPosition } from '../src/rules/kinds/unverified-position.js';
import { utilizationAbove } from '../src/rules/kinds/utilization-above.js';
import { historyOf, judgedReading, worstPicks, type EvalInput, type RuleKind, type Verdict } from '../src/rules/rule-kind.js';
import { clearLevel, valueSeries } from '../src/rules/series.js';
import { HOUR, MIN, NOW, market, noHistory, position, rule } from './rules-helpers.js';

/** A bucket of older history: `fields` hold its last reading, `min`/`max` the extremes over its readings. */
function bucketed(r: Reading, min: Record<string, unknown>, max: Record<string, unknown>): Reading {
  return { ...r, bucket: { start: r.at - 5 * MIN, n: 30, min, max } };
}

describe('historyOf', () => {
  const a1 = market({ borrow_apy: 0.01 }, NOW - 3 * HOUR);
  const a2 = market({ borrow_apy: 0.02 }, NOW - 2 * HOUR);
  const a3 = market({ borrow_apy: 0.03 }, NOW - HOUR);
  const other = market({ borrow_apy: 0.5 }, NOW - 90 * MIN, 'morpho-base-0xother');
  const pos = { ...position({}, NOW - 90 * MIN), entity: 'morpho-base-0xabc123' };
  // Given out of order, with another entity's and another kind's readings (same entity name) in between.
  const h = historyOf([a3, other, a1, pos, a2]);

  it('at(t) is the newest reading of that kind and entity at or before t, whatever order it was given in', () => {
    expect(h.at('market', 'morpho-base-0xabc123', NOW)).toBe(a3);
    expect(h.at('market', 'morpho-base-0xabc123', NOW - 61 * MIN)).toBe(a2);
    expect(h.at('market', 'morpho-base-0xabc123', NOW - 80 * MIN)).toBe(a2);
    expect(h.at('market', 'morpho-base-0xother', NOW)).toBe(other);
    expect(h.at('position', 'morpho-base-0xabc123', NOW)).toBe(pos);
  });

  it('at(t) includes a reading taken exactly at t, and has nothing before the oldest', () => {
    expect(h.at('market', 'morpho-base-0xabc123', NOW - 2 * HOUR)).toBe(a2);
    expect(h.at('market', 'morpho-base-0xabc123', NOW - 3 * HOUR)).toBe(a1);
    expect(h.at('market', 'morpho-base-0xabc123', NOW - 3 * HOUR - 1)).toBeUndefined();
    expect(h.at('market', 'nobody', NOW)).toBeUndefined();
  });

  it('range(from, to) is that kind and entity, oldest first, both bounds included', () => {
    expect(h.range('market', 'morpho-base-0xabc123', NOW - 3 * HOUR, NOW - HOUR)).toEqual([a1, a2, a3]);
    expect(h.range('market', 'morpho-base-0xabc123', NOW - 3 * HOUR + 1, NOW - HOUR - 1)).toEqual([a2]);
    expect(h.range('market', 'morpho-base-0xabc123', NOW - 2 * HOUR, NOW - 2 * HOUR)).toEqual([a2]);
    expect(h.range('market', 'morpho-base-0xother', 0, NOW)).toEqual([other]);
    expect(h.range('position', 'morpho-base-0xabc123', 0, NOW)).toEqual([pos]);
  });

  it('an apy_jump judged over it compares with the reading a window old, not a newer or an older one', () => {
    const r = rule({ kind: 'apy_jump', window: '1h', min_change: 0.015 });
    const now = market({ borrow_apy: 0.035 }, NOW);
    // The reading at or before NOW − 1 h is a3 (0.03): a change of 0.005, no jump. Against a2 (0.02) it would be one.
    const v = apyJump.evaluate({ rule: r as never, reading: now, now: NOW, history: h, active: false });
    expect(v).toMatchObject({ status: 'ok', previous: 0.03 });
  });
});

describe('judgedReading: a bucket is judged at its worst value for the rule', () => {
  // A rule's worst as the engine passes it: its pairs, made once per rule.
  const judged = (r: Reading, worst: Readonly<Record<string, 'min' | 'max'>> | undefined) => judgedReading(r, worstPicks(worst));
  const last = market({ utilization: 0.5, borrow_apy: 0.05 }, NOW - 10 * HOUR);
  const b = bucketed(last, { utilization: 0.4, borrow_apy: 0.01 }, { utilization: 0.99, borrow_apy: 0.09 });

  it('takes the max of a field judged upwards and the min of one judged downwards; other fields keep the last value', () => {
    expect(judged(b, { utilization: 'max' })).toEqual({ ...b, fields: { ...last.fields, utilization: 0.99 } });
    expect(judged(b, { borrow_apy: 'min' })).toEqual({ ...b, fields: { ...last.fields, borrow_apy: 0.01 } });
    expect(judged(b, { utilization: 'min', borrow_apy: 'max' })).toEqual({ ...b, fields: { ...last.fields, utilization: 0.4, borrow_apy: 0.09 } });
  });

  it('keeps the last value of a field the bucket has no extreme for (not numeric)', () => {
    const noExtreme = bucketed(last, {}, {});
    expect(judged(noExtreme, { utilization: 'max' })).toEqual(noExtreme);
    expect(judged(noExtreme, { utilization: 'max' }).fields.utilization).toBe(0.5);
  });

  it('a field named like a member of every object takes an extreme only when the bucket stored one (own members)', () => {
    const noExtreme = bucketed(last, {}, {});
    const worst: Record<string, 'min' | 'max'> = JSON.parse('{"toString": "max", "constructor": "min"}');
    const j = judged(noExtreme, worst);
    expect(Object.hasOwn(j.fields, 'toString')).toBe(false);
    expect(Object.hasOwn(j.fields, 'constructor')).toBe(false);
    const stored = bucketed(last, JSON.parse('{"__proto__": 0.25}') as Record<string, unknown>, JSON.parse('{"__proto__": 0.75}') as Record<string, unknown>);
    const up = judged(stored, JSON.parse('{"__proto__": "max"}') as Record<string, 'max'>);
    expect(Object.getOwnPropertyDescriptor(up.fields, '__proto__')?.value).toBe(0.75);
    expect(Object.getPrototypeOf(up.fields)).toBe(Object.prototype);
  });

  it('leaves a full-resolution reading, and a rule with no worst, as they are; never changes the reading given', () => {
    expect(judged(last, { utilization: 'max' })).toBe(last);
    expect(judged(b, undefined)).toBe(b);
    // A kind whose worst names no field (apy_jump both ways): the reading itself, no copy.
    expect(judged(b, {})).toBe(b);
    judged(b, { utilization: 'max' });
    expect(b.fields.utilization).toBe(0.5);
  });

  it('a utilization_above rule breaches on a bucket whose last reading was fine but which peaked above it', () => {
    const r = rule({ kind: 'utilization_above', threshold: 0.95 });
    const v = utilizationAbove.evaluate({ rule: r as never, reading: judged(b, utilizationAbove.worst!(r as never)), now: NOW, history: noHistory, active: false });
    expect(v).toMatchObject({ status: 'breach', value: 0.99 });
  });
});

describe('valueSeries: the value line of a rule', () => {
  const util = rule({ kind: 'utilization_above', threshold: 0.9 });

  it('is the value the rule judged at each reading, with the threshold it compared with', () => {
    const readings = [market({ utilization: 0.5 }, NOW - 2 * MIN), market({ utilization: 0.95 }, NOW - MIN), market({ utilization: '0.7' }, NOW)];
    expect(valueSeries(utilizationAbove, util, readings, noHistory)).toEqual({
      points: [
        { t: NOW - 2 * MIN, v: 0.5 },
        { t: NOW - MIN, v: 0.95 },
        { t: NOW, v: 0.7 },
      ],
      threshold: 0.9,
    });
  });

  it('draws a bucket at its worst value for the rule: the max for a rule above, the min for one below', () => {
    const b = bucketed(market({ utilization: 0.5 }, NOW - 10 * HOUR), { utilization: 0.2 }, { utilization: 0.97 });
    expect(valueSeries(utilizationAbove, util, [b], noHistory).points).toEqual([{ t: NOW - 10 * HOUR, v: 0.97 }]);
    const below = rule({ kind: 'threshold', field: 'utilization', op: '<', value: 0.3 });
    expect(valueSeries(threshold, below, [b], noHistory).points).toEqual([{ t: NOW - 10 * HOUR, v: 0.2 }]);
  });

  it('leaves a gap, not a zero, where a field the rule needs was unreadable', () => {
    const unreadable: Reading = { ...market({ utilization: null }, NOW - MIN), unreadable: { utilization: 'not_numeric' } };
    // Another field unreadable does not stop the rule from judging its own.
    const otherUnreadable: Reading = { ...market({ utilization: 0.6 }, NOW), unreadable: { borrow_apy: 'not_numeric' } };
    expect(valueSeries(utilizationAbove, util, [market({ utilization: 0.5 }, NOW - 2 * MIN), unreadable, otherUnreadable], noHistory).points).toEqual([
      { t: NOW - 2 * MIN, v: 0.5 },
      { t: NOW - MIN, v: null },
      { t: NOW, v: 0.6 },
    ]);
  });

  it('leaves a gap where a needed field was unreadable even where the kind would judge the unknown value (SPEC §6)', () => {
    const r = rule({ kind: 'unverified_position', min_value_usd: 1000 });
    // The client leaves an unreadable field null; unverified_position alone would take a null `verified` as "not unverified".
    const unknown: Reading = { ...position({ verified: null, value_usd: 50_000 }, NOW), unreadable: { verified: 'not_boolean' } };
    expect(unverifiedPosition.evaluate({ rule: r as never, reading: unknown, now: NOW, history: noHistory, active: false })).toMatchObject({ status: 'ok', value: 50_000 });
    expect(valueSeries(unverifiedPosition, r, [position({ verified: false, value_usd: 2000 }, NOW - MIN), unknown], noHistory)).toEqual({
      points: [
        { t: NOW - MIN, v: 2000 },
        { t: NOW, v: null },
      ],
      threshold: 1000,
    });
  });

  it('judges each reading at its own time against the history: a gap while no reading is a window old', () => {
    const jump = rule({ kind: 'apy_jump', window: '1h', min_change: 0.02 });
    const readings = [market({ borrow_apy: 0.03 }, NOW - 2 * HOUR), market({ borrow_apy: 0.04 }, NOW - HOUR), market({ borrow_apy: 0.08 }, NOW)];
    expect(valueSeries(apyJump, jump, readings, historyOf(readings))).toEqual({
      points: [
        { t: NOW - 2 * HOUR, v: null },
        { t: NOW - HOUR, v: 0.04 },
        { t: NOW, v: 0.08 },
      ],
      threshold: 0.02,
    });
  });

  it('leaves a gap at a data error (a value the service could not mean), and has no threshold when nothing was judged', () => {
    const readings = [market({ utilization: 1.5 }, NOW - MIN), market({ utilization: 'high' }, NOW)];
    expect(valueSeries(utilizationAbove, util, readings, noHistory)).toEqual({
      points: [
        { t: NOW - MIN, v: null },
        { t: NOW, v: null },
      ],
      threshold: null,
    });
  });

  it('judges as for an alert that is not active: the value drawn is the one judged', () => {
    const seen: Array<Pick<EvalInput, 'now' | 'active'>> = [];
    const readings = [market({}, NOW - MIN), market({}, NOW)];
    valueSeries(recording(seen), util, readings, noHistory);
    expect(seen).toEqual([
      { now: NOW - MIN, active: false },
      { now: NOW, active: false },
    ]);
  });

  it('leaves a gap where the kind throws, or gives a value that is not a finite number, and goes on', () => {
    const verdicts: Array<Verdict | Error> = [
      { status: 'ok', value: 1, threshold: 5 },
      new Error('kind bug'),
      { status: 'breach', value: Number.POSITIVE_INFINITY, threshold: 6 },
      { status: 'ok', value: Number.NaN, threshold: null },
      { status: 'ok', value: null, threshold: null },
      { status: 'wait', reason: 'not yet' },
      { status: 'breach', value: 7, threshold: null },
    ];
    const readings = verdicts.map((_, i) => market({}, NOW + i * MIN));
    expect(valueSeries(scripted(verdicts), util, readings, noHistory)).toEqual({
      points: [
        { t: NOW, v: 1 },
        { t: NOW + MIN, v: null },
        { t: NOW + 2 * MIN, v: null },
        { t: NOW + 3 * MIN, v: null },
        { t: NOW + 4 * MIN, v: null },
        { t: NOW + 5 * MIN, v: null },
        { t: NOW + 6 * MIN, v: 7 },
      ],
      // The newest threshold a verdict compared with: a later verdict without one does not erase it.
      threshold: 6,
    });
  });

  it('an oracle_lag rule over a bucket is drawn at the oldest update the bucket saw (its worst lag)', () => {
    const lag = rule({ kind: 'oracle_lag', max_lag: '1h' });
    const at = NOW - 10 * HOUR;
    const b = bucketed(market({ oracle_last_update: at - MIN }, at), { oracle_last_update: at - 3 * HOUR }, { oracle_last_update: at - MIN });
    expect(valueSeries(oracleLag, lag, [b], noHistory)).toEqual({ points: [{ t: at, v: 3 * 3600 }], threshold: 3600 });
    // Its last reading alone would show a minute.
    const { bucket: _, ...plain } = b;
    expect(valueSeries(oracleLag, lag, [plain], noHistory).points).toEqual([{ t: at, v: 60 }]);
  });
});

describe('clearLevel', () => {
  it('is the rule’s clear_below, or null when it has none', () => {
    expect(clearLevel(rule({ kind: 'utilization_above', threshold: 0.95, clear_below: 0.9 }))).toBe(0.9);
    expect(clearLevel(rule({ kind: 'utilization_above', threshold: 0.95 }))).toBeNull();
    expect(clearLevel({ ...rule({ kind: 'utilization_above', threshold: 0.95 }), clear_below: Number.NaN } as never)).toBeNull();
  });
});

/** A stand-in kind answering `verdicts` in turn (an Error is thrown): the kinds' bugs and odd values series must survive. */
function scripted(verdicts: Array<Verdict | Error>): RuleKind {
  let i = 0;
  return {
    ...utilizationAbove,
    needs: undefined,
    worst: undefined,
    evaluate: () => {
      const v = verdicts[i++]!;
      if (v instanceof Error) throw v;
      return v;
    },
  } as RuleKind;
}

/** A kind that records the time and activity it was asked to judge at. */
function recording(seen: Array<Pick<EvalInput, 'now' | 'active'>>): RuleKind {
  return {
    ...utilizationAbove,
    evaluate: ({ now, active }: EvalInput) => {
      seen.push({ now, active });
      return { status: 'ok', value: 0, threshold: 0 };
    },
  } as RuleKind;
}
