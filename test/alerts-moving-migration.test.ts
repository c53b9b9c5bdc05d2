/**
 * Schema 13 (an alert's row split into what a transition changes and what a judged reading moves, `alerts` a view of
 * both) from a database as lookout 12 left it: every alert converted, none lost, the same answers from every reader
 * of the repository and from a plain `SELECT * FROM alerts` — by an oracle that is the fixture rows themselves.
 * Then writing goes on: a judged reading writes the narrow row only, a transition both, and a delete takes both.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fingerprint, type TrackedAlert } from '../src/alerts/lifecycle.js';
import { createAlertRepo } from '../src/alerts/repo.js';
import type { Alert } from '../src/model.js';
import { migrations, openStore } from '../src/store/index.js';
import { allAlertRows, tempDirs } from './store-helpers.js';

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

const T = 1_795_619_844_000;

function alert(rule: string, entity: string, state: Alert['state'], more: Partial<Alert> = {}): Alert {
  return {
    fingerprint: fingerprint(rule, entity),
    rule,
    kind: 'threshold',
    entity,
    state,
    flapping: false,
    severity: 'warning',
    labels: { rule, alertname: rule, severity: 'warning', market_id: entity, chain: 'base' },
    annotations: { summary: `${entity} at 97.1%`, description: 'naïve — “quoted” ✓' },
    value: 0.971,
    threshold: 0.92,
    previous_value: 0.97,
    peak: 0.973,
    data_at: T - 4_000,
    block: 178_674_935,
    pending_since: T - 60_000,
    firing_since: null,
    resolved_at: null,
    last_eval_at: T,
    last_notified_at: null,
    absent_polls: 0,
    changes: [],
    ...more,
  };
}

/** What lookout 12 held: every state, flapping, nulls where a column may be null, notification and clearing times. */
const rows: TrackedAlert[] = [
  { alert: alert('util', 'm1', 'pending'), cleared_at: null },
  { alert: alert('util', 'm2', 'firing', { firing_since: T - 30_000, last_notified_at: T - 29_000, changes: [T - 30_000] }), cleared_at: T - 2_000 },
  { alert: alert('util', 'm3', 'resolved', { firing_since: T - 90_000, resolved_at: T - 10_000, changes: [T - 90_000, T - 10_000] }), cleared_at: null },
  { alert: alert('jump', 'm1', 'inactive', { value: null, threshold: null, previous_value: null, peak: null, data_at: null, block: null, pending_since: null, labels: {}, annotations: {} }), cleared_at: null },
  { alert: alert('jump', 'm4', 'resolved', { flapping: true, severity: 'critical', changes: [T - 5_000, T - 4_000, T - 3_000], absent_polls: 2 }), cleared_at: null },
  { alert: alert('source_down', 'markets', 'firing', { kind: 'source_down', value: 3, threshold: 3, previous_value: 2, peak: 3, block: null, firing_since: T - 1_000 }), cleared_at: null },
];

/** The row as lookout 12's `alerts` table stored it (the same transformation its repository made). */
const asRow = ({ alert: a, cleared_at }: TrackedAlert) => ({
  ...a,
  flapping: a.flapping ? 1 : 0,
  labels: JSON.stringify(a.labels),
  annotations: JSON.stringify(a.annotations),
  changes: JSON.stringify(a.changes),
  cleared_at,
});

function v12Database(): string {
  const path = join(dirs.make(), 'v10.db');
  const old = openStore(path, { migrations: migrations.filter((m) => m.version <= 12) });
  const cols = Object.keys(asRow(rows[0]!));
  const insert = old.db.prepare(`INSERT INTO alerts (${cols.join(', ')}) VALUES (${cols.map((c) => `@${c}`).join(', ')})`);
  old.transaction(() => {
    for (const r of rows) insert.run(asRow(r));
  });
  expect(old.version).toBe(12);
  old.close();
  return path;
}

/** A row as the repository reads it back: with the id of its moving row (schema 14), whatever that is. */
const stored = (t: TrackedAlert): TrackedAlert => ({ ...t, moving_id: expect.any(Number) as number });

const byName = (a: Alert, b: Alert) => a.rule.localeCompare(b.rule) || a.entity.localeCompare(b.entity);
const plain = (list: readonly TrackedAlert[]) => list.map((r) => r.alert).sort(byName);

