/**
 * What a rule looking back sees through the engine: with the store's history (the look-back memo, which remembers
 * answers across rules and polls) and with a history given in `sources` (as the backtest gives one, cached per poll).
 * Each entity, and each question, must get its own answer: a remembered or cached one that covers too much shows as
 * a jump judged against the wrong reading, or a benchmark day judged late by another network's history.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../src/log.js';
import type { Reading } from '../src/model.js';
import { historyOf } from '../src/rules/rule-kind.js';
import { drive, engineFor, eventList, HOUR, market, MIN, outcome, rule, T0, tempDirs, tempStore } from './alerts-helpers.js';

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

const DAY = 24 * HOUR;

/** A benchmark reading of `day` (isComplete as given) for network `entity` (`base/usd`). */
function benchmark(entity: string, at: number, day: number, isComplete: boolean): Reading {
  const [network = 'base', code = 'usd'] = entity.split('/');
  return { kind: 'benchmark', entity, at, labels: { network, code }, fields: { network, code, day, isComplete, isStale: false, days: 7 } };
}

describe('look-back through the store’s history', () => {
  it('two rules looking back different windows at one market each get the reading their own window ends at', () => {
    const store = tempStore(dirs);
    const engine = engineFor(store, [
      rule({ name: 'jump-2h', kind: 'apy_jump', window: '2h', min_change: 0.02 }),
      rule({ name: 'jump-1h', kind: 'apy_jump', window: '1h', min_change: 0.02 }),
    ]);
    // 1% two hours ago, 5% an hour ago, 5% now: up 4 points over two hours, flat over the last one.
    store.transaction(() => store.readings.savePoll('markets', [market('m1', T0, { borrow_apy: 0.01 })], T0));
    store.transaction(() => store.readings.savePoll('markets', [market('m1', T0 + HOUR, { borrow_apy: 0.05 })], T0 + HOUR));
    const r = drive(store, engine, outcome('markets', 'metrics', [market('m1', T0 + 2 * HOUR, { borrow_apy: 0.05 })], T0 + 2 * HOUR));
    expect(eventList(r)).toEqual(['firing jump-2h/m1']);
    store.close();
  });
});

describe('look-back through a history given to the engine (the backtest’s)', () => {
  it('each market is judged against its own reading a window ago', () => {
    const store = tempStore(dirs);
    const history = historyOf([market('m1', T0, { borrow_apy: 0.05 }), market('m2', T0, { borrow_apy: 0.1 })]);
    const engine = engineFor(store, [rule({ name: 'jump', kind: 'apy_jump', window: '1h', min_change: 0.02 })], { sources: { history } });
    const r = drive(store, engine, outcome('markets', 'metrics', [market('m1', T0 + HOUR, { borrow_apy: 0.1 }), market('m2', T0 + HOUR, { borrow_apy: 0.1 })], T0 + HOUR));
    expect(eventList(r)).toEqual(['firing jump/m1']);
    store.close();
  });

  it('each network’s incomplete day is timed from its own history', () => {
    const store = tempStore(dirs);
    const day = T0 - DAY;
    const now = T0 + 8 * HOUR;
    // base/usd has been incomplete since an hour after the day ended (7 h: late); eth/usd was complete on the
    // previous day an hour ago, so its new day is incomplete for an hour only.
    const history = historyOf([
      benchmark('base/usd', T0 + HOUR, day, false),
      benchmark('base/usd', T0 + 4 * HOUR, day, false),
      benchmark('eth/usd', now - HOUR, day - DAY, true),
    ]);
    const engine = engineFor(store, [rule({ name: 'stale', kind: 'stale_benchmark', max_age: '2d', incomplete_for: '6h' })], { sources: { history } });
    const polled = [benchmark('base/usd', now, day, false), benchmark('eth/usd', now, day, false)];
    expect(eventList(drive(store, engine, outcome('benchmarks', 'benchmarks', polled, now)))).toEqual(['firing stale/base/usd']);
    // And the other way round: the first network asked is the one that is not late.
    const store2 = tempStore(dirs);
    const engine2 = engineFor(store2, [rule({ name: 'stale', kind: 'stale_benchmark', max_age: '2d', incomplete_for: '6h' })], { sources: { history } });
    expect(eventList(drive(store2, engine2, outcome('benchmarks', 'benchmarks', [...polled].reverse(), now)))).toEqual(['firing stale/base/usd']);
    store.close();
    store2.close();
  });
});

describe('an engine without readings', () => {
  it('names what it lacks when a rule asks for a range of history', () => {
    const store = tempStore(dirs);
    const lines: Array<{ err?: { message?: string } }> = [];
    const log = createLogger({ level: 'debug', write: (l) => lines.push(JSON.parse(l) as { err?: { message?: string } }) });
    const engine = engineFor(store, [rule({ name: 'stale', kind: 'stale_benchmark' })], { store: { db: store.db }, log });
    const now = T0 + 8 * HOUR + MIN;
    const r = store.transaction(() => engine.applyPoll(outcome('benchmarks', 'benchmarks', [benchmark('base/usd', now, T0 - DAY, false)], now), now));
    expect(r.dataErrors.map((e) => e.reason)).toEqual(['evaluate_failed']);
    expect(lines.map((l) => l.err?.message).filter(Boolean)).toEqual(['AlertEngine: no history: pass a full store or sources.history']);
    store.close();
  });
});
