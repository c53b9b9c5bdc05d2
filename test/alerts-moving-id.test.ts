/**
 * Schema 14: an alert's moving row found by an integer id the engine keeps with its copy of the row (issue 14, B4).
 * A database as lookout 13 left it converts with every alert and every answer the same; in an incident the engine
 * writes each judged alert's values to its own row by that id, and what a restart reads (SPEC §3, §5: `/api/alerts`
 * and `lookout alerts` read the table) is what the last poll wrote, for each alert its own values; a row deleted
 * behind the engine's copy fails the poll that would write it instead of writing nowhere. A real SQLite file.
 */
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { fingerprint, type TrackedAlert } from '../src/alerts/lifecycle.js';
import { createAlertRepo } from '../src/alerts/repo.js';
import { migrations, openStore } from '../src/store/index.js';
import { drive, engineFor, market, MIN, outcome, rule, T0, tempDirs } from './alerts-helpers.js';

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

const util = rule({
  name: 'util',
  kind: 'utilization_above',
  severity: 'critical',
  threshold: 0.9,
  for: '2m',
  annotations: { summary: 'utilization {{ utilization | pct }}' },
});

/** Poll `i` (a minute apart): each market at its utilization. */
const poll = (i: number, utilization: Record<string, number>) =>
  outcome('markets', 'metrics', Object.entries(utilization).map(([m, u]) => market(m, T0 + i * MIN, { utilization: u, block: 100 + i })), T0 + i * MIN);

/** Every column of every alert, as a plain query of the `alerts` view answers. */
const allRows = (db: { prepare(sql: string): { all(): unknown[] } }) => db.prepare(`SELECT * FROM alerts ORDER BY rule, entity`).all();

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

it('in an incident each alert’s values go to its own row by id, and a restart reads what the last poll wrote', () => {
  const path = join(dirs.make(), 'lookout.db');
  let store = openStore(path);
  const engine = engineFor(store, [util]);
  // The in-place writes, with the id each was found by.
  const ids: Array<number | undefined> = [];
  const saveMoving = engine.repo.saveMoving.bind(engine.repo);
  engine.repo.saveMoving = (t, annotations) => {
    ids.push(t.moving_id);
    saveMoving(t, annotations);
  };
  // Four markets in breach (their values move every poll, apart from each other), one fine.
  const values = (i: number) => ({ m1: 0.91 + i / 100, m2: 0.99 - i / 100, m3: 0.95, m4: 0.93 + (i % 2) / 100, m5: 0.5 });
  const last = 5;
  for (let i = 0; i <= last; i++) drive(store, engine, poll(i, values(i)));
  // Polls 1–5 judged the four alerts in place (poll 2 fires them: a transition, stepped): 4 × 4 writes, all by an id.
  expect(ids).toHaveLength(16);
  for (const id of ids) expect(Number.isInteger(id)).toBe(true);
  const answered = engine.alerts();
  const rows = allRows(store.db);
  store.close();

  store = openStore(path);
  try {
    const repo = createAlertRepo(store.db);
    expect(repo.list()).toEqual(answered);
    expect(allRows(store.db)).toEqual(rows);
    // Each alert holds its own market's values of the last poll and the one before: no row got another's.
    const v = values(last);
    const before = values(last - 1);
    for (const m of ['m1', 'm2', 'm3', 'm4'] as const) {
      expect(repo.get(fingerprint('util', m)), m).toMatchObject({
        state: 'firing',
        value: v[m],
        previous_value: before[m],
        data_at: T0 + last * MIN,
        block: 100 + last,
        last_eval_at: T0 + last * MIN,
        annotations: { summary: `utilization ${Math.round(v[m] * 100)}%` },
      });
    }
    expect(repo.get(fingerprint('util', 'm5'))).toBeUndefined();
    // A new engine after the restart goes on from the stored rows.
    const after = engineFor(store, [util]);
    drive(store, after, poll(last + 1, values(last + 1)));
    expect(repo.get(fingerprint('util', 'm2'))).toMatchObject({ value: values(last + 1).m2, previous_value: v.m2 });
  } finally {
    store.close();
  }
});

it('a moving row deleted behind the engine’s copy fails the poll that would write it; the next poll makes the alert whole again', () => {
  const store = openStore(join(dirs.make(), 'lookout.db'));
  try {
    const engine = engineFor(store, [util]);
    drive(store, engine, poll(0, { m1: 0.95 }));
    // Not through the repository (nothing of lookout does this): the copy cannot know.
    store.db.prepare(`DELETE FROM alert_moving WHERE fingerprint = ?`).run(fingerprint('util', 'm1'));
    // Still pending, short of its `for`: judged in place, its row looked for by id.
    expect(() => drive(store, engine, poll(1, { m1: 0.96 }))).toThrow(/no moving row/);
    // The failed poll rolled back and dropped the copy: the next one reads the table (no whole row: no alert) and
    // opens the alert again.
    drive(store, engine, poll(2, { m1: 0.97 }));
    expect(engine.repo.get(fingerprint('util', 'm1'))).toMatchObject({ state: 'pending', value: 0.97, pending_since: T0 + 2 * MIN });
    expect(allRows(store.db)).toHaveLength(1);
  } finally {
    store.close();
  }
});
