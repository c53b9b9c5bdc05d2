/**
 * The engine keeps the alert rows it judges in memory across polls (src/alerts/tracked-rows.ts) and writes a row in
 * place when only what a reading moves changed (src/alerts/repo.ts). These tests show the kept rows never disagree
 * with the table: after a rolled-back poll, a write by other code of the process, a commit by another connection, and
 * that the in-place write leaves nothing behind (labels, the notification time). A real SQLite file.
 */
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createAlertRepo } from '../src/alerts/repo.js';
import { fingerprint, newAlert, type TrackedAlert } from '../src/alerts/lifecycle.js';
import { TrackedRows, type TrackedRowsRepo } from '../src/alerts/tracked-rows.js';
import { HOUR, MIN, T0, drive, engineFor, market, outcome, rule, tempDirs, tempStore } from './alerts-helpers.js';

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

const high = rule({ name: 'util', kind: 'utilization_above', severity: 'critical', threshold: 0.9, for: '2m', annotations: { summary: 'util {{utilization}}' } });
const FP = fingerprint('util', 'm1');
const poll = (at: number, utilization: number, labels: Record<string, string> = {}) => {
  const r = market('m1', at, { utilization });
  return outcome('markets', 'metrics', [{ ...r, labels: { ...r.labels, ...labels } }], at);
};

/** A store and engine whose alert went pending at 0.95 (T0) and fired at `value` three minutes later. */
function firing(value: number) {
  const store = tempStore(dirs);
  const engine = engineFor(store, [high]);
  drive(store, engine, poll(T0, 0.95));
  drive(store, engine, poll(T0 + 3 * MIN, value));
  return { store, engine };
}

