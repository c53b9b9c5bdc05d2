/**
 * Replays stored history through a fresh engine whose alert state lives in its own in-memory store.
 *
 * How poll runs are rebuilt: history keeps one row per distinct (kind, entity, at) and the poll that stored it;
 * `poll_runs` keeps each run's time, outcome and row count. Each recorded run of a poll becomes one applyPoll at
 * its finish time, holding the history rows of that poll with `at` in (previous run, this run]. A reading the
 * service returned unchanged (same `at`) is not stored twice, so when a run stored fewer new rows than it
 * returned, the entity's last reading is carried forward (as the service sent it again); when it stored as many
 * as it returned, the run is complete and an entity missing from it is missing as it was live — absence and
 * `absent_for` replay exactly. Failed runs replay as failed polls (no state change; `source_down` counts them).
 * History of a poll without recorded runs in the range is grouped by timestamp, one applyPoll per distinct `at`,
 * and never reads as absence. Timers (`for`, keep_firing_for, flap settling) run exactly when due, after every run
 * of that same instant.
 */
import { AlertEngine, type AlertingSettings, type EngineResult, type SourceDownSettings } from '../alerts/engine.js';
import { runTimersUntil } from '../alerts/timers.js';
import { ManualClock } from '../clock.js';
import { silentLogger, type Logger } from '../log.js';
import type { AlertEvent, PollOutcome, Reading, ReadingKind } from '../model.js';
import type { RuleBase } from '../rules/schema.js';
import { openStore, type Store } from '../store/index.js';

/** What one replay produced. */
export interface ReplayResult {
  events: AlertEvent[];
  dataErrors: number;
  /** Poll runs replayed (recorded ones, failed included, plus timestamp groups). */
  runs: number;
  readings: number;
  /** How runs were rebuilt: from `poll_runs`, from timestamps, or both (different polls). */
  grouping: Array<'poll_runs' | 'timestamps'>;
  /** History rows after the last recorded run of their poll, not replayed. */
  unassigned: number;
}

/** Options of {@link replay}. */
export interface ReplayOptions {
  /** Where the history is; read only. */
  source: Pick<Store, 'db' | 'readings'>;
  rules: readonly RuleBase[];
  alerting: AlertingSettings;
  sourceDown: SourceDownSettings;
  from: number;
  to: number;
  /** Replay source_down too (off when one rule is asked for). */
  includeSourceDown: boolean;
  /** Called with replayed time and total time (ms) as the replay moves. */
  onProgress?: (done: number, total: number) => void;
  log?: Logger;
}

interface RunRow {
  poll: string;
  kind: string;
  started_at: number;
  finished_at: number;
  ok: number;
  error: string | null;
  error_reason: string | null;
  rows: number;
}

const POLL_KIND_OF: Record<ReadingKind, string> = {
  market: 'metrics',
  position: 'positions',
  asset: 'assets',
  holding: 'holdings',
  performance: 'performance',
  benchmark: 'benchmarks',
};

const key = (kind: string, entity: string) => `${kind}\u0000${entity}`;

