/**
 * Alert state in SQLite: `alerts` (one row per fingerprint; since schema 13 a view of `alert_standing` and
 * `alert_moving`, written here: src/alerts/moving-migration.ts) and `alert_events` (every transition). Statements are
 * prepared once; every method runs in the caller's transaction when called inside one (the engine relies on it).
 */
import type Database from 'better-sqlite3';
import type { Alert, AlertEvent, AlertState } from '../model.js';
import { finite, sameReading, sameRecord, type TrackedAlert } from './lifecycle.js';

/** Filter of {@link AlertRepo.list}. */
export interface AlertFilter {
  state?: AlertState | readonly AlertState[];
  rule?: string;
}

/** One recorded transition. */
export interface StoredAlertEvent extends AlertEvent {
  id: number;
}

/** Repository of alert state and transitions. */
export interface AlertRepo {
  get(fingerprint: string): Alert | undefined;
  /** Alerts ordered by rule then entity, optionally filtered by state(s) and rule. */
  list(filter?: AlertFilter): Alert[];
  /** Pending and firing alerts. */
  active(): Alert[];
  /** Rule, severity and state of each pending and firing alert (what `lookout_alerts` counts), without the rest of the row. */
  activeStates(): Array<Pick<Alert, 'rule' | 'severity' | 'state'>>;
  firing(): Alert[];
  /** Records transitions in order; returns their ids. */
  recordEvents(events: readonly AlertEvent[]): number[];
  /** Transitions, oldest first: of one alert, or all; `limit` keeps the newest that many. */
  events(fingerprint?: string, opts?: { limit?: number; since?: number }): StoredAlertEvent[];
  /** Notes that a notification for the alert went out at `at`. */
  markNotified(fingerprint: string, at: number): void;
  /** Deletes transitions older than `olderThan`; returns the rows deleted. */
  pruneEvents(olderThan: number): number;
  /** For the engine: an alert with its lifecycle bookkeeping. */
  getTracked(fingerprint: string): TrackedAlert | undefined;
  /** For the engine: every alert of the given rules, with bookkeeping. */
  trackedForRules(rules: readonly string[]): TrackedAlert[];
  /** For the engine: alerts a timer may move (pending, firing, flapping), with bookkeeping. */
  trackedLive(): TrackedAlert[];
  /** For the engine: pending/firing/flapping alerts whose rule is not in `rules`. */
  trackedOrphans(rules: readonly string[]): TrackedAlert[];
  /**
   * For the engine: saves an alert with its bookkeeping. `prev`, when given, must be the row as stored now (what
   * {@link getTracked} or {@link trackedForRules} returned, or what was last saved): nothing is written when nothing
   * changed, and only the columns a judged reading moves when the alert kept its state, labels and times. Notes on
   * `t` where its moving row is (`moving_id`: the row saved, or `prev`'s). Returns whether it wrote.
   */
  saveTracked(t: TrackedAlert, prev?: TrackedAlert): boolean;
  /**
   * For the engine: writes the columns a judged reading moves (value, threshold, previous value, peak, data time,
   * block, evaluation time, absent polls, `cleared_at`; the annotations when `annotations` says they changed) of an
   * alert whose standing is as stored: what {@link saveTracked} writes for it, without comparing it with the row.
   * Found by `t.moving_id` where it has one (an id that finds no row throws: the row went behind the caller's back).
   */
  saveMoving(t: TrackedAlert, annotations: boolean): void;
  /** Forgets an alert without a transition (its entity moved to another replica). */
  remove(fingerprint: string): void;
  /**
   * A counter stored with the alerts (in `meta`), for a copy of their rows kept in memory across transactions
   * (src/alerts/tracked-rows.ts): bumped by the copy's owner in the transaction that writes, so a rollback takes the
   * bump back with the rows.
   */
  revision(): number;
  /** Adds one to {@link revision} and returns it. */
  bumpRevision(now: number): number;
  /** How many writes to `alerts` this connection made through any repository of it, since the process started. */
  writes(): number;
  /**
   * The alerts whose notification time alone was written ({@link markNotified}) after the connection's write number
   * `since` (a {@link writes} value), when those were the only writes since; `undefined` when any other write came
   * after it, or more marks than the journal keeps. A copy of the rows refreshes just these instead of reading
   * every row again: in an incident the dispatcher marks thousands of alerts between two polls.
   */
  notifiedSince(since: number): string[] | undefined;
}

