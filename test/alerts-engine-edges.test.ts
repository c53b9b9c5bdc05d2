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
import type { RuleKind } from '../src/rules/rule-kind.js';
import { defaults, drive, engineFor, eventList, HOUR, market, MIN, outcome, rule, T0, tempDirs, tempStore } from './alerts-helpers.js';

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

  it('a poll of an unknown kind still judges the rules of the readings it returns', () => {
    const store = tempStore(dirs);
    const engine = engineFor(store, [rule({ name: 'util', kind: 'utilization_above', threshold: 0.9 })]);
    expect(eventList(drive(store, engine, outcome('markets', 'custom', [market('m1', T0, { utilization: 0.95 })], T0)))).toEqual(['firing util/m1']);
    store.close();
  });

  it('an entity its last reading says this poll fed counts as absent even when the store no longer lists it', () => {
    const store = tempStore(dirs);
    const engine = engineFor(store, [rule({ name: 'x-high', kind: 'threshold', reading: 'market', field: 'x', op: '>', value: 1, absent_for: 1 })], {
      sources: { lastSeenBy: () => [] },
    });
    drive(store, engine, outcome('markets', 'metrics', [readingOf('market', 'e1', T0, 5, 'markets')], T0));
    expect(eventList(drive(store, engine, outcome('markets', 'metrics', [readingOf('market', 'e2', T0 + MIN, 0, 'markets')], T0 + MIN)))).toEqual([
      'resolved x-high/e1',
    ]);
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
    const r = drive(store, engine, outcome('markets', 'metrics', [market('m1', T0, { utilization: 0.95 }), market('m2', T0, { utilization: 0.5 })], T0));
    expect(eventList(r)).toEqual(['firing util/m1']);
    expect(r.dataErrors).toEqual([]); // the quiet pair is no data error
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
    expect(lines.filter((l) => l.msg === 'alert_rule_gone')).toHaveLength(1);
    store.close();
  });

  it('a kind whose evaluate throws is logged as an error naming the rule, the entity and the error', () => {
    const boom: RuleKind = { kind: 'boom', description: 'throws', reads: ['market'], context: [], params: {}, evaluate: () => { throw new Error('bug'); } };
    const store = tempStore(dirs);
    const { lines, log } = recordingLog();
    const engine = engineFor(store, [{ ...rule({ name: 'util', kind: 'utilization_above', threshold: 0.9 }), name: 'b', kind: 'boom' }], { kinds: [boom], log });
    drive(store, engine, outcome('markets', 'metrics', [market('m1', T0)], T0));
    expect(lines.filter((l) => l.msg === 'alert_evaluate_failed').map(({ level, rule: r, entity, err }) => ({ level, rule: r, entity, err }))).toEqual([
      { level: 'error', rule: 'b', entity: 'm1', err: { name: 'Error', message: 'bug' } },
    ]);
    store.close();
  });

  it('a kind without an evaluate function is skipped as unknown', () => {
    const half = { kind: 'half', description: 'no evaluate', reads: ['market'], context: [], params: {} } as unknown as RuleKind;
    const store = tempStore(dirs);
    const { lines, log } = recordingLog();
    engineFor(store, [{ ...rule({ name: 'util', kind: 'utilization_above', threshold: 0.9 }), name: 'h', kind: 'half' }], { kinds: [half], log });
    expect(lines.filter((l) => l.msg === 'alert_rule_kind_unknown').map((l) => l.rule)).toEqual(['h']);
    store.close();
  });

  it('an alert whose entity moved to another replica is logged as moved', () => {
    const store = tempStore(dirs);
    const { lines, log } = recordingLog();
    let mine = new Set(['m1']);
    const engine = engineFor(store, [rule({ name: 'util', kind: 'utilization_above', threshold: 0.9 })], { log, owns: (a) => mine.has(a.entity) });
    drive(store, engine, outcome('markets', 'metrics', [market('m1', T0, { utilization: 0.95 })], T0));
    mine = new Set();
    engine.reload({});
    store.transaction(() => engine.tick(T0 + MIN));
    expect(lines.filter((l) => l.msg === 'alert_moved').map(({ level, rule: r, entity, state, hint }) => ({ level, rule: r, entity, state, hint }))).toEqual([
      { level: 'info', rule: 'util', entity: 'm1', state: 'firing', hint: 'another replica owns this entity now' },
    ]);
    store.close();
  });
});

