/**
 * Poll runs: one row per run in `poll_runs`, and a running summary per poll in `poll_status`
 * (last success, last error, consecutive failures) that survives the pruning of old runs.
 */
import type Database from 'better-sqlite3';
import type { PollOutcome } from '../model.js';

/** One recorded run of one poll. */
export interface PollRun {
  id: number;
  poll: string;
  kind: string;
  started_at: number;
  finished_at: number;
  duration_ms: number;
  ok: boolean;
  error: string | null;
  error_reason: string | null;
  /** Readings the run produced. */
  rows: number;
  /** Rows the service sent that failed validation, and how many per reason. */
  rejected: number;
  rejected_reasons: Record<string, number>;
}

/** Where a poll stands: for the status page, /api and metrics after a restart. */
export interface PollRunSummary {
  poll: string;
  kind: string;
  last: PollRun;
  /** finished_at of the newest successful run, null if none ever succeeded. */
  last_success_at: number | null;
  /** The newest failure (kept after later successes, for the status page), null if none. */
  last_error: string | null;
  last_error_reason: string | null;
  last_error_at: number | null;
  /** Failed runs since the last success; 0 once a run succeeds. */
  consecutive_failures: number;
  /** Duration of the last run, ms. */
  duration_ms: number;
  /** Runs and failed runs ever recorded (not reduced by pruning). */
  runs: number;
  failures: number;
}

/** Repository of poll runs. Every method runs in the caller's transaction when called inside one. */
export interface PollRunsRepo {
  /** Records a run and updates its poll's summary atomically; returns the run's id. */
  record(outcome: PollOutcome): number;
  /** The newest run of a poll. */
  last(poll: string): PollRun | undefined;
  /** The newest `limit` runs of a poll, newest first. */
  recent(poll: string, limit?: number): PollRun[];
  /** One summary per poll ever recorded, ordered by poll name. */
  lastAll(): PollRunSummary[];
  consecutiveFailures(poll: string): number;
  /** Deletes runs that started before `olderThan`, except each poll's newest; returns the rows deleted. */
  prune(olderThan: number): number;
  /** Forgets a poll entirely (its runs and summary), e.g. after it left the config. Returns the runs deleted. */
  forget(poll: string): number;
}

/** A `poll_runs` row as stored. */
export interface RunRow {
  id: number;
  poll: string;
  kind: string;
  started_at: number;
  finished_at: number;
  ok: number;
  error: string | null;
  error_reason: string | null;
  rows: number;
  rejected: number;
  rejected_reasons: string | null;
}
interface StatusRow {
  poll: string;
  kind: string;
  last_success_at: number | null;
  last_error: string | null;
  last_error_reason: string | null;
  last_error_at: number | null;
  consecutive_failures: number;
  runs: number;
  failures: number;
}

const runCols = `r.id, r.poll, r.kind, r.started_at, r.finished_at, r.ok, r.error, r.error_reason, r.rows, r.rejected, r.rejected_reasons`;

const toRun = (r: RunRow): PollRun => ({
  id: r.id,
  poll: r.poll,
  kind: r.kind,
  started_at: r.started_at,
  finished_at: r.finished_at,
  duration_ms: r.finished_at - r.started_at,
  ok: r.ok === 1,
  error: r.error,
  error_reason: r.error_reason,
  rows: r.rows,
  rejected: r.rejected,
  rejected_reasons: r.rejected_reasons ? (JSON.parse(r.rejected_reasons) as Record<string, number>) : {},
});

function reasonCounts(outcome: PollOutcome): string | null {
  if (outcome.rejected.length === 0) return null;
  const counts: Record<string, number> = {};
  for (const r of outcome.rejected) counts[r.reason] = (counts[r.reason] ?? 0) + 1;
  return JSON.stringify(counts);
}

