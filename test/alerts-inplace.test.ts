/**
 * An alert judged in breach again that keeps its standing (firing stays firing, pending stays pending short of its
 * `for`) is updated in the engine's kept copy in place, without the lifecycle's step (issue 14, B4). What it stores
 * must be what the step stores: here every poll's row of each alert is checked against `step` applied to the row as
 * the table held it before the poll, through pending, absent, firing, cleared within keep_firing_for and breaching
 * again, with values, blocks and annotations that move and ones that do not. A real SQLite file.
 */
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { describeAlert } from '../src/alerts/engine.js';
import { fingerprint, step, type LifecycleSettings } from '../src/alerts/lifecycle.js';
import { createAlertRepo } from '../src/alerts/repo.js';
import type { Reading } from '../src/model.js';
import { num } from '../src/rules/coerce.js';
import { ruleKinds } from '../src/rules/registry.js';
import { evaluateExplained } from '../src/rules/rule-kind.js';
import type { RuleBase } from '../src/rules/schema.js';
import { openStore } from '../src/store/index.js';
import { defaults, drive, engineFor, market, MIN, outcome, rule, T0, tempDirs, tempStore } from './alerts-helpers.js';
import { allAlertRows as allRows } from './store-helpers.js';

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

const util = rule({
  name: 'util',
  kind: 'utilization_above',
  severity: 'critical',
  threshold: 0.9,
  for: '3m',
  keep_firing_for: '2m',
  clear_below: 0.85,
  // clear_below is a name of the verdict's context only: the in-place path must explain its verdict as the step's does.
  annotations: { summary: 'utilization {{ utilization | pct }}, clears below {{ clear_below }}', runbook: 'https://runbooks/util' },
});
// Annotations that never move: the row's annotations are left as they are.
const still = rule({ name: 'still', kind: 'threshold', field: 'borrow_apy', op: '>', value: 0.2, annotations: { summary: 'borrow APY high' } });
const rules = [util, still];

const settingsOf = (r: RuleBase): LifecycleSettings => ({
  for: r.for ?? 0,
  keep_firing_for: r.keep_firing_for ?? 0,
  absent_for: r.absent_for ?? 3,
  flap_threshold: defaults.alerting.flap_threshold,
  flap_window: defaults.alerting.flap_window,
});

/** Poll `i` (a minute apart): market m1 at this utilization. */
const poll = (i: number, utilization: number) => outcome('markets', 'metrics', [market('m1', T0 + i * MIN, { utilization })], T0 + i * MIN);

it('stores what the step would: every poll, every alert, through each standing it keeps', () => {
  const store = tempStore(dirs);
  const engine = engineFor(store, rules);
  const kinds = new Map(ruleKinds.map((k) => [k.kind, k]));
  // Minute by minute: m1's utilization and borrow APY (undefined: m1 is not in that poll), m1's block (null: none).
  const polls: Array<[number | undefined, number, number | null]> = [
    [0.95, 0.3, 100], // pending (util), firing (still)
    [0.97, 0.31, 101], // pending, value and annotation move
    [0.97, 0.31, null], // pending, nothing but the times moves; a reading without a block keeps the alert's
    [undefined, 0, 103], // absent once
    [0.96, 0.3, 104], // breaching again: absent no more, still pending
    [0.99, 0.3, 105], // `for` elapsed: fires (a transition, stepped)
    [0.93, 0.3, 106], // firing, lower: the peak stays
    [0.5, 0.3, 107], // judged ok while firing: cleared, keeps firing (keep_firing_for)
    [0.98, 0.3, 108], // breaching again: cleared no more
    [0.98, 0.3, 108], // the same reading again
  ];
  let inPlace = 0;
  // The engine's in-place writes, counted: the path this test is about must be the one taken.
  let movingWrites = 0;
  const saveMoving = engine.repo.saveMoving.bind(engine.repo);
  engine.repo.saveMoving = (...args) => {
    movingWrites++;
    return saveMoving(...args);
  };
  polls.forEach(([utilization, borrow_apy, block], i) => {
    const at = T0 + i * MIN;
    const readings = utilization === undefined ? [market('m2', at)] : [market('m1', at, { utilization, borrow_apy, block: block ?? undefined }), market('m2', at)];
    if (block === null) delete readings[0]!.fields.block;
    const expected = new Map<string, unknown>();
    for (const r of rules) {
      const reading = readings.find((x) => x.entity === 'm1');
      const prev = engine.repo.getTracked(fingerprint(r.name, 'm1'));
      if (!reading || !prev) continue;
      const verdict = evaluateExplained(kinds.get(r.kind)!, { rule: r, reading, now: at, history: { at: () => undefined, range: () => [] }, active: true });
      const describe = (current: Parameters<typeof describeAlert>[3]) => describeAlert(r, reading as Reading, verdict, current);
      const stepped = step(prev, {
        signal: { type: 'verdict', verdict, data_at: reading.at, block: num(reading.fields.block), describe },
        now: at,
        settings: settingsOf(r),
        identity: { rule: r.name, kind: r.kind, entity: 'm1', severity: r.severity },
      });
      if (stepped.events.length === 0 && verdict.status === 'breach') inPlace++;
      expected.set(r.name, stepped.next);
    }
    drive(store, engine, outcome('markets', 'metrics', readings, at));
    for (const [name, next] of expected) expect(engine.repo.getTracked(fingerprint(name, 'm1')), `poll ${i}, ${name}`).toEqual(next);
  });
  // Most of those judgements kept the standing (the in-place path): 6 of util, 8 of still.
  expect(inPlace).toBe(14);
  expect(movingWrites).toBe(inPlace);
  expect(engine.repo.get(fingerprint('util', 'm1'))).toMatchObject({ state: 'firing', value: 0.98, previous_value: 0.98, peak: 0.99, block: 108, absent_polls: 0 });
  store.close();
});

