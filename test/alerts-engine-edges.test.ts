/**
 * The alert engine's bookkeeping around the lifecycle: which poll kinds count for which rules even when empty,
 * what it logs (unknown kinds, adoption, rules gone), the built-in alerts' deadlines, and its own timing figure.
 * A real SQLite file, rules through the real schema, the engine as the daemon drives it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { POLL_READING_KINDS } from '../src/alerts/engine.js';
import { fingerprint } from '../src/alerts/lifecycle.js';
import { createLogger } from '../src/log.js';
import type { Reading, ReadingKind } from '../src/model.js';
import { drive, engineFor, eventList, HOUR, market, MIN, outcome, rule, T0, tempDirs, tempStore } from './alerts-helpers.js';

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

type LogLine = { level: string; msg: string } & Record<string, unknown>;
const recordingLog = () => {
  const lines: LogLine[] = [];
  return { lines, log: createLogger({ level: 'debug', write: (l) => lines.push(JSON.parse(l) as LogLine) }) };
};

/** A reading of any kind with one numeric field `x`, fed by `poll`. */
function readingOf(kind: ReadingKind, entity: string, at: number, x: number, poll: string): Reading {
  return { kind, entity, at, labels: { poll }, fields: { x } };
}

describe('an empty successful poll counts for the rules of the readings its kind produces', () => {
  it('the poll kinds and their reading kinds', () => {
    expect(POLL_READING_KINDS).toEqual({
      metrics: 'market',
      positions: 'position',
      assets: 'asset',
      holdings: 'holding',
      performance: 'performance',
      benchmarks: 'benchmark',
    });
  });

  it.each(Object.entries(POLL_READING_KINDS))('a %s poll that returns nothing resolves an alert of a rule on %s readings (absent_for 1)', (pollKind, readingKind) => {
    const store = tempStore(dirs);
    const engine = engineFor(store, [rule({ name: 'x-high', kind: 'threshold', reading: readingKind, field: 'x', op: '>', value: 1, absent_for: 1 })]);
    const poll = `p-${pollKind}`;
    expect(eventList(drive(store, engine, outcome(poll, pollKind, [readingOf(readingKind, 'e1', T0, 5, poll)], T0)))).toEqual(['firing x-high/e1']);
    const empty = drive(store, engine, outcome(poll, pollKind, [], T0 + MIN));
    expect(eventList(empty)).toEqual(['resolved x-high/e1']);
    store.close();
  });

  it('a poll of an unknown kind that returns nothing judges no rule', () => {
    const store = tempStore(dirs);
    const engine = engineFor(store, [rule({ name: 'x-high', kind: 'threshold', reading: 'market', field: 'x', op: '>', value: 1, absent_for: 1 })]);
    drive(store, engine, outcome('markets', 'metrics', [readingOf('market', 'e1', T0, 5, 'markets')], T0));
    expect(eventList(drive(store, engine, outcome('markets', 'custom', [], T0 + MIN)))).toEqual([]);
    expect(engine.repo.get(fingerprint('x-high', 'e1'))!.state).toBe('firing');
    store.close();
  });
});

describe('what the engine logs', () => {
  it('a rule of an unknown kind is skipped with a warning naming it; the others still judge', () => {
    const store = tempStore(dirs);
    const { lines, log } = recordingLog();
    const util = rule({ name: 'util', kind: 'utilization_above', threshold: 0.9 });
    const engine = engineFor(store, [{ ...util, name: 'mystery', kind: 'no_such_kind' }, util], { log });
    expect(lines.filter((l) => l.msg === 'alert_rule_kind_unknown').map(({ level, rule: r, kind }) => ({ level, rule: r, kind }))).toEqual([
      { level: 'warn', rule: 'mystery', kind: 'no_such_kind' },
    ]);
    expect(eventList(drive(store, engine, outcome('markets', 'metrics', [market('m1', T0, { utilization: 0.95 })], T0)))).toEqual(['firing util/m1']);
    store.close();
  });

  it('adoption logs each alert taken with its rule, entity and since', () => {
    const store = tempStore(dirs);
    const { lines, log } = recordingLog();
    const engine = engineFor(store, [rule({ name: 'util', kind: 'utilization_above', threshold: 0.9, for: '10m' })], { log });
    store.transaction(() => engine.adopt([{ rule: 'util', entity: 'm1', labels: {}, startsAt: T0 }], T0 + HOUR));
    expect(lines.filter((l) => l.msg === 'alert_adopted').map(({ level, rule: r, entity, since }) => ({ level, rule: r, entity, since }))).toEqual([
      { level: 'info', rule: 'util', entity: 'm1', since: new Date(T0).toISOString() },
    ]);
    store.close();
  });

  it('the alerts of a removed rule resolve on the next tick, each logged as gone', () => {
    const store = tempStore(dirs);
    const { lines, log } = recordingLog();
    const engine = engineFor(store, [rule({ name: 'util', kind: 'utilization_above', threshold: 0.9 })], { log });
    drive(store, engine, outcome('markets', 'metrics', [market('m1', T0, { utilization: 0.95 })], T0));
    engine.reload({ rules: [] });
    expect(eventList(store.transaction(() => engine.tick(T0 + MIN)))).toEqual(['resolved util/m1']);
    expect(lines.filter((l) => l.msg === 'alert_rule_gone').map(({ level, rule: r, entity, state }) => ({ level, rule: r, entity, state }))).toEqual([
      { level: 'info', rule: 'util', entity: 'm1', state: 'firing' },
    ]);
    // Reconciled once: a second tick finds nothing more to retire.
    expect(eventList(store.transaction(() => engine.tick(T0 + 2 * MIN)))).toEqual([]);
    store.close();
  });
});

describe('the engine’s timing figure', () => {
  it('durationMs is the time the call took, never more, for a poll and a tick', () => {
    const store = tempStore(dirs);
    const engine = engineFor(store, [rule({ name: 'util', kind: 'utilization_above', threshold: 0.9 })]);
    const before = performance.now();
    const polled = drive(store, engine, outcome('markets', 'metrics', [market('m1', T0, { utilization: 0.95 })], T0));
    const ticked = store.transaction(() => engine.tick(T0 + MIN));
    const after = performance.now();
    for (const r of [polled, ticked]) {
      expect(r.durationMs).toBeGreaterThanOrEqual(0);
      expect(r.durationMs).toBeLessThanOrEqual(after - before);
    }
    store.close();
  });
});
