/**
 * The engine's copy of the `alerts` rows it judges, kept across polls. In an incident every poll judges thousands of
 * active alerts; reading each one's row back (three JSON texts to parse) on every poll was a third of the
 * evaluation's time (issue 14, B4).
 *
 * The copy is written through: every row the engine saves goes to the table and to the copy in the same call, so the
 * copy is the table as long as nobody else wrote. An alert judged in breach again that keeps its standing is changed
 * in the copy itself and then written ({@link TrackedRows.saveMoving}): a write that fails drops the copy. It is dropped, and read again when next needed, when:
 * - the transaction that held the engine's last writes rolled back: the engine bumps a counter stored with the alerts
 *   (`meta.alerts_revision`) in the first write of each call, so a rollback takes the bump back and the counter no
 *   longer matches the copy's;
 * - any other code of this process wrote to `alerts` (a test, a tool): the repository counts writes per connection.
 *   When the only writes since were the dispatcher's notification times (thousands between two polls of an
 *   incident), just those rows are read again;
 * - another connection committed (`PRAGMA data_version` moved: another process on the same file).
 * Call {@link TrackedRows.begin} at the start of each engine call, inside its transaction. A question that writes
 * nothing (the engine's next deadline) may begin and read outside one: each statement then reads committed rows, and
 * a copy read across another connection's commit is dropped at the next begin, whose `data_version` has moved.
 */
import type Database from 'better-sqlite3';
import { isActive, type TrackedAlert } from './lifecycle.js';
import type { AlertRepo } from './repo.js';
import { compareText } from '../text-format.js';

/** Where the copy's rows come from and go to. */
export type TrackedRowsRepo = Pick<
  AlertRepo,
  'trackedForRules' | 'getTracked' | 'saveTracked' | 'saveMoving' | 'remove' | 'revision' | 'bumpRevision' | 'writes' | 'notifiedSince'
>;

/** See the module comment. */
export class TrackedRows {
  /** By rule, then entity: the rules read so far. */
  private byRule = new Map<string, Map<string, TrackedAlert>>();
  /** `meta.alerts_revision` as the copy knows it. */
  private revision = -1;
  /** The repository's write count after the copy's own last write. */
  private writes = -1;
  private dataVersion = -1;
  /** Whether this call already bumped the revision. */
  private bumped = false;

  /** `PRAGMA data_version`, prepared once: `db.pragma()` prepares its statement anew at each call (a backtest begins twice a run). */
  private readonly dataVersionOf: Database.Statement<[], number>;

  constructor(
    private readonly repo: TrackedRowsRepo,
    db: Database.Database,
  ) {
    this.dataVersionOf = db.prepare<[], number>('PRAGMA data_version').pluck();
  }

  /** Starts an engine call: keeps the copy only if nobody wrote since the engine's last write and that write stayed. */
  begin(): void {
    this.bumped = false;
    const dataVersion = this.dataVersionOf.get()!;
    const revision = this.repo.revision();
    const writes = this.repo.writes();
    if (revision !== this.revision || dataVersion !== this.dataVersion) this.byRule.clear();
    else if (writes !== this.writes) this.refresh(this.repo.notifiedSince(this.writes));
    this.revision = revision;
    this.writes = writes;
    this.dataVersion = dataVersion;
  }

  /** Reads again the rows `marked` names (the only writes since the copy's), or all of them (`undefined`). */
  private refresh(marked: readonly string[] | undefined): void {
    if (marked === undefined) {
      this.byRule.clear();
      return;
    }
    for (const fp of marked) {
      const t = this.repo.getTracked(fp);
      // A mark writes no row it does not find: the row is there unless a later write (not a mark) removed it.
      if (t !== undefined) this.byRule.get(t.alert.rule)?.set(t.alert.entity, t);
    }
  }

  /** Drops the copy (the rules changed). */
  clear(): void {
    this.byRule.clear();
  }

  /** The rows of each rule, by entity (the copy's own maps: read them, change them only through {@link save}). */
  forRules(rules: readonly string[]): Map<string, ReadonlyMap<string, TrackedAlert>> {
    this.load(rules);
    return new Map(rules.map((r) => [r, this.byRule.get(r)!]));
  }

  /** Reads the rows of the rules the copy does not hold yet, in one query. */
  private load(rules: readonly string[]): void {
    const missing = rules.filter((r) => !this.byRule.has(r));
    if (missing.length === 0) return;
    for (const r of missing) this.byRule.set(r, new Map());
    for (const t of this.repo.trackedForRules(missing)) this.byRule.get(t.alert.rule)!.set(t.alert.entity, t);
  }

  /**
   * The live rows (pending, firing or flapping) of `rules`, by rule then entity as the table's `trackedLive` orders
   * them: what a tick steps, every few seconds, without reading thousands of rows back in an incident.
   */
  live(rules: readonly string[]): TrackedAlert[] {
    return [...this.liveUnordered(rules)].sort((a, b) => compareText(a.alert.rule, b.alert.rule) || compareText(a.alert.entity, b.alert.entity));
  }

  /** The live rows of `rules` in no particular order (what a question about all of them, as the next deadline, needs). */
  *liveUnordered(rules: readonly string[]): Generator<TrackedAlert> {
    this.load(rules);
    for (const r of rules) for (const t of this.byRule.get(r)!.values()) if (isActive(t.alert) || t.alert.flapping) yield t;
  }

  /** Saves a row (`prev` as the copy or the table has it) to the table and the copy. */
  save(next: TrackedAlert, prev: TrackedAlert | undefined, now: number): void {
    this.write(now, () => this.repo.saveTracked(next, prev));
    this.byRule.get(next.alert.rule)?.set(next.alert.entity, next);
  }

  /**
   * Writes the moving columns of a row of the copy that was changed in place, its standing as stored
   * ({@link AlertRepo.saveMoving}; `annotations`: they changed too).
   */
  saveMoving(t: TrackedAlert, annotations: boolean, now: number): void {
    // As write() does, without a closure per call (thousands a poll in an incident).
    if (this.repo.writes() !== this.writes) this.byRule.clear();
    try {
      this.repo.saveMoving(t, annotations);
    } catch (err) {
      // The copy already holds what the table does not: a failed first write of a call bumped no revision, so the
      // rollback that follows would leave the copy looking current.
      this.byRule.clear();
      throw err;
    }
    this.wrote(now);
  }

  /** Deletes a row from the table and the copy. */
  remove(t: TrackedAlert, now: number): void {
    this.write(now, () => this.repo.remove(t.alert.fingerprint));
    this.byRule.get(t.alert.rule)?.delete(t.alert.entity);
  }

  /** Runs a write (`fn` returns false when it found nothing to change) and bumps the revision with the call's first real one. */
  private write(now: number, fn: () => boolean | void): void {
    // Someone wrote since the copy's last own write (nothing should, inside one engine call): trust nothing.
    if (this.repo.writes() !== this.writes) this.byRule.clear();
    // A call that changes no row leaves the revision (and the file) alone: a rollback of it has nothing to take back.
    if (fn() !== false) this.wrote(now);
    else this.writes = this.repo.writes();
  }

  /** After a write that changed a row: bumps the revision with the call's first, and notes the repository's count. */
  private wrote(now: number): void {
    if (!this.bumped) {
      this.revision = this.repo.bumpRevision(now);
      this.bumped = true;
    }
    this.writes = this.repo.writes();
  }
}