/** The marks a connection's journal keeps before it forgets them (and a copy reads everything again). */
const NOTIFIED_KEPT = 50_000;

/**
 * Writes to `alerts` per connection, through every repository of it (see {@link AlertRepo.writes}): `n` counts them,
 * `other` is the number of the last that was not a notification mark, `notified` maps each marked fingerprint to
 * the number of its last mark, oldest first.
 */
interface WriteJournal {
  n: number;
  other: number;
  notified: Map<string, number>;
}
const writesOn = new WeakMap<Database.Database, WriteJournal>();

/** An `alerts` row: the {@link Alert} with its booleans as 0/1 and its maps and lists as JSON, plus bookkeeping. */
type AlertRow = Omit<Alert, 'flapping' | 'labels' | 'annotations' | 'changes'> & {
  flapping: number;
  labels: string;
  annotations: string;
  changes: string;
  cleared_at: number | null;
  moving_id: number;
};

interface EventRow {
  id: number;
  type: AlertEvent['type'];
  at: number;
  alert: string;
}

/** The `alerts` view's columns, as the table had them before schema 13. */
const COLS = `fingerprint, rule, kind, entity, state, flapping, severity, labels, annotations, value, threshold,
  previous_value, peak, data_at, block, pending_since, firing_since, resolved_at, last_eval_at, last_notified_at,
  absent_polls, changes, cleared_at`;
/**
 * Where the rows are read: the two tables the `alerts` view joins (src/alerts/moving-migration.ts), so a read has the
 * moving row's id too (`moving_id`).
 */
const ROWS = `alert_standing JOIN alert_moving USING (fingerprint)`;
const READ_COLS = `${COLS}, alert_moving.id AS moving_id`;
const STANDING_COLS = `fingerprint, rule, kind, entity, state, flapping, severity, labels, pending_since, firing_since,
  resolved_at, last_notified_at, changes`;
const MOVING_COLS = `fingerprint, value, threshold, previous_value, peak, data_at, block, last_eval_at, absent_polls,
  annotations, cleared_at`;

function toTracked(r: AlertRow): TrackedAlert {
  return {
    alert: {
      fingerprint: r.fingerprint,
      rule: r.rule,
      kind: r.kind,
      entity: r.entity,
      state: r.state,
      flapping: r.flapping === 1,
      severity: r.severity,
      labels: JSON.parse(r.labels) as Record<string, string>,
      annotations: JSON.parse(r.annotations) as Record<string, string>,
      value: r.value,
      threshold: r.threshold,
      previous_value: r.previous_value,
      peak: r.peak,
      data_at: r.data_at,
      block: r.block,
      pending_since: r.pending_since,
      firing_since: r.firing_since,
      resolved_at: r.resolved_at,
      last_eval_at: r.last_eval_at,
      last_notified_at: r.last_notified_at,
      absent_polls: r.absent_polls,
      changes: JSON.parse(r.changes) as number[],
    },
    cleared_at: r.cleared_at,
    moving_id: r.moving_id,
    seen: undefined,
  };
}

function sameList(a: readonly number[], b: readonly number[]): boolean {
  return a === b || (a.length === b.length && a.every((v, i) => v === b[i]));
}

/**
 * Whether only the columns a judged reading moves differ (value, threshold, previous value, peak, data time, block,
 * evaluation time, absent polls, annotations, cleared_at): only the alert's narrow `alert_moving` row is then written.
 * `last_notified_at` is not compared: the dispatcher moves it, and neither write may take it back.
 */