it('a poll rolled back after it changed alerts in place, or whose in-place write failed, leaves the next poll judging the table’s rows', () => {
  const store = tempStore(dirs);
  const engine = engineFor(store, [util]);
  const row = () => engine.repo.get(fingerprint('util', 'm1'));
  expect(drive(store, engine, poll(0, 0.95)).events.map((e) => e.type)).toEqual(['pending']);
  // Judged in place, then a later part of the poll's transaction fails.
  expect(() =>
    store.transaction(() => {
      engine.applyPoll(poll(1, 0.99), T0 + MIN);
      throw new Error('the outbox write failed');
    }),
  ).toThrow('the outbox write failed');
  // The in-place write itself fails: the call's first write, so no revision was bumped that a rollback takes back.
  const saveMoving = engine.repo.saveMoving;
  engine.repo.saveMoving = () => {
    throw new Error('disk I/O error');
  };
  expect(() => drive(store, engine, poll(2, 0.98))).toThrow('disk I/O error');
  engine.repo.saveMoving = saveMoving;
  expect(row()).toMatchObject({ value: 0.95, peak: 0.95, last_eval_at: T0 });
  // Had the kept copy held 0.99 or 0.98, they would be the previous value and the peak now.
  drive(store, engine, poll(3, 0.96));
  expect(row()).toMatchObject({ state: 'firing', value: 0.96, previous_value: 0.95, peak: 0.96, last_eval_at: T0 + 3 * MIN });
  store.close();
});

it('an alert judged in place again at the same instant is written only when a column moved, as the step’s save would', () => {
  const store = tempStore(dirs);
  const engine = engineFor(store, [util]);
  const row = () => engine.repo.getTracked(fingerprint('util', 'm1'));
  drive(store, engine, poll(0, 0.95));
  drive(store, engine, poll(1, 0.97));
  // The same poll again, at the same clock time: the previous value moves (0.95 → 0.97), so the row is written.
  let writes = engine.repo.writes();
  drive(store, engine, poll(1, 0.97));
  expect(engine.repo.writes()).toBe(writes + 1);
  expect(row()!.alert).toMatchObject({ value: 0.97, previous_value: 0.97, last_eval_at: T0 + MIN });
  // And once more: now nothing moves, and nothing is written (nor a revision bumped).
  const before = row();
  writes = engine.repo.writes();
  const revision = engine.repo.revision();
  drive(store, engine, poll(1, 0.97));
  expect(engine.repo.writes()).toBe(writes);
  expect(engine.repo.revision()).toBe(revision);
  expect(row()).toEqual(before);
  // Another value at that instant is written.
  drive(store, engine, poll(1, 0.98));
  expect(engine.repo.writes()).toBe(writes + 1);
  expect(row()!.alert).toMatchObject({ state: 'pending', value: 0.98, previous_value: 0.97, peak: 0.98, last_eval_at: T0 + MIN });
  store.close();
});

/** Poll `i` (a minute apart): each market at its utilization. */
const polls = (i: number, utilization: Record<string, number>) =>
  outcome('markets', 'metrics', Object.entries(utilization).map(([m, u]) => market(m, T0 + i * MIN, { utilization: u, block: 100 + i })), T0 + i * MIN);

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
  for (let i = 0; i <= last; i++) drive(store, engine, polls(i, values(i)));
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
              });
    }
    expect(repo.get(fingerprint('util', 'm5'))).toBeUndefined();
    // A new engine after the restart goes on from the stored rows.
    const after = engineFor(store, [util]);
    drive(store, after, polls(last + 1, values(last + 1)));
    expect(repo.get(fingerprint('util', 'm2'))).toMatchObject({ value: values(last + 1).m2, previous_value: v.m2 });
  } finally {
    store.close();
  }
});

it('a moving row deleted behind the engine’s copy fails the poll that would write it; the next poll makes the alert whole again', () => {
  const store = openStore(join(dirs.make(), 'lookout.db'));
  try {
    const engine = engineFor(store, [util]);
    drive(store, engine, poll(0, 0.95));
    // Not through the repository (nothing of lookout does this): the copy cannot know.
    store.db.prepare(`DELETE FROM alert_moving WHERE fingerprint = ?`).run(fingerprint('util', 'm1'));
    // Still pending, short of its `for`: judged in place, its row looked for by id.
    expect(() => drive(store, engine, poll(1, 0.96))).toThrow(/no moving row/);
    // The failed poll rolled back and dropped the copy: the next one reads the table (no whole row: no alert) and
    // opens the alert again.
    drive(store, engine, poll(2, 0.97));
    expect(engine.repo.get(fingerprint('util', 'm1'))).toMatchObject({ state: 'pending', value: 0.97, pending_since: T0 + 2 * MIN });
    expect(allRows(store.db)).toHaveLength(1);
  } finally {
    store.close();
  }
});