describe('migration 13: the columns a judged reading moves in their own table', () => {
  it('converts every alert, loses none, and every reader sees what it saw', () => {
    const store = openStore(v12Database());
    try {
      expect(store.version).toBe(migrations.at(-1)!.version);
      const repo = createAlertRepo(store.db);
      expect(repo.list()).toEqual(plain(rows));
      for (const r of rows) {
        expect(repo.getTracked(r.alert.fingerprint), `${r.alert.rule}/${r.alert.entity}`).toEqual(stored(r));
        expect(repo.get(r.alert.fingerprint)).toEqual(r.alert);
      }
      const active = rows.filter((r) => r.alert.state === 'pending' || r.alert.state === 'firing');
      expect(repo.active()).toEqual(plain(active));
      expect(repo.firing()).toEqual(plain(rows.filter((r) => r.alert.state === 'firing')));
      expect(repo.list({ rule: 'jump' })).toEqual(plain(rows.filter((r) => r.alert.rule === 'jump')));
      expect(repo.list({ state: ['resolved', 'inactive'] })).toEqual(plain(rows.filter((r) => r.alert.state === 'resolved' || r.alert.state === 'inactive')));
      expect(repo.activeStates().sort((a, b) => a.rule.localeCompare(b.rule) || a.state.localeCompare(b.state))).toEqual(
        active.map(({ alert: a }) => ({ rule: a.rule, severity: a.severity, state: a.state })).sort((a, b) => a.rule.localeCompare(b.rule) || a.state.localeCompare(b.state)),
      );
      const live = rows.filter((r) => r.alert.state === 'pending' || r.alert.state === 'firing' || r.alert.flapping);
      expect(repo.trackedLive()).toEqual([...live].sort((a, b) => byName(a.alert, b.alert)).map(stored));
      expect(repo.trackedForRules(['util']).sort((a, b) => byName(a.alert, b.alert))).toEqual(rows.filter((r) => r.alert.rule === 'util').map(stored));
      expect(repo.trackedOrphans(['util']).map((r) => r.alert.fingerprint)).toEqual(live.filter((r) => r.alert.rule !== 'util').sort((a, b) => byName(a.alert, b.alert)).map((r) => r.alert.fingerprint));
      // A plain query of `alerts` (an operator's, a tool's) gets the old table's columns, in its order, and its values.
      const all = allAlertRows(store.db) as Array<Record<string, unknown>>;
      const want = [...rows].sort((a, b) => byName(a.alert, b.alert)).map(asRow);
      expect(all).toEqual(want);
      expect(Object.keys(all[0]!)).toEqual(Object.keys(want[0]!));
      const kinds = Object.fromEntries((store.db.prepare(`SELECT name, type FROM sqlite_master WHERE name IN ('alerts', 'alert_standing', 'alert_moving')`).all() as Array<{ name: string; type: string }>).map((r) => [r.name, r.type]));
      expect(kinds).toEqual({ alerts: 'view', alert_standing: 'table', alert_moving: 'table' });
    } finally {
      store.close();
    }
  });

  it('writes a judged reading to the narrow row only, a transition to both; a delete of alerts takes both rows', () => {
    const store = openStore(v12Database());
    try {
      const repo = createAlertRepo(store.db);
      // Counts writes of the wide row (a temporary trigger: this connection only).
      store.db.exec(`CREATE TEMP TABLE standing_writes (n INTEGER); INSERT INTO standing_writes VALUES (0);
        CREATE TEMP TRIGGER count_standing AFTER UPDATE ON main.alert_standing BEGIN UPDATE standing_writes SET n = n + 1; END;`);
      const standingWrites = () => (store.db.prepare(`SELECT n FROM standing_writes`).get() as { n: number }).n;
      const prev = rows[1]!;
      const judged: TrackedAlert = {
        alert: { ...prev.alert, value: 0.975, previous_value: 0.971, peak: 0.975, data_at: T + 1_000, block: 178_674_936, last_eval_at: T + 1_000, annotations: { summary: 'm2 at 97.5%' } },
        cleared_at: null,
      };
      expect(store.transaction(() => repo.saveTracked(judged, prev))).toBe(true);
      expect(standingWrites()).toBe(0);
      expect(repo.getTracked(prev.alert.fingerprint)).toEqual(stored(judged));
      // The dispatcher's mark and a transition write the standing row; a judged reading never takes a mark back.
      store.transaction(() => repo.markNotified(prev.alert.fingerprint, T + 2_000));
      const marked = { ...judged, alert: { ...judged.alert, last_notified_at: T + 2_000 } };
      expect(repo.getTracked(prev.alert.fingerprint)).toEqual(stored(marked));
      // A write that carries an older mark (a copy read before the dispatcher's) keeps the newer one stored.
      store.transaction(() => repo.saveTracked({ ...judged, alert: { ...judged.alert, last_notified_at: T + 1_000, state: 'firing', firing_since: T + 1_500 } }, judged));
      expect(repo.getTracked(prev.alert.fingerprint)?.alert.last_notified_at).toBe(T + 2_000);
      const resolved: TrackedAlert = { alert: { ...judged.alert, state: 'resolved', resolved_at: T + 3_000, last_eval_at: T + 3_000, value: 0.5 }, cleared_at: null };
      store.transaction(() => repo.saveTracked(resolved, judged));
      expect(standingWrites()).toBe(3); // the mark, the older-mark transition above, the resolve
      expect(repo.getTracked(prev.alert.fingerprint)).toEqual(stored({ ...resolved, alert: { ...resolved.alert, last_notified_at: T + 2_000 } }));
      // A new alert is both rows; deleting through the view (or the repository) leaves neither.
      const fresh: TrackedAlert = { alert: alert('util', 'm9', 'pending'), cleared_at: null };
      store.transaction(() => repo.saveTracked(fresh));
      expect(repo.getTracked(fresh.alert.fingerprint)).toEqual(stored(fresh));
      store.db.prepare(`DELETE FROM alerts WHERE entity = ?`).run('m9');
      store.transaction(() => repo.remove(rows[0]!.alert.fingerprint));
      for (const t of ['alert_standing', 'alert_moving']) {
        expect(store.db.prepare(`SELECT count(*) AS n FROM ${t}`).get(), t).toEqual({ n: rows.length - 1 });
      }
      expect(repo.list().map((a) => `${a.rule}/${a.entity}`)).toEqual(plain(rows.slice(1)).map((a) => `${a.rule}/${a.entity}`));
    } finally {
      store.close();
    }
  });
});
