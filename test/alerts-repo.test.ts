/**
 * The alert repository's reads and writes that the engine does not use but the HTTP API, the CLI and housekeeping
 * do (active, firing, list by rule, save, events of one alert, pruning), and the periods an alert page draws.
 * A real SQLite file.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { fingerprint, newAlert, type TrackedAlert } from '../src/alerts/lifecycle.js';
import { periodsOf } from '../src/alerts/periods.js';
import { createAlertRepo } from '../src/alerts/repo.js';
import type { Alert, AlertEvent } from '../src/model.js';
import { appliedMigrations } from '../src/store/index.js';
import { T0, tempDirs, tempStore } from './alerts-helpers.js';

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

const alertOf = (rule: string, entity: string, state: Alert['state']): Alert => ({
  ...newAlert({ rule, kind: 'utilization_above', entity, severity: 'warning' }, T0),
  state,
});

describe('the alert repository', () => {
  it('active is pending and firing, firing only firing, list by rule only that rule', () => {
    const store = tempStore(dirs);
    const repo = createAlertRepo(store.db);
    store.transaction(() => {
      repo.saveTracked({ alert: alertOf('a', 'p', 'pending'), cleared_at: null });
      repo.saveTracked({ alert: alertOf('a', 'f', 'firing'), cleared_at: null });
      repo.saveTracked({ alert: alertOf('b', 'r', 'resolved'), cleared_at: null });
    });
    const names = (list: Alert[]) => list.map((a) => `${a.rule}/${a.entity}`).sort();
    expect(names(repo.active())).toEqual(['a/f', 'a/p']);
    expect(names(repo.firing())).toEqual(['a/f']);
    expect(names(repo.list({ rule: 'b' }))).toEqual(['b/r']);
    expect(names(repo.list())).toEqual(['a/f', 'a/p', 'b/r']);
    // What lookout_alerts counts: rule, severity and state of the pending and firing ones, nothing else of the row.
    const states = repo.activeStates().sort((x, y) => x.state.localeCompare(y.state));
    expect(states).toEqual([
      { rule: 'a', severity: 'warning', state: 'firing' },
      { rule: 'a', severity: 'warning', state: 'pending' },
    ]);
    store.close();
  });

  it('events of one alert are its own; pruning deletes the older ones and says how many', () => {
    const store = tempStore(dirs);
    const repo = createAlertRepo(store.db);
    const a = alertOf('a', 'x', 'firing');
    const b = alertOf('b', 'y', 'firing');
    const ev = (alert: Alert, at: number): AlertEvent => ({ type: 'firing', at, alert });
    store.transaction(() => repo.recordEvents([ev(a, T0), ev(b, T0 + 1), ev(a, T0 + 2)]));
    expect(repo.events(fingerprint('a', 'x')).map((e) => e.at)).toEqual([T0, T0 + 2]);
    expect(repo.events().map((e) => e.at).sort()).toEqual([T0, T0 + 1, T0 + 2]);
    expect(store.transaction(() => repo.pruneEvents(T0 + 2))).toBe(2);
    expect(repo.events().map((e) => e.at)).toEqual([T0 + 2]);
    store.close();
  });
});

describe('the alert tables', () => {
  it('are schema version 2, recorded as alerts_and_alert_events: the name every existing database holds', () => {
    // A database records each migration's name; a code whose name differs logs a mismatch on every open of it.
    const store = tempStore(dirs);
    expect(appliedMigrations(store.db).find((m) => m.version === 2)).toMatchObject({ version: 2, name: 'alerts_and_alert_events' });
    store.close();
  });
});

describe('periodsOf', () => {
  const ev = (type: AlertEvent['type'], at: number, state: Alert['state'] = 'firing') => ({ type, at, alert: { ...alertOf('a', 'x', state) } });

  it('firing then flapping is one firing period; a settle that stays firing does not end it', () => {
    expect(periodsOf([ev('pending', 1, 'pending'), ev('firing', 2), ev('flapping', 3), ev('settled', 4, 'firing')])).toEqual([
      { kind: 'pending', from: 1, to: 2 },
      { kind: 'firing', from: 2, to: null },
    ]);
  });
});

describe("the alert repository's write of a row it was given the stored version of", () => {
  const stored: TrackedAlert = {
    alert: {
      ...newAlert({ rule: 'util', kind: 'utilization_above', entity: 'm1', severity: 'warning' }, T0),
      state: 'firing',
      labels: { chain: 'base', rule: 'util' },
      annotations: { summary: 'util 90%' },
      value: 0.9,
      threshold: 0.8,
      previous_value: 0.85,
      peak: 0.95,
      data_at: T0 - 5,
      block: 100,
      pending_since: T0 - 600_000,
      firing_since: T0 - 60_000,
      resolved_at: null,
      last_eval_at: T0,
      absent_polls: 0,
      changes: [T0 - 120_000, T0 - 60_000],
    },
    cleared_at: null,
  };
  /** One change each: of the row's standing (written whole) or of the reading's columns (written in place). */
  const changes: Record<string, (t: TrackedAlert) => TrackedAlert> = {
    kind: (t) => ({ ...t, alert: { ...t.alert, kind: 'threshold' } }),
    severity: (t) => ({ ...t, alert: { ...t.alert, severity: 'critical' } }),
    state: (t) => ({ ...t, alert: { ...t.alert, state: 'resolved', resolved_at: T0 + 1 } }),
    flapping: (t) => ({ ...t, alert: { ...t.alert, flapping: true } }),
    pendingSince: (t) => ({ ...t, alert: { ...t.alert, pending_since: T0 - 1 } }),
    firingSince: (t) => ({ ...t, alert: { ...t.alert, firing_since: T0 - 2 } }),
    resolvedAt: (t) => ({ ...t, alert: { ...t.alert, resolved_at: T0 - 3 } }),
    changesList: (t) => ({ ...t, alert: { ...t.alert, changes: [...t.alert.changes, T0] } }),
    changesValue: (t) => ({ ...t, alert: { ...t.alert, changes: [T0 - 120_000, T0 - 59_000] } }),
    labelValue: (t) => ({ ...t, alert: { ...t.alert, labels: { ...t.alert.labels, chain: 'mainnet' } } }),
    labelAdded: (t) => ({ ...t, alert: { ...t.alert, labels: { ...t.alert.labels, protocol: 'morpho' } } }),
    labelDropped: (t) => ({ ...t, alert: { ...t.alert, labels: { rule: 'util' } } }),
    annotation: (t) => ({ ...t, alert: { ...t.alert, annotations: { summary: 'util 91%' } } }),
    annotationAdded: (t) => ({ ...t, alert: { ...t.alert, annotations: { ...t.alert.annotations, description: 'd' } } }),
    annotationDropped: (t) => ({ ...t, alert: { ...t.alert, annotations: {} } }),
    value: (t) => ({ ...t, alert: { ...t.alert, value: 0.91 } }),
    threshold: (t) => ({ ...t, alert: { ...t.alert, threshold: 0.81 } }),
    previousValue: (t) => ({ ...t, alert: { ...t.alert, previous_value: 0.9 } }),
    peak: (t) => ({ ...t, alert: { ...t.alert, peak: 0.96 } }),
    dataAt: (t) => ({ ...t, alert: { ...t.alert, data_at: T0 } }),
    block: (t) => ({ ...t, alert: { ...t.alert, block: 101 } }),
    lastEvalAt: (t) => ({ ...t, alert: { ...t.alert, last_eval_at: T0 + 30_000 } }),
    absentPolls: (t) => ({ ...t, alert: { ...t.alert, absent_polls: 1 } }),
    clearedAt: (t) => ({ ...t, cleared_at: T0 + 7 }),
  };

  it('leaves exactly the new row in the table, whichever of its columns changed (each alone, and any mix)', () => {
    const store = tempStore(dirs);
    const repo = createAlertRepo(store.db);
    const check = (names: string[]) => {
      store.transaction(() => repo.saveTracked(stored));
      const next = names.reduce((t, n) => changes[n]!(t), stored);
      const writes = repo.writes();
      store.transaction(() => repo.saveTracked(next, stored));
      expect([names, repo.getTracked(stored.alert.fingerprint)]).toEqual([names, next]);
      // Written (once) when anything changed, not at all when nothing did.
      expect([names, repo.writes() - writes]).toEqual([names, names.length > 0 ? 1 : 0]);
    };
    check([]);
    for (const name of Object.keys(changes)) check([name]);
    fc.assert(
      fc.property(fc.subarray(Object.keys(changes), { minLength: 2 }), (names) => check(names)),
      { numRuns: 300, seed: 20261125 },
    );
    store.close();
  });

  it('stores a value that is not a finite number as NULL, whole or in place, and a second such save writes nothing', () => {
    const store = tempStore(dirs);
    const repo = createAlertRepo(store.db);
    const fp = stored.alert.fingerprint;
    const odd = (t: TrackedAlert, v: number): TrackedAlert => ({ ...t, alert: { ...t.alert, value: v, threshold: -v, previous_value: v, peak: v } });
    const nulls = { value: null, threshold: null, previous_value: null, peak: null };
    // Whole: a new row.
    store.transaction(() => repo.saveTracked(odd(stored, Infinity)));
    expect(repo.getTracked(fp)!.alert).toMatchObject(nulls);
    // In place: the same standing, only the reading's columns moved.
    store.transaction(() => repo.saveTracked(stored));
    store.transaction(() => repo.saveTracked(odd(stored, Infinity), stored));
    expect(repo.getTracked(fp)!.alert).toMatchObject(nulls);
    // NaN and Infinity both stand for the NULL stored: nothing moved.
    const writes = repo.writes();
    store.transaction(() => repo.saveTracked(odd(stored, NaN), odd(stored, Infinity)));
    expect(repo.writes()).toBe(writes);
    store.close();
  });
});