/** Builds the poll-runs repository over an open, migrated database; statements are prepared once here. */
export function createPollRunsRepo(db: Database.Database): PollRunsRepo {
  const insertRun = db.prepare(
    `INSERT INTO poll_runs (poll, kind, started_at, finished_at, ok, error, error_reason, rows, rejected, rejected_reasons)
     VALUES (@poll, @kind, @started_at, @finished_at, @ok, @error, @error_reason, @rows, @rejected, @rejected_reasons)`,
  );
  const upsertStatus = db.prepare(
    `INSERT INTO poll_status (poll, kind, last_run_id, last_success_at, last_error, last_error_reason, last_error_at,
       consecutive_failures, runs, failures)
     VALUES (@poll, @kind, @id, iif(@ok, @finished_at, NULL), iif(@ok, NULL, @error), iif(@ok, NULL, @error_reason),
       iif(@ok, NULL, @finished_at), iif(@ok, 0, 1), 1, iif(@ok, 0, 1))
     ON CONFLICT (poll) DO UPDATE SET
       kind = excluded.kind,
       last_run_id = excluded.last_run_id,
       last_success_at = iif(@ok, excluded.last_success_at, last_success_at),
       last_error = iif(@ok, last_error, excluded.last_error),
       last_error_reason = iif(@ok, last_error_reason, excluded.last_error_reason),
       last_error_at = iif(@ok, last_error_at, excluded.last_error_at),
       consecutive_failures = iif(@ok, 0, consecutive_failures + 1),
       runs = runs + 1,
       failures = failures + iif(@ok, 0, 1)`,
  );
  const lastRun = db.prepare<[string], RunRow>(
    `SELECT ${runCols} FROM poll_runs r WHERE r.poll = ? ORDER BY r.id DESC LIMIT 1`,
  );
  const recentRuns = db.prepare<[string, number], RunRow>(
    `SELECT ${runCols} FROM poll_runs r WHERE r.poll = ? ORDER BY r.id DESC LIMIT ?`,
  );
  const allStatus = db.prepare<[], StatusRow & RunRow>(
    `SELECT s.poll, s.kind, s.last_success_at, s.last_error, s.last_error_reason, s.last_error_at,
            s.consecutive_failures, s.runs, s.failures, ${runCols.replace('r.poll, r.kind, ', '')}
     FROM poll_status s JOIN poll_runs r ON r.id = s.last_run_id ORDER BY s.poll`,
  );
  const failures = db.prepare<[string], { n: number }>(
    `SELECT consecutive_failures AS n FROM poll_status WHERE poll = ?`,
  );
  const pruneRuns = db.prepare(
    `DELETE FROM poll_runs WHERE started_at < ? AND id NOT IN (SELECT last_run_id FROM poll_status)`,
  );
  const forgetRuns = db.prepare(`DELETE FROM poll_runs WHERE poll = ?`);
  const forgetStatus = db.prepare(`DELETE FROM poll_status WHERE poll = ?`);

  const record = db.transaction((o: PollOutcome): number => {
    const row = {
      poll: o.poll,
      kind: o.kind,
      started_at: o.started_at,
      finished_at: o.finished_at,
      ok: o.ok ? 1 : 0,
      error: o.ok ? null : (o.error ?? 'failed'),
      error_reason: o.ok ? null : (o.errorReason ?? 'unknown'),
      rows: o.readings.length,
      rejected: o.rejected.length,
      rejected_reasons: reasonCounts(o),
    };
    const id = Number(insertRun.run(row).lastInsertRowid);
    upsertStatus.run({ ...row, id });
    return id;
  });
  const forget = db.transaction((poll: string): number => {
    forgetStatus.run(poll);
    return forgetRuns.run(poll).changes;
  });

  return {
    record: (outcome) => record(outcome),
    last: (poll) => {
      const row = lastRun.get(poll);
      return row ? toRun(row) : undefined;
    },
    recent: (poll, limit = 20) => recentRuns.all(poll, limit).map(toRun),
    lastAll: () =>
      allStatus.all().map((s) => {
        const last = toRun({ ...s, poll: s.poll, kind: s.kind });
        return {
          poll: s.poll,
          kind: s.kind,
          last,
          last_success_at: s.last_success_at,
          last_error: s.last_error,
          last_error_reason: s.last_error_reason,
          last_error_at: s.last_error_at,
          consecutive_failures: s.consecutive_failures,
          duration_ms: last.duration_ms,
          runs: s.runs,
          failures: s.failures,
        };
      }),
    consecutiveFailures: (poll) => failures.get(poll)?.n ?? 0,
    prune: (olderThan) => pruneRuns.run(olderThan).changes,
    forget: (poll) => forget(poll),
  };
}