/** Replays [from, to] of the source store's history; see the module comment for how runs are rebuilt. */
export function replay(opts: ReplayOptions): ReplayResult {
  const { source, from, to } = opts;
  const runs = source.db
    .prepare<[number, number], RunRow>(
      `SELECT poll, kind, started_at, finished_at, ok, error, error_reason, rows FROM poll_runs
       WHERE finished_at BETWEEN ? AND ? ORDER BY finished_at, id`,
    )
    .all(from, to);
  const runPolls = new Set(runs.map((r) => r.poll));

  const state = openStore(':memory:');
  const failures = new Map<string, number>();
  const seenBy = new Map<string, { poll: string; kind: ReadingKind; entity: string }>();
  const engine = new AlertEngine({
    store: state,
    rules: opts.rules,
    alerting: opts.alerting,
    sourceDown: opts.includeSourceDown ? opts.sourceDown : { ...opts.sourceDown, after: Number.MAX_SAFE_INTEGER },
    watchdog: { enabled: false, severity: 'info' },
    clock: new ManualClock(from),
    log: opts.log ?? silentLogger,
    sources: {
      history: {
        at: (k, e, t) => source.readings.historyAt(k, e, t),
        range: (k, e, f, t) => source.readings.historyRange(k, e, f, t),
      },
      lastSeenBy: (poll) => [...seenBy.values()].filter((s) => s.poll === poll),
      consecutiveFailures: (poll) => failures.get(poll) ?? 0,
    },
  });
  const tx = <T>(fn: () => T): T => state.transaction(fn);
  const result: ReplayResult = { events: [], dataErrors: 0, runs: 0, readings: 0, grouping: [], unassigned: 0 };
  const collect = (rs: EngineResult[]) => {
    for (const r of rs) {
      result.events.push(...r.events);
      result.dataErrors += r.dataErrors.length;
    }
  };

  const pending = new Map<string, Reading[]>();
  const carry = new Map<string, Map<string, Reading>>();
  const groups = new Map<string, { at: number; kind: string; readings: Reading[] }>();
  let nextRun = 0;
  let lastProgress = -Infinity;
  const total = Math.max(1, to - from);

  const apply = (outcome: PollOutcome) => {
    const now = outcome.finished_at;
    // Timers due before this run move first; one due exactly now waits until every run at this time is applied
    // (the next apply at a later time, or the end), because a poll at the deadline judges the alert itself — as
    // live, where the poll at the deadline cancels a pending alert whose condition is gone instead of firing it.
    collect(runTimersUntil(engine, now - 1, tx));
    collect([tx(() => engine.applyPoll(outcome, now))]);
    result.runs++;
    result.readings += outcome.readings.length;
    if (opts.onProgress && now - lastProgress >= total / 200) {
      lastProgress = now;
      opts.onProgress(Math.min(total, now - from), total);
    }
  };

  const applyRun = (run: RunRow) => {
    const base = { poll: run.poll, kind: run.kind, rejected: [], started_at: run.started_at, finished_at: run.finished_at };
    if (!run.ok) {
      failures.set(run.poll, (failures.get(run.poll) ?? 0) + 1);
      apply({ ...base, ok: false, readings: [], error: run.error ?? 'failed', errorReason: run.error_reason ?? 'unknown' });
      return;
    }
    failures.set(run.poll, 0);
    const fresh = new Map<string, Reading>();
    for (const r of pending.get(run.poll) ?? []) fresh.set(key(r.kind, r.entity), r);
    pending.delete(run.poll);
    const carried = carry.get(run.poll) ?? new Map<string, Reading>();
    const complete = fresh.size >= run.rows;
    const batch = complete ? fresh : new Map([...carried, ...fresh]);
    carry.set(run.poll, batch);
    for (const [k, r] of batch) seenBy.set(k, { poll: run.poll, kind: r.kind, entity: r.entity });
    apply({ ...base, ok: true, readings: [...batch.values()] });
  };

  const applyGroup = (poll: string) => {
    const g = groups.get(poll)!;
    groups.delete(poll);
    apply({ poll, kind: g.kind, ok: true, readings: g.readings, rejected: [], started_at: g.at, finished_at: g.at });
  };

  /** Applies every recorded run and timestamp group strictly before `t`, in time order. */
  const advance = (t: number) => {
    for (;;) {
      const run = nextRun < runs.length && runs[nextRun]!.finished_at < t ? runs[nextRun]! : undefined;
      let group: string | undefined;
      for (const [poll, g] of groups) if (g.at < t && (group === undefined || g.at < groups.get(group)!.at)) group = poll;
      if (!run && group === undefined) return;
      if (run && (group === undefined || run.finished_at <= groups.get(group)!.at)) {
        nextRun++;
        applyRun(run);
      } else applyGroup(group!);
    }
  };

  try {
    for (const r of source.readings.iterateHistory(from, to)) {
      advance(r.at);
      const reading: Reading = { kind: r.kind, entity: r.entity, at: r.at, labels: r.labels, fields: r.fields };
      if (runPolls.has(r.poll)) {
        const list = pending.get(r.poll) ?? [];
        list.push(reading);
        pending.set(r.poll, list);
      } else {
        const g = groups.get(r.poll);
        if (g && g.at !== r.at) applyGroup(r.poll);
        const cur = groups.get(r.poll) ?? { at: r.at, kind: POLL_KIND_OF[r.kind] ?? r.kind, readings: [] };
        cur.readings.push(reading);
        groups.set(r.poll, cur);
      }
    }
    advance(Infinity);
    collect(runTimersUntil(engine, to, tx));
    for (const list of pending.values()) result.unassigned += list.length;
    if (runs.length > 0) result.grouping.push('poll_runs');
    if (result.runs > runs.length) result.grouping.push('timestamps');
    opts.onProgress?.(total, total);
    return result;
  } finally {
    state.close();
  }
}