describe('the alert rows the engine keeps across polls', () => {
  it('a rolled-back poll leaves nothing in them: the next poll judges the alert as the table has it', () => {
    const store = tempStore(dirs);
    const engine = engineFor(store, [high]);
    expect(drive(store, engine, poll(T0, 0.95)).events.map((e) => e.type)).toEqual(['pending']);
    // The poll that would fire it fails after the engine judged it (a later step of the transaction threw).
    expect(() =>
      store.transaction(() => {
        expect(engine.applyPoll(poll(T0 + 3 * MIN, 0.96), T0 + 3 * MIN).events.map((e) => e.type)).toEqual(['firing']);
        throw new Error('the outbox write failed');
      }),
    ).toThrow('the outbox write failed');
    expect(engine.repo.get(FP)?.state).toBe('pending');
    // Had the kept copy stayed firing, this poll would announce nothing.
    const again = drive(store, engine, poll(T0 + 4 * MIN, 0.97));
    expect(again.events.map((e) => [e.type, e.alert.value])).toEqual([['firing', 0.97]]);
    expect(engine.repo.get(FP)).toMatchObject({ state: 'firing', value: 0.97, firing_since: T0 + 4 * MIN });
    store.close();
  });

  it("another part of the process writing an alert (the dispatcher's notification time) is seen by the next poll", () => {
    const { store, engine } = firing(0.95);
    const dispatcherRepo = createAlertRepo(store.db);
    store.transaction(() => dispatcherRepo.markNotified(FP, T0 + 3 * MIN + 10_000));
    // Only the marked row is read again: in an incident the dispatcher marks thousands between two polls.
    engine.repo.trackedForRules = () => expect.fail('the poll read every alert row again after a notification mark');
    const resolved = drive(store, engine, poll(T0 + 4 * MIN, 0.5));
    expect(resolved.events.map((e) => [e.type, e.alert.last_notified_at])).toEqual([['resolved', T0 + 3 * MIN + 10_000]]);
    store.close();
  });

  it('a commit by another connection to the same file is seen by the next poll', () => {
    const store = tempStore(dirs);
    const engine = engineFor(store, [high]);
    drive(store, engine, poll(T0, 0.95)); // pending
    const other = new Database(store.path);
    try {
      // Someone cleared the alert table by hand (another process): the alert starts over.
      other.prepare('DELETE FROM alerts').run();
    } finally {
      other.close();
    }
    const next = drive(store, engine, poll(T0 + 3 * MIN, 0.95));
    expect(next.events.map((e) => e.type)).toEqual(['pending']);
    expect(engine.repo.get(FP)).toMatchObject({ state: 'pending', pending_since: T0 + 3 * MIN });
    store.close();
  });

  it('the next deadline, asked outside a transaction, sees a commit by another connection made after it last asked', () => {
    const store = tempStore(dirs);
    const engine = engineFor(store, [high]);
    drive(store, engine, poll(T0, 0.95)); // pending: it fires once `for` (2m) has passed
    expect(engine.nextDeadline()).toBe(T0 + 2 * MIN);
    const other = new Database(store.path);
    try {
      other.prepare('DELETE FROM alerts').run();
    } finally {
      other.close();
    }
    // Had the kept copy read outside a transaction stayed, it would still name the deleted alert's deadline.
    expect(engine.nextDeadline()).toBeUndefined();
    store.close();
  });

  it('written in place, an alert that kept its state still gets its new value, annotations and labels, and keeps its notification time', () => {
    const { store, engine } = firing(0.96);
    store.transaction(() => engine.repo.markNotified(FP, T0 + 3 * MIN + 1));
    drive(store, engine, poll(T0 + 4 * MIN, 0.97));
    expect(engine.repo.getTracked(FP)).toMatchObject({
      cleared_at: null,
      alert: { state: 'firing', value: 0.97, previous_value: 0.96, peak: 0.97, data_at: T0 + 4 * MIN, last_eval_at: T0 + 4 * MIN, annotations: { summary: 'util 0.97' }, last_notified_at: T0 + 3 * MIN + 1 },
    });
    // The entity's labels change (the service renamed the loan asset): the stored labels follow.
    drive(store, engine, poll(T0 + 5 * MIN, 0.97, { loan_asset_symbol: 'USDC.e' }));
    expect(engine.repo.get(FP)?.labels.loan_asset_symbol).toBe('USDC.e');
    // Below the threshold: cleared (keep_firing_for 0 resolves it at once).
    drive(store, engine, poll(T0 + 6 * MIN, 0.5));
    expect(engine.repo.getTracked(FP)).toMatchObject({ cleared_at: null, alert: { state: 'resolved', resolved_at: T0 + 6 * MIN, value: 0.5 } });
    store.close();
  });

  it('a fresh engine over the same file (a restart) reads what the first one wrote in place', () => {
    const store = tempStore(dirs);
    const first = engineFor(store, [high]);
    drive(store, first, poll(T0, 0.95));
    [0.96, 0.99, 0.97].forEach((u, i) => drive(store, first, poll(T0 + (i + 3) * MIN, u)));
    const restarted = engineFor(store, [high]);
    const r = drive(store, restarted, poll(T0 + HOUR, 0.5));
    expect(r.events.map((e) => [e.type, e.alert.previous_value, e.alert.peak, e.alert.firing_since])).toEqual([['resolved', 0.97, 0.99, T0 + 3 * MIN]]);
    store.close();
  });

  it("keep_firing_for's clearing time, written in place, holds across a restart", () => {
    const store = tempStore(dirs);
    const kept = rule({ name: 'util', kind: 'utilization_above', severity: 'critical', threshold: 0.9, keep_firing_for: '10m' });
    const first = engineFor(store, [kept]);
    drive(store, first, poll(T0, 0.95)); // firing at once (for: 0)
    drive(store, first, poll(T0 + MIN, 0.5)); // cleared, still firing for 10 minutes
    expect(first.repo.getTracked(FP)).toMatchObject({ cleared_at: T0 + MIN, alert: { state: 'firing' } });
    const restarted = engineFor(store, [kept]);
    const writes = restarted.repo.writes();
    expect(store.transaction(() => restarted.tick(T0 + 10 * MIN)).events).toEqual([]);
    expect(restarted.repo.writes()).toBe(writes); // a tick with nothing due rewrites no row
    expect(store.transaction(() => restarted.tick(T0 + 11 * MIN)).events.map((e) => [e.type, e.at])).toEqual([['resolved', T0 + 11 * MIN]]);
    store.close();
  });
});