describe('reconcile', () => {
  it('on start: the alerts of a rule removed while lookout was down resolve on the first tick', () => {
    const store = tempStore(dirs);
    const before = engineFor(store, [rule({ name: 'util', kind: 'utilization_above', threshold: 0.9 })]);
    drive(store, before, outcome('markets', 'metrics', [market('m1', T0, { utilization: 0.95 })], T0));
    const after = engineFor(store, []);
    expect(eventList(store.transaction(() => after.tick(T0 + MIN)))).toEqual(['resolved util/m1']);
    store.close();
  });

  it('keeps the watchdog of an enabled watchdog across a reload: not retired, not fired again', () => {
    const store = tempStore(dirs);
    const engine = engineFor(store, [], { watchdog: { enabled: true, severity: 'info' } });
    expect(eventList(store.transaction(() => engine.tick(T0)))).toEqual(['firing watchdog/lookout']);
    engine.reload({});
    expect(eventList(store.transaction(() => engine.tick(T0 + MIN)))).toEqual([]);
    store.close();
  });

  it('a firing watchdog is left as it is by later ticks; disabled and enabled again it fires again', () => {
    const store = tempStore(dirs);
    const engine = engineFor(store, [], { watchdog: { enabled: true, severity: 'info' } });
    store.transaction(() => engine.tick(T0));
    const first = engine.repo.get(fingerprint('watchdog', 'lookout'));
    store.transaction(() => engine.tick(T0 + MIN));
    expect(engine.repo.get(fingerprint('watchdog', 'lookout'))).toEqual(first);
    engine.reload({ watchdog: { enabled: false, severity: 'info' } });
    expect(eventList(store.transaction(() => engine.tick(T0 + 2 * MIN)))).toEqual(['resolved watchdog/lookout']);
    engine.reload({ watchdog: { enabled: true, severity: 'info' } });
    expect(eventList(store.transaction(() => engine.tick(T0 + 3 * MIN)))).toEqual(['firing watchdog/lookout']);
    store.close();
  });

  it('a watchdog disabled and enabled again and again never flaps: retiring it forgets its changes', () => {
    // The fewest changes that flap (more than flap_threshold, the config's least: 2) within the window, several times over.
    const store = tempStore(dirs);
    const on = { enabled: true, severity: 'info' as const };
    const engine = engineFor(store, [], { watchdog: on, alerting: { ...defaults.alerting, flap_threshold: 2, flap_window: HOUR } });
    const events: string[] = [];
    for (let i = 0; i < 8; i++) {
      engine.reload({ watchdog: { ...on, enabled: i % 2 === 0 } });
      events.push(...eventList(store.transaction(() => engine.tick(T0 + i * MIN))));
      expect(engine.repo.get(fingerprint('watchdog', 'lookout'))).toMatchObject({ flapping: false, changes: i % 2 === 0 ? [T0 + i * MIN] : [] });
    }
    expect(events).toEqual(Array.from({ length: 4 }, () => ['firing watchdog/lookout', 'resolved watchdog/lookout']).flat());
    store.close();
  });

  it('a watchdog whose severity changes on reload fires again with the new severity', () => {
    const store = tempStore(dirs);
    const engine = engineFor(store, [], { watchdog: { enabled: true, severity: 'info' } });
    store.transaction(() => engine.tick(T0));
    engine.reload({ watchdog: { enabled: true, severity: 'critical' } });
    store.transaction(() => engine.tick(T0 + MIN));
    expect(engine.repo.get(fingerprint('watchdog', 'lookout'))).toMatchObject({ state: 'firing', severity: 'critical' });
    store.close();
  });
});

describe('source_down flapping', () => {
  it('a poll that fails and recovers too often flaps; a tick after flap_window settles it, and nextDeadline says when', () => {
    const store = tempStore(dirs);
    const engine = engineFor(store, [], { alerting: { flap_threshold: 3, flap_window: HOUR, max_reading_age: 6 * HOUR }, sourceDown: { after: 1, severity: 'warning' } });
    const steps = [false, true, false, true].map((ok, i) => drive(store, engine, outcome('markets', 'metrics', [], T0 + i * MIN, ok)));
    const flapped = eventList(steps);
    expect(flapped).toContain('flapping source_down/markets');
    const a = engine.repo.get(fingerprint('source_down', 'markets'))!;
    expect(a.flapping).toBe(true);
    const last = a.changes[a.changes.length - 1]!;
    expect(engine.nextDeadline()).toBe(last + HOUR);
    expect(eventList(store.transaction(() => engine.tick(last + HOUR)))).toContain('settled source_down/markets');
    store.close();
  });
});

