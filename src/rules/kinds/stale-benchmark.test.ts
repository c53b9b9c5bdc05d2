import { describe, expect, it } from 'vitest';
import type { Reading } from '../../model.js';
import { benchmark, historyOf, HOUR, judge, market, rule } from '../../../test/rules-helpers.js';
import { explained, type HistoryView } from '../rule-kind.js';
import { incompleteSince, staleBenchmark } from './stale-benchmark.js';

const DAY0 = Date.UTC(2025, 0, 14);
const PREV = DAY0 - 24 * HOUR;
const r = rule({ kind: 'stale_benchmark' });
/** A reading observed at DAY0 + h hours about `day`. */
const seen = (h: number, day = DAY0, isComplete = false): Reading => benchmark({ day, isComplete }, DAY0 + h * HOUR);
const at = (h: number) => DAY0 + h * HOUR;

describe('stale_benchmark', () => {
  it.each([
    { name: 'complete day 30h old', fields: { isComplete: true }, now: at(30), want: 'ok', reason: null },
    { name: 'isStale', fields: { isStale: true }, now: at(30), want: 'breach', reason: 'stale' },
    { name: 'isStale as a string', fields: { isStale: 'true' }, now: at(30), want: 'breach', reason: 'stale' },
    { name: 'exactly max_age (36h) old: not a breach (>)', fields: { isComplete: true }, now: at(36), want: 'ok', reason: null },
    { name: 'one second over max_age', fields: { isComplete: true }, now: at(36) + 1000, want: 'breach', reason: 'too_old' },
    { name: 'day as a numeric string', fields: { isComplete: true, day: String(DAY0) }, now: at(37), want: 'breach', reason: 'too_old' },
  ])('$name', ({ fields, now, want, reason }) => {
    const v = judge(staleBenchmark, r, benchmark({ day: DAY0, ...fields }, now), { now });
    expect(v.status).toBe(want);
    expect(v.status === 'breach' || v.status === 'ok' ? v.context?.reason : undefined).toBe(reason);
  });

  it.each([
    {
      name: 'incomplete since 26h (seen after the previous day), now 32h: 6h exactly, ok',
      history: [seen(25, PREV, true), seen(26), seen(29)],
      now: 32,
      want: 'ok',
      incomplete: 6 * 3600,
    },
    {
      name: 'incomplete since 26h, now 32h + 1s: breach',
      history: [seen(25, PREV, true), seen(26), seen(29)],
      now: 32 + 1 / 3600,
      want: 'breach',
      incomplete: 6 * 3600 + 1,
    },
    {
      name: 'seen incomplete while the day ran: counted from its end (24h), now 29h: ok',
      history: [seen(9, PREV, true), seen(10), seen(20)],
      now: 29,
      want: 'ok',
      incomplete: 5 * 3600,
    },
    {
      name: 'seen incomplete while the day ran, now 31h: breach',
      history: [seen(9, PREV, true), seen(10), seen(20)],
      now: 31,
      want: 'breach',
      incomplete: 7 * 3600,
    },
    { name: 'no history: assume since the day ended, now 30h + 1s: breach', history: [], now: 30 + 1 / 3600, want: 'breach', incomplete: 6 * 3600 + 1 },
    { name: 'no history, now 29h: ok', history: [], now: 29, want: 'ok', incomplete: 5 * 3600 },
    {
      name: 'the run reaches the start of history: since the day ended',
      history: [seen(27), seen(28)],
      now: 30.5,
      want: 'breach',
      incomplete: 6.5 * 3600,
    },
    {
      name: 'a complete reading in between restarts the run',
      history: [seen(25, PREV, true), seen(25.5), seen(26, DAY0, true), seen(27)],
      now: 32,
      want: 'ok',
      incomplete: 5 * 3600,
    },
  ])('incomplete: $name', ({ history, now, want, incomplete }) => {
    const nowMs = at(now);
    const current = benchmark({ day: DAY0, isComplete: false }, nowMs);
    for (const h of [history, [...history, current]]) {
      const v = judge(staleBenchmark, r, current, { now: nowMs, history: historyOf(h) });
      expect(v.status).toBe(want);
      if (v.status !== 'breach' && v.status !== 'ok') throw new Error('unreachable');
      expect(v.context?.incomplete_for).toBeCloseTo(incomplete, 6);
      expect(v.context?.reason).toBe(want === 'breach' ? 'incomplete' : null);
    }
  });

  it('reports age, max_age and day in the context', () => {
    const v = judge(staleBenchmark, r, benchmark({ day: DAY0, isComplete: true }, at(40)), { now: at(40) });
    expect(v).toEqual({
      status: 'breach',
      value: 40 * 3600,
      threshold: 36 * 3600,
      context: { reason: 'too_old', age: 40 * 3600, incomplete_for: null, day: DAY0, max_age: 36 * 3600 },
    });
  });

  it.each([
    { name: 'day missing', fields: { day: null }, reason: 'day missing' },
    { name: 'day not a number', fields: { day: 'soon' }, reason: 'day not a number: soon' },
    { name: 'day in the future', fields: { day: at(49) }, reason: `day ${new Date(at(49)).toISOString()} is in the future` },
  ])('data error: $name', ({ fields, reason }) => {
    expect(judge(staleBenchmark, r, benchmark(fields, at(20)), { now: at(20) })).toEqual({ status: 'data_error', reason });
  });

  it('needs isStale and isComplete; a market reading waits, naming what it got', () => {
    expect(staleBenchmark.needs?.(r as never)).toEqual(['isStale', 'isComplete']);
    expect(judge(staleBenchmark, r, market())).toEqual({ status: 'wait', reason: 'not a benchmark reading (got market)' });
  });

  it('a day exactly one day ahead of now is judged, not a data error', () => {
    expect(judge(staleBenchmark, r, benchmark({ day: at(44), isComplete: true }, at(20)), { now: at(20) }).status).toBe('ok');
  });

  it('reports max_age as the threshold of a stale breach and of an ok', () => {
    for (const fields of [{ isStale: true }, { isComplete: true }]) {
      const v = judge(staleBenchmark, r, benchmark({ day: DAY0, ...fields }, at(30)), { now: at(30) });
      expect(v.status === 'breach' || v.status === 'ok' ? v.threshold : undefined).toBe(36 * 3600);
    }
  });

  it('incompleteSince: readings at or after the current one are ignored; an incomplete reading of another day ends the run', () => {
    const current = seen(30);
    // A complete reading at the very time of the current one, and a newer one: neither ends the run.
    expect(incompleteSince(current, DAY0, [seen(25, PREV, true), seen(26), benchmark({ day: DAY0, isComplete: true }, at(30)), seen(31, DAY0, true)])).toBe(at(26));
    // The previous day still incomplete is not the same run.
    expect(incompleteSince(current, DAY0, [seen(25, PREV, false), seen(26)])).toBe(at(26));
  });

  it('the reading that ends the run is looked up as far back as two days before the day', () => {
    // A reading of the previous day seen before this day began still ends the run: incomplete since 27h, not since 24h.
    const current = seen(30);
    const v = judge(staleBenchmark, r, current, { now: at(30), history: historyOf([seen(-1, PREV, true), seen(27), seen(28)]) });
    expect(v.status === 'ok' && v.context?.incomplete_for).toBe(3 * 3600);
  });

  it('explaining a verdict it just gave queries the history once: the day evaluate judged is what explain shows', () => {
    const h = historyOf([seen(25, PREV, true), seen(26), seen(29)]);
    let ranges = 0;
    const counted: HistoryView = { at: h.at, range: (...a) => (ranges++, h.range(...a)) };
    const input = { rule: r, reading: seen(33), now: at(33), history: counted, active: true };
    const v = staleBenchmark.evaluate(input as never);
    expect(ranges).toBe(1);
    const context = { age: 33 * 3600, incomplete_for: 7 * 3600, day: DAY0, max_age: 36 * 3600, reason: 'incomplete' };
    expect(explained(staleBenchmark, input as never, v)).toEqual({ status: 'breach', value: 7 * 3600, threshold: 6 * 3600, context });
    expect(ranges).toBe(1);
    // Any other verdict (here an equal copy) is judged afresh, and explained alike.
    const copy = { ...v, context: undefined };
    expect(explained(staleBenchmark, input as never, copy)).toEqual({ status: 'breach', value: 7 * 3600, threshold: 6 * 3600, context });
    expect(ranges).toBe(2);
    // A verdict given since for another reading does not change what an earlier one is explained with.
    const w = staleBenchmark.evaluate({ ...input, reading: benchmark({ day: DAY0, isComplete: true }, at(40)), now: at(40) } as never);
    expect(w.status).toBe('breach');
    expect(staleBenchmark.explain!(input as never, { ...v, context: undefined } as never)).toEqual(context);
  });
});