describe('a tick steps the kept rows', () => {
  it('reads no alert row back from the table, and steps them by rule then entity as the table orders them', () => {
    const store = tempStore(dirs);
    const engine = engineFor(store, [high]);
    // m2 before m1: the kept rows hold them in the order they were judged.
    const readings = ['m2', 'm1'].map((e) => market(e, T0, { utilization: 0.95 }));
    expect(drive(store, engine, outcome('markets', 'metrics', readings, T0)).events.map((e) => [e.type, e.alert.entity])).toEqual([
      ['pending', 'm2'],
      ['pending', 'm1'],
    ]);
    const revision = engine.repo.revision();
    store.transaction(() => engine.tick(T0 + MIN)); // nothing due yet; the built-in alerts' rows are read once here
    // Two pending alerts stepped, nothing changed: nothing written, not even the revision the kept rows are checked by.
    expect(engine.repo.revision()).toBe(revision);
    // Every tick of an incident read each live alert's row (three JSON texts) again: now none may be.
    engine.repo.trackedLive = () => expect.fail('a tick read the live alerts from the table');
    engine.repo.trackedForRules = () => expect.fail('a tick read alert rows from the table');
    const fired = store.transaction(() => engine.tick(T0 + 2 * MIN));
    expect(fired.events.map((e) => [e.type, e.alert.entity])).toEqual([
      ['firing', 'm1'],
      ['firing', 'm2'],
    ]);
    expect(engine.repo.get(fingerprint('util', 'm2'))?.state).toBe('firing');
    store.close();
  });
});