describe('what is kept of an alert', () => {
  it('a resolved alert stays as it was when it resolved while later readings are quiet', () => {
    const store = tempStore(dirs);
    const engine = engineFor(store, [rule({ name: 'util', kind: 'utilization_above', threshold: 0.9 })]);
    drive(store, engine, outcome('markets', 'metrics', [market('m1', T0, { utilization: 0.95 })], T0));
    drive(store, engine, outcome('markets', 'metrics', [market('m1', T0 + MIN, { utilization: 0.5 })], T0 + MIN));
    const resolved = engine.repo.get(fingerprint('util', 'm1'))!;
    expect(resolved).toMatchObject({ state: 'resolved', resolved_at: T0 + MIN });
    const quiet = drive(store, engine, outcome('markets', 'metrics', [market('m1', T0 + 2 * MIN, { utilization: 0.4 })], T0 + 2 * MIN));
    expect(quiet.events).toEqual([]);
    expect(quiet.dataErrors).toEqual([]);
    expect(engine.repo.get(fingerprint('util', 'm1'))).toEqual(resolved);
    store.close();
  });

  it('adoption takes over an alert held resolved, with the labels Alertmanager had', () => {
    const store = tempStore(dirs);
    const engine = engineFor(store, [rule({ name: 'util', kind: 'utilization_above', threshold: 0.9, for: '10m' })]);
    drive(store, engine, outcome('markets', 'metrics', [market('m1', T0, { utilization: 0.95 })], T0));
    drive(store, engine, outcome('markets', 'metrics', [market('m1', T0 + MIN, { utilization: 0.5 })], T0 + MIN));
    const labels = { rule: 'util', alertname: 'util', market_id: 'm1', team: 'risk' };
    const taken = store.transaction(() => engine.adopt([{ rule: 'util', entity: 'm1', labels, startsAt: T0 + HOUR }], T0 + 2 * HOUR));
    expect(taken.map((a) => [a.entity, a.state])).toEqual([['m1', 'pending']]);
    expect(engine.repo.get(fingerprint('util', 'm1'))!.labels).toEqual(labels);
    store.close();
  });
});

describe('reading age', () => {
  it('a market reading exactly max_reading_age old is still judged; other reading kinds have no default age limit', () => {
    const store = tempStore(dirs);
    const engine = engineFor(store, [
      rule({ name: 'util', kind: 'utilization_above', threshold: 0.9 }),
      rule({ name: 'pos', kind: 'threshold', reading: 'position', field: 'x', op: '>', value: 1 }),
    ]);
    const now = T0 + 6 * HOUR; // the default max_reading_age
    const r = drive(store, engine, outcome('markets', 'metrics', [market('m1', T0, { utilization: 0.95 })], now));
    expect(eventList(r)).toEqual(['firing util/m1']);
    const old = drive(store, engine, outcome('positions', 'positions', [readingOf('position', 'p1', T0, 5, 'positions')], T0 + 48 * HOUR));
    expect(eventList(old)).toEqual(['firing pos/p1']);
    store.close();
  });
});

describe('history', () => {
  it('each entity is judged by its own past reading when several ask in one poll', () => {
    const store = tempStore(dirs);
    const engine = engineFor(store, [rule({ name: 'jump', kind: 'apy_jump', window: '1h', min_change: 0.01 })]);
    drive(store, engine, outcome('markets', 'metrics', [market('m1', T0, { borrow_apy: 0.05 }), market('m2', T0, { borrow_apy: 0.1 })], T0));
    const r = drive(store, engine, outcome('markets', 'metrics', [market('m1', T0 + HOUR, { borrow_apy: 0.1 }), market('m2', T0 + HOUR, { borrow_apy: 0.1 })], T0 + HOUR));
    expect(eventList(r)).toEqual(['firing jump/m1']);
    store.close();
  });
});

describe('an engine without a full store', () => {
  it('names what it lacks when a rule looks back, or an absent entity needs the poll that saw it', () => {
    const store = tempStore(dirs);
    const { lines, log } = recordingLog();
    const jump = engineFor(store, [rule({ name: 'jump', kind: 'apy_jump', window: '1h', min_change: 0.01 })], { store: { db: store.db }, log });
    expect(store.transaction(() => jump.applyPoll(outcome('markets', 'metrics', [market('m1', T0)], T0), T0)).dataErrors.map((e) => e.reason)).toEqual(['evaluate_failed']);
    expect(lines.map((l) => (l.err as { message?: string } | undefined)?.message)).toEqual(['AlertEngine: no history: pass a full store or sources.history']);
    const util = engineFor(store, [rule({ name: 'util', kind: 'utilization_above', threshold: 0.9 })], { store: { db: store.db } });
    store.transaction(() => util.applyPoll(outcome('markets', 'metrics', [market('m1', T0, { utilization: 0.95 })], T0), T0));
    expect(() => store.transaction(() => util.applyPoll(outcome('markets', 'metrics', [market('m2', T0 + MIN)], T0 + MIN), T0 + MIN))).toThrow(
      'AlertEngine: no lastSeenBy: pass a full store or sources.lastSeenBy',
    );
    store.close();
  });

  it('names what it lacks when a failed poll needs the failure count', () => {
    const store = tempStore(dirs);
    const engine = engineFor(store, [], { store: { db: store.db } });
    expect(() => store.transaction(() => engine.applyPoll(outcome('markets', 'metrics', [], T0, false), T0))).toThrow(
      'AlertEngine: no consecutiveFailures: pass a full store or sources.consecutiveFailures',
    );
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