function sameStanding(a: Alert, b: Alert): boolean {
  return (
    a.fingerprint === b.fingerprint &&
    a.rule === b.rule &&
    a.kind === b.kind &&
    a.entity === b.entity &&
    a.state === b.state &&
    a.flapping === b.flapping &&
    a.severity === b.severity &&
    a.pending_since === b.pending_since &&
    a.firing_since === b.firing_since &&
    a.resolved_at === b.resolved_at &&
    sameList(a.changes, b.changes) &&
    sameRecord(a.labels, b.labels)
  );
}

function toParams(t: TrackedAlert): Record<string, unknown> {
  const a = t.alert;
  return {
    fingerprint: a.fingerprint,
    rule: a.rule,
    kind: a.kind,
    entity: a.entity,
    state: a.state,
    flapping: a.flapping ? 1 : 0,
    severity: a.severity,
    labels: JSON.stringify(a.labels),
    annotations: JSON.stringify(a.annotations),
    value: finite(a.value),
    threshold: finite(a.threshold),
    previous_value: finite(a.previous_value),
    peak: finite(a.peak),
    data_at: a.data_at,
    block: a.block,
    pending_since: a.pending_since,
    firing_since: a.firing_since,
    resolved_at: a.resolved_at,
    last_eval_at: a.last_eval_at,
    last_notified_at: a.last_notified_at,
    absent_polls: a.absent_polls,
    changes: JSON.stringify(a.changes),
    cleared_at: t.cleared_at,
  };
}