describe('TrackedRows: what it reads and writes', () => {
  /** The store's repository, with its reads of rows and its revision bumps counted. */
  function counted(store: ReturnType<typeof tempStore>) {
    const repo = createAlertRepo(store.db);
    const n = { loads: 0, bumps: 0, gets: 0 };
    const wrapped: TrackedRowsRepo = {
      ...repo,
      trackedForRules: (rules) => (n.loads++, repo.trackedForRules(rules)),
      getTracked: (fp) => (n.gets++, repo.getTracked(fp)),
      bumpRevision: (now) => (n.bumps++, repo.bumpRevision(now)),
    };
    const rows = new TrackedRows(wrapped, store.db);
    /** One engine call's start and what the copy holds for `util` then: entity → value. */
    const look = () => store.transaction(() => (rows.begin(), new Map([...rows.forRules(['util']).get('util')!].map(([e, t]) => [e, t.alert.value]))));
    /** One engine call that saves m1 and `last`, with `between` run between the two saves. */
    const call = (last: TrackedAlert, between = () => {}) =>
      store.transaction(() => {
        rows.begin();
        rows.forRules(['util']);
        rows.save(row('m1', 1), undefined, T0);
        between();
        rows.save(last, undefined, T0);
      });
    /** One engine call's start and the notification time of each `util` row the copy holds then. */
    const notifiedAt = () =>
      store.transaction(() => (rows.begin(), new Map([...rows.forRules(['util']).get('util')!].map(([e, t]) => [e, t.alert.last_notified_at]))));
    return { repo, n, rows, look, call, notifiedAt };
  }
  const row = (entity: string, value: number): TrackedAlert => ({
    alert: { ...newAlert({ rule: 'util', kind: 'utilization_above', entity, severity: 'warning' }, T0), state: 'firing', value },
    cleared_at: null,
  });

  it('reads a rule once and keeps it while nothing else writes; again after clear() or a write by anyone else', () => {
    const store = tempStore(dirs);
    const { repo, n, rows, look } = counted(store);
    store.transaction(() => repo.saveTracked(row('m1', 1)));
    expect(look()).toEqual(new Map([['m1', 1]]));
    expect(look()).toEqual(new Map([['m1', 1]]));
    expect(n.loads).toBe(1);
    rows.clear();
    expect(look()).toEqual(new Map([['m1', 1]]));
    expect(n.loads).toBe(2);
    store.transaction(() => createAlertRepo(store.db).saveTracked(row('m1', 2)));
    expect(look()).toEqual(new Map([['m1', 2]]));
    expect(n.loads).toBe(3);
    store.close();
  });

  it('bumps the revision once per call, however many rows it saves; its own saves keep the copy', () => {
    const store = tempStore(dirs);
    const { n, look, call } = counted(store);
    call(row('m2', 1));
    expect(n.bumps).toBe(1);
    expect(look()).toEqual(new Map([['m1', 1], ['m2', 1]]));
    expect(n.loads).toBe(1);
    store.close();
  });

  it('live() lists the pending, firing and flapping rows of the rules asked, by rule then entity, and no resolved one', () => {
    const store = tempStore(dirs);
    const { repo, rows } = counted(store);
    const of = (rule: string, entity: string, state: 'pending' | 'firing' | 'resolved', flapping = false): TrackedAlert => ({
      alert: { ...newAlert({ rule, kind: 'utilization_above', entity, severity: 'warning' }, T0), state, flapping },
      cleared_at: null,
    });
    // Saved out of order, so the table's and the copy's own orders are not the answer by chance.
    const saved = [of('util', 'm4', 'firing'), of('apy', 'm9', 'pending'), of('util', 'm1', 'pending'), of('util', 'm3', 'resolved'), of('util', 'm2', 'resolved', true), of('apy', 'm0', 'resolved'), of('other', 'm5', 'firing'), of('util', 'm0', 'firing')];
    store.transaction(() => saved.forEach((t) => repo.saveTracked(t)));
    const live = store.transaction(() => (rows.begin(), rows.live(['util', 'apy'])));
    expect(live.map((t) => `${t.alert.rule}/${t.alert.entity}`)).toEqual(['apy/m9', 'util/m0', 'util/m1', 'util/m2', 'util/m4']);
    store.close();
  });

  it("re-reads only the rows the dispatcher marked notified since (the copy is kept), and gets each one's new time", () => {
    const store = tempStore(dirs);
    const { n, look, call, notifiedAt } = counted(store);
    call(row('m2', 1));
    const other = createAlertRepo(store.db);
    store.transaction(() => other.markNotified(fingerprint('util', 'm2'), T0 + 5_000));
    // Marked twice: read once.
    store.transaction(() => (other.markNotified(fingerprint('util', 'm1'), T0 + 6_000), other.markNotified(fingerprint('util', 'm1'), T0 + 7_000)));
    expect(look()).toEqual(new Map([['m1', 1], ['m2', 1]]));
    expect(notifiedAt()).toEqual(new Map([['m1', T0 + 7_000], ['m2', T0 + 5_000]]));
    expect([n.loads, n.gets]).toEqual([1, 2]);
    // Nothing since: nothing read.
    expect(look()).toEqual(new Map([['m1', 1], ['m2', 1]]));
    expect([n.loads, n.gets]).toEqual([1, 2]);
    store.close();
  });

  it('a rolled-back mark: the row read again is the one the table kept', () => {
    const store = tempStore(dirs);
    const { n, call, notifiedAt } = counted(store);
    call(row('m2', 1));
    const other = createAlertRepo(store.db);
    expect(() =>
      store.transaction(() => {
        other.markNotified(fingerprint('util', 'm1'), T0 + 5_000);
        throw new Error('the delivery record failed');
      }),
    ).toThrow('the delivery record failed');
    expect(notifiedAt()).toEqual(new Map([['m1', null], ['m2', null]]));
    expect([n.loads, n.gets]).toEqual([1, 1]);
    store.close();
  });

  it('a mark followed by any other write, or more marks than the journal keeps, drops the whole copy', () => {
    const store = tempStore(dirs);
    const { n, look, call } = counted(store);
    call(row('m2', 1));
    const other = createAlertRepo(store.db);
    store.transaction(() => {
      other.markNotified(fingerprint('util', 'm1'), T0 + 5_000);
      other.saveTracked(row('m2', 7));
    });
    expect(look()).toEqual(new Map([['m1', 1], ['m2', 7]]));
    expect([n.loads, n.gets]).toEqual([2, 0]);
    // The journal keeps 50,000 marks; one more and it forgets them all (a copy then reads everything again).
    store.transaction(() => {
      for (let i = 0; i < 50_000; i++) other.markNotified(`gone-${i}`, T0);
      other.markNotified(fingerprint('util', 'm1'), T0 + 6_000);
    });
    expect(look()).toEqual(new Map([['m1', 1], ['m2', 7]]));
    expect([n.loads, n.gets]).toEqual([3, 0]);
    store.close();
  });

  it('a write by someone else between two of its own saves (never inside an engine call, but if) drops the copy', () => {
    const store = tempStore(dirs);
    const { n, look, call } = counted(store);
    call(row('m3', 1), () => createAlertRepo(store.db).saveTracked(row('m2', 5)));
    expect([...look()].sort()).toEqual([['m1', 1], ['m2', 5], ['m3', 1]]);
    expect(n.loads).toBe(2);
    store.close();
  });
});
