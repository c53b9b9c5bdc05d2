/**
 * Schema 14: an alert's moving row found by an integer id the engine keeps with its copy of the row (issue 14, B4).
 * A database as lookout 13 left it converts with every alert and every answer the same, each moving row with an id
 * of its own; new rows get ids no other row has. (The engine's writes by id, and what a restart reads of them:
 * test/alerts-inplace.test.ts.) A real SQLite file.
 */
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { fingerprint, type TrackedAlert } from '../src/alerts/lifecycle.js';
import { createAlertRepo } from '../src/alerts/repo.js';
import { migrations, openStore } from '../src/store/index.js';
import { MIN, T0, tempDirs } from './alerts-helpers.js';
import { allAlertRows as allRows } from './store-helpers.js';

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

it('converts a database of schema 13: every alert, every column, the same; each moving row an id of its own', () => {
  const path = join(dirs.make(), 'v13.db');
  const old = openStore(path, { migrations: migrations.filter((m) => m.version <= 13) });
  const labels = (m: string) => JSON.stringify({ rule: 'util', alertname: 'util', severity: 'critical', market_id: m });
  old.transaction(() => {
    const standing = old.db.prepare(
      `INSERT INTO alert_standing (fingerprint, rule, kind, entity, state, flapping, severity, labels, pending_since, firing_since, resolved_at, last_notified_at, changes)
       VALUES (?, 'util', 'utilization_above', ?, ?, ?, 'critical', ?, ?, ?, NULL, ?, ?)`,
    );
    const moving = old.db.prepare(
      `INSERT INTO alert_moving (fingerprint, value, threshold, previous_value, peak, data_at, block, last_eval_at, absent_polls, annotations, cleared_at)
       VALUES (?, ?, 0.9, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    standing.run(fingerprint('util', 'm1'), 'm1', 'firing', 0, labels('m1'), T0, T0 + 2 * MIN, T0 + 2 * MIN, `[${T0 + 2 * MIN}]`);
    moving.run(fingerprint('util', 'm1'), 0.97, 0.96, 0.98, T0 + 3 * MIN, 103, T0 + 3 * MIN, 0, '{"summary":"utilization 97%"}', T0 + MIN);
    standing.run(fingerprint('util', 'm2'), 'm2', 'pending', 1, labels('m2'), T0 + MIN, null, null, '[]');
    moving.run(fingerprint('util', 'm2'), null, null, null, null, null, T0 + MIN, 2, '{}', null);
  });
  const before = allRows(old.db);
  expect(before).toHaveLength(2);
  old.close();

  const store = openStore(path);
  try {
    expect(store.version).toBe(14);
    expect(allRows(store.db)).toEqual(before);
    const repo = createAlertRepo(store.db);
    const ids = ['m1', 'm2'].map((m) => repo.getTracked(fingerprint('util', m))!.moving_id);
    expect(new Set(ids).size).toBe(2);
    for (const id of ids) expect(Number.isInteger(id)).toBe(true);
    expect(repo.trackedForRules(['util']).map((t) => t.moving_id).sort()).toEqual([...ids].sort());
    // A new alert gets an id no other row has; its reading written by that id lands in its own row.
    const fresh: TrackedAlert = { alert: { ...repo.get(fingerprint('util', 'm2'))!, fingerprint: fingerprint('util', 'm3'), entity: 'm3' }, cleared_at: null };
    store.transaction(() => repo.saveTracked(fresh));
    expect(ids).not.toContain(fresh.moving_id);
    store.transaction(() => repo.saveMoving({ ...fresh, alert: { ...fresh.alert, value: 0.99, last_eval_at: T0 + 9 * MIN } }, false));
    expect(repo.get(fingerprint('util', 'm3'))).toMatchObject({ value: 0.99, last_eval_at: T0 + 9 * MIN });
    expect(allRows(store.db).slice(0, 2)).toEqual(before);
  } finally {
    store.close();
  }
});
