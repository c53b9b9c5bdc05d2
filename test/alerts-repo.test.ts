/**
 * The alert repository's reads and writes that the engine does not use but the HTTP API, the CLI and housekeeping
 * do (active, firing, list by rule, save, events of one alert, pruning), and the periods an alert page draws.
 * A real SQLite file.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { fingerprint, newAlert } from '../src/alerts/lifecycle.js';
import { periodsOf } from '../src/alerts/periods.js';
import { createAlertRepo } from '../src/alerts/repo.js';
import type { Alert, AlertEvent } from '../src/model.js';
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

  it('save keeps the tracked clearing time of the alert it overwrites', () => {
    const store = tempStore(dirs);
    const repo = createAlertRepo(store.db);
    const a = alertOf('a', 'f', 'firing');
    store.transaction(() => repo.saveTracked({ alert: a, cleared_at: T0 + 5 }));
    store.transaction(() => repo.save({ ...a, value: 2 }));
    expect(repo.getTracked(a.fingerprint)).toMatchObject({ cleared_at: T0 + 5, alert: { value: 2 } });
    const fresh = alertOf('a', 'new', 'firing');
    store.transaction(() => repo.save(fresh)); // nothing tracked before: no clearing time
    expect(repo.getTracked(fresh.fingerprint)).toMatchObject({ cleared_at: null, alert: { entity: 'new' } });
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

describe('periodsOf', () => {
  const ev = (type: AlertEvent['type'], at: number, state: Alert['state'] = 'firing') => ({ type, at, alert: { ...alertOf('a', 'x', state) } });

  it('firing then flapping is one firing period; a settle that stays firing does not end it', () => {
    expect(periodsOf([ev('pending', 1, 'pending'), ev('firing', 2), ev('flapping', 3), ev('settled', 4, 'firing')])).toEqual([
      { kind: 'pending', from: 1, to: 2 },
      { kind: 'firing', from: 2, to: null },
    ]);
  });
});