/** Builds the alert repository over a database migrated to at least version 13. */
export function createAlertRepo(db: Database.Database): AlertRepo {
  let journal = writesOn.get(db);
  if (!journal) writesOn.set(db, (journal = { n: 0, other: 0, notified: new Map() }));
  const writes = journal;
  /** Counts a write that is not a notification mark. */
  const wrote = (): void => {
    writes.other = ++writes.n;
  };
  // An alert is two rows (src/alerts/moving-migration.ts): what a transition changes, and what a judged reading moves.
  const upsertStanding = db.prepare(
    `INSERT INTO alert_standing (${STANDING_COLS}) VALUES (@fingerprint, @rule, @kind, @entity, @state, @flapping, @severity,
       @labels, @pending_since, @firing_since, @resolved_at, @last_notified_at, @changes)
     ON CONFLICT (fingerprint) DO UPDATE SET rule = excluded.rule, kind = excluded.kind, entity = excluded.entity,
       state = excluded.state, flapping = excluded.flapping, severity = excluded.severity, labels = excluded.labels,
       pending_since = excluded.pending_since, firing_since = excluded.firing_since, resolved_at = excluded.resolved_at,
       last_notified_at = coalesce(max(excluded.last_notified_at, alert_standing.last_notified_at), excluded.last_notified_at, alert_standing.last_notified_at),
       changes = excluded.changes`,
  );
  const upsertMoving = db.prepare(
    `INSERT INTO alert_moving (${MOVING_COLS}) VALUES (@fingerprint, @value, @threshold, @previous_value, @peak, @data_at,
       @block, @last_eval_at, @absent_polls, @annotations, @cleared_at)
     ON CONFLICT (fingerprint) DO UPDATE SET value = excluded.value, threshold = excluded.threshold,
       previous_value = excluded.previous_value, peak = excluded.peak, data_at = excluded.data_at, block = excluded.block,
       last_eval_at = excluded.last_eval_at, absent_polls = excluded.absent_polls, annotations = excluded.annotations,
       cleared_at = excluded.cleared_at
     RETURNING id`,
  );
  // What a judged reading of an alert that kept its standing changes: its narrow row alone, found by its id where the
  // row was read or saved here (every row of the engine's copy), else by its fingerprint.
  const MOVED = `UPDATE alert_moving SET value = ?, threshold = ?, previous_value = ?, peak = ?, data_at = ?, block = ?,
    last_eval_at = ?, absent_polls = ?, annotations = coalesce(?, annotations), cleared_at = ?`;
  type Moved = [number | null, number | null, number | null, number | null, number | null, number | null, number, number, string | null, number | null];
  const movedById = db.prepare<[...Moved, number]>(`${MOVED} WHERE id = ?`);
  const movedByFingerprint = db.prepare<[...Moved, string]>(`${MOVED} WHERE fingerprint = ?`);
  const writeMoving = (t: TrackedAlert, annotations: boolean): void => {
    const a = t.alert;
    // The two statements differ in their last parameter only: one call of either, its values passed as they are — no
    // array and spread per write (~2,000 writes a poll in an incident, issue 14, B4).
    const id = t.moving_id;
    const byId = id !== undefined;
    const update: Database.Statement<[...Moved, number | string]> = byId ? movedById : movedByFingerprint;
    const { changes } = update.run(
      finite(a.value), finite(a.threshold), finite(a.previous_value), finite(a.peak), a.data_at, a.block, a.last_eval_at, a.absent_polls,
      annotations ? JSON.stringify(a.annotations) : null, t.cleared_at, byId ? id : a.fingerprint,
    );
    // Ids are never given twice (AUTOINCREMENT): none found, by id or by fingerprint, is a copy that outlived its row
    // (deleted behind the engine's copy), not another alert's row — never a write gone nowhere.
    if (changes !== 1) throw new Error(`alert ${a.fingerprint}: no moving row ${t.moving_id ?? 'with its fingerprint'} (the row was deleted behind the engine's copy)`);
  };
  const getOne = db.prepare<[string], AlertRow>(`SELECT ${READ_COLS} FROM ${ROWS} WHERE fingerprint = ?`);
  const listAll = db.prepare<{ states: string | null; rule: string | null }, AlertRow>(
    `SELECT ${READ_COLS} FROM ${ROWS}
     WHERE (@states IS NULL OR state IN (SELECT value FROM json_each(@states))) AND (@rule IS NULL OR rule = @rule)
     ORDER BY rule, entity`,
  );
  const forRules = db.prepare<[string], AlertRow>(
    `SELECT ${READ_COLS} FROM ${ROWS} WHERE rule IN (SELECT value FROM json_each(?))`,
  );
  const activeRows = db.prepare<[], Pick<Alert, 'rule' | 'severity' | 'state'>>(
    `SELECT rule, severity, state FROM alert_standing WHERE state IN ('pending', 'firing')`,
  );
  const live = db.prepare<[], AlertRow>(
    `SELECT ${READ_COLS} FROM ${ROWS} WHERE state IN ('pending', 'firing') OR flapping = 1 ORDER BY rule, entity`,
  );
  const orphans = db.prepare<[string], AlertRow>(
    `SELECT ${READ_COLS} FROM ${ROWS} WHERE (state IN ('pending', 'firing') OR flapping = 1)
       AND rule NOT IN (SELECT value FROM json_each(?)) ORDER BY rule, entity`,
  );
  const insertEvent = db.prepare(
    `INSERT INTO alert_events (fingerprint, rule, entity, type, at, alert) VALUES (?, ?, ?, ?, ?, ?)`,
  );
  const eventsOf = db.prepare<[string, number, number], EventRow>(
    `SELECT * FROM (SELECT id, type, at, alert FROM alert_events WHERE fingerprint = ? AND at >= ? ORDER BY id DESC LIMIT ?) ORDER BY id`,
  );
  const eventsAll = db.prepare<[number, number], EventRow>(
    `SELECT * FROM (SELECT id, type, at, alert FROM alert_events WHERE at >= ? ORDER BY id DESC LIMIT ?) ORDER BY id`,
  );
  const notified = db.prepare(
    `UPDATE alert_standing SET last_notified_at = max(coalesce(last_notified_at, 0), ?) WHERE fingerprint = ?`,
  );
  const prune = db.prepare(`DELETE FROM alert_events WHERE at < ?`);
  const getRevision = db.prepare<[], { value: string }>(`SELECT value FROM meta WHERE key = 'alerts_revision'`);
  const bump = db.prepare<[number], { value: string }>(
    `INSERT INTO meta (key, value, updated_at) VALUES ('alerts_revision', '1', ?)
     ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1, updated_at = excluded.updated_at RETURNING value`,
  );
  const removeStanding = db.prepare(`DELETE FROM alert_standing WHERE fingerprint = ?`);
  const removeMoving = db.prepare(`DELETE FROM alert_moving WHERE fingerprint = ?`);

  const toEvent = (r: EventRow): StoredAlertEvent => ({ id: r.id, type: r.type, at: r.at, alert: JSON.parse(r.alert) as Alert });
  const plain = (rows: AlertRow[]): Alert[] => rows.map((r) => toTracked(r).alert);

  return {
    get: (fp) => {
      const row = getOne.get(fp);
      return row ? toTracked(row).alert : undefined;
    },
    list: (filter = {}) => {
      const states = filter.state === undefined ? null : JSON.stringify(Array.isArray(filter.state) ? filter.state : [filter.state]);
      return plain(listAll.all({ states, rule: filter.rule ?? null }));
    },
    active: () => plain(listAll.all({ states: '["pending","firing"]', rule: null })),
    firing: () => plain(listAll.all({ states: '["firing"]', rule: null })),
    activeStates: () => activeRows.all(),
    recordEvents: (events) =>
      events.map((e) => Number(insertEvent.run(e.alert.fingerprint, e.alert.rule, e.alert.entity, e.type, e.at, JSON.stringify(e.alert)).lastInsertRowid)),
    events: (fp, opts = {}) => {
      const limit = opts.limit ?? -1;
      const since = opts.since ?? Number.MIN_SAFE_INTEGER;
      return (fp === undefined ? eventsAll.all(since, limit) : eventsOf.all(fp, since, limit)).map(toEvent);
    },
    markNotified: (fp, at) => {
      notified.run(at, fp);
      const n = ++writes.n;
      // Oldest first: a mark moves to the end.
      writes.notified.delete(fp);
      if (writes.notified.size >= NOTIFIED_KEPT) {
        writes.notified.clear();
        writes.other = n;
      } else writes.notified.set(fp, n);
    },
    pruneEvents: (olderThan) => prune.run(olderThan).changes,
    getTracked: (fp) => {
      const row = getOne.get(fp);
      return row ? toTracked(row) : undefined;
    },
    trackedForRules: (rules) => (rules.length === 0 ? [] : forRules.all(JSON.stringify(rules)).map(toTracked)),
    trackedLive: () => live.all().map(toTracked),
    trackedOrphans: (rules) => orphans.all(JSON.stringify(rules)).map(toTracked),
    saveTracked: (t, prev) => {
      if (prev === undefined || !sameStanding(prev.alert, t.alert)) {
        const params = toParams(t);
        upsertStanding.run(params);
        t.moving_id = (upsertMoving.get(params) as { id: number }).id;
        wrote();
        return true;
      }
      t.moving_id = prev.moving_id; // the same row as prev's
      if (sameReading(prev, t)) return false;
      writeMoving(t, !sameRecord(prev.alert.annotations, t.alert.annotations));
      wrote();
      return true;
    },
    saveMoving: (t, annotations) => {
      writeMoving(t, annotations);
      wrote();
    },
    remove: (fp) => {
      removeStanding.run(fp);
      removeMoving.run(fp);
      wrote();
    },
    revision: () => Number(getRevision.get()?.value ?? 0),
    bumpRevision: (now) => Number(bump.get(now)!.value),
    writes: () => writes.n,
    notifiedSince: (since) => {
      if (writes.other > since) return undefined;
      const out: string[] = [];
      for (const [fp, n] of writes.notified) if (n > since) out.push(fp);
      return out;
    },
  };
}
