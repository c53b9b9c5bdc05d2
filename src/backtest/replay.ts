/**
 * Replays stored history through a fresh engine whose alert state lives in its own in-memory store.
 *
 * How poll runs are rebuilt: history keeps a row each time a poll returned an entity differently from the last
 * time it did, stamped with the poll's time (`seen_at`); `poll_runs` keeps each run's time, outcome and row count.
 * Each recorded run of a poll becomes one applyPoll at its finish time, holding the history rows that run stored
 * (the rows of that poll seen at or just after its finish, before its next run). A reading returned unchanged is
 * not stored twice, so when a run stored fewer rows than it returned, the entity's last reading is carried forward
 * (as the service sent it again); when it stored as many as it returned, the run is complete and an entity missing
 * from it is missing as it was live — absence and `absent_for` replay exactly. Rules that look back (apy_jump,
 * stale_benchmark) see history as it was when the run was stored, never a row stored later. Failed runs replay as
 * failed polls (no state change; `source_down` counts them). History of a poll without recorded runs in the range
 * is grouped by the time it was stored, one applyPoll per distinct time, and never reads as absence. Timers (`for`,
 * keep_firing_for, flap settling) run exactly when due, after every run of that same instant.
 *
 * History older than `storage.raw_retention` is kept as 5-minute buckets. That part of the range is replayed first, one
 * applyPoll per poll and bucket at the bucket's end, each entity's reading carrying the bucket's extremes so a rule
 * judges the worst of them for its direction (src/rules/rule-kind.ts `worst`). Buckets say nothing of runs that failed
 * or of an entity missing from a run: over bucketed time readings are carried forward and `source_down` is not replayed.
 * `resolution` says which part of the range used which.
 */
import { AlertEngine, type AlertingSettings, type EngineResult, type SourceDownSettings } from '../alerts/engine.js';
import { runTimersUntil } from '../alerts/timers.js';
import { ManualClock } from '../clock.js';
import { silentLogger, type Logger } from '../log.js';
import type { AlertEvent, PollOutcome, Reading, ReadingKind } from '../model.js';
import { judgedFields, readingFields } from '../rules/reading-fields.js';
import type { RuleBase } from '../rules/schema.js';
import { openScratchStore, type Store } from '../store/index.js';
import { BUCKET_MS } from '../store/buckets.js';
import { Slots, type Batch, type Slot } from './batch.js';
import type { RunRow as StoredRunRow } from '../store/poll-runs.js';

/** What one replay produced. */
export interface ReplayResult {
  events: AlertEvent[];
  dataErrors: number;
  /** Poll runs replayed (recorded ones, failed included, plus timestamp groups). */
  runs: number;
  readings: number;
  /** How runs were rebuilt: from `poll_runs`, from timestamps, or both (different polls). */
  grouping: Array<'poll_runs' | 'timestamps'>;
  /** History rows stored too long after their run finished to be replayed with it. */
  unassigned: number;
  /** The parts of the range by the resolution history had there, in time order. */
  resolution: ResolutionPart[];
}

/** A part of a replayed range and the resolution its history was kept at. */
export interface ResolutionPart {
  from: number;
  to: number;
  resolution: 'raw' | '5m buckets';
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
  /**
   * Which fields of each stored reading are decoded: those the rules read (default: src/rules/reading-fields.ts; the
   * replay judges exactly as with every field), or `all`.
   */
  decode?: 'rules' | 'all';
}

type RunRow = Omit<StoredRunRow, 'id' | 'rejected' | 'rejected_reasons'>;

const POLL_KIND_OF: Record<ReadingKind, string> = {
  market: 'metrics',
  position: 'positions',
  asset: 'assets',
  holding: 'holdings',
  performance: 'performance',
  benchmark: 'benchmarks',
};


/** How long after its run's finish a row may be stamped: the poll runner stores the rows right after it. */
const SEEN_SLACK = 1_000;

/** Replays [from, to] of the source store's history; see the module comment for how runs are rebuilt. */
export function replay(opts: ReplayOptions): ReplayResult {
  const { source, from, to } = opts;
  const fields = opts.decode === 'all' ? undefined : readingFields(opts.rules);
  // Full-resolution readings are decoded with what the rules judge by; the fields only annotations read, for a reading
  // that is described (an alert's: the engine asks, sources.described). Buckets are read with every field the rules read.
  const judged = fields && judgedFields(opts.rules);
  const describe = judged && judged.size < fields.size ? fields : undefined;
  // Where full-resolution history begins; before it, 5-minute buckets (runs there have no rows left to replay).
  const rawFrom = Math.max(from, source.readings.rawSince() ?? to + 1);
  const runs = source.db
    .prepare<[number, number], RunRow>(
      `SELECT poll, kind, started_at, finished_at, ok, error, error_reason, rows FROM poll_runs
       WHERE finished_at BETWEEN ? AND ? ORDER BY finished_at, id`,
    )
    .all(rawFrom, to);
  const runPolls = new Set(runs.map((r) => r.poll));
  const runsOf = new Map<string, number[]>();
  runs.forEach((r, i) => runsOf.set(r.poll, [...(runsOf.get(r.poll) ?? []), i]));
  /** The index of the run of `poll` that stored a row seen at `seen`: its last run finished by then. */
  const runOf = (poll: string, seen: number): number | undefined => {
    const list = runsOf.get(poll) ?? [];
    let lo = 0;
    let hi = list.length - 1;
    let found: number | undefined;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (runs[list[mid]!]!.finished_at <= seen) {
        found = list[mid];
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  };
  /** History as it was when the run being applied was stored. */
  let asOf = from;

  const state = openScratchStore();
  const failures = new Map<string, number>();
  /** Which entities each poll returned, by a slot per entity (src/backtest/batch.ts). */
  const slots = new Slots();
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
        at: (k, e, t) => source.readings.historyAt(k, e, t, asOf),
        range: (k, e, f, t) => source.readings.historyRange(k, e, f, t, asOf),
      },
      lastSeenBy: (poll) => slots.lastSeenBy(poll),
      consecutiveFailures: (poll) => failures.get(poll) ?? 0,
      ...(describe ? { described: (r: Reading) => source.readings.described(r, describe) } : {}),
    },
  });
  const tx = <T>(fn: () => T): T => state.transaction(fn);
  const result: ReplayResult = { events: [], dataErrors: 0, runs: 0, readings: 0, grouping: [], unassigned: 0, resolution: [] };
  const collect = (rs: EngineResult[]) => {
    for (const r of rs) {
      result.events.push(...r.events);
      result.dataErrors += r.dataErrors.length;
    }
  };

  const pending = new Map<number, { readings: Reading[]; vanished: Slot[]; seen: number }>();
  /** Each poll's last batch: what carries forward to a run that stored fewer rows than it returned. */
  const carry = new Map<string, Batch>();
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

  const applyRun = (run: RunRow, index: number) => {
    const base = { poll: run.poll, kind: run.kind, rejected: [], started_at: run.started_at, finished_at: run.finished_at };
    if (!run.ok) {
      failures.set(run.poll, (failures.get(run.poll) ?? 0) + 1);
      apply({ ...base, ok: false, readings: [], error: run.error ?? 'failed', errorReason: run.error_reason ?? 'unknown' });
      return;
    }
    failures.set(run.poll, 0);
    const stored = pending.get(index);
    pending.delete(index);
    const fresh = slots.batchOf(stored?.readings ?? []);
    asOf = Math.max(run.finished_at, stored?.seen ?? run.finished_at);
    // A complete run is its own batch; otherwise entities the run no longer returned are marked in history, and what
    // is left of the last batch carries forward unchanged.
    const batch = fresh.readings.length >= run.rows ? fresh : slots.merge(carry.get(run.poll), stored?.vanished ?? [], fresh);
    carry.set(run.poll, batch);
    slots.see(run.poll, batch);
    apply({ ...base, ok: true, readings: batch.readings });
  };

  const applyGroup = (poll: string) => {
    const g = groups.get(poll)!;
    groups.delete(poll);
    asOf = g.at;
    apply({ poll, kind: g.kind, ok: true, readings: g.readings, rejected: [], started_at: g.at, finished_at: g.at });
  };

  /**
   * Applies, in time order, every recorded run whose rows are all read (the reading position `t` is past its
   * finish + SEEN_SLACK) and every timestamp group stored before `t`.
   */
  const advance = (t: number) => {
    for (;;) {
      const run = nextRun < runs.length ? runs[nextRun]! : undefined;
      let group: string | undefined;
      for (const [poll, g] of groups) if (g.at < t && (group === undefined || g.at < groups.get(group)!.at)) group = poll;
      if (run && (group === undefined || run.finished_at <= groups.get(group)!.at)) {
        if (!(run.finished_at + SEEN_SLACK < t)) return;
        applyRun(run, nextRun++);
      } else if (group !== undefined) applyGroup(group);
      else return;
    }
  };

  /** Replays the buckets of [from, rawFrom): per poll and bucket one run at the bucket's end, readings carried forward. */
  const replayBuckets = () => {
    let start: number | undefined;
    let batch = new Map<string, Reading[]>();
    const flush = () => {
      if (start === undefined) return;
      const at = Math.min(start + BUCKET_MS, to);
      asOf = at;
      for (const [poll, readings] of [...batch].sort(([a], [b]) => a.localeCompare(b))) {
        const carried = slots.merge(carry.get(poll), [], slots.batchOf(readings));
        carry.set(poll, carried);
        slots.see(poll, carried);
        const kind = POLL_KIND_OF[readings[0]!.kind] ?? readings[0]!.kind;
        collect(runTimersUntil(engine, at - 1, tx));
        apply({ poll, kind, ok: true, readings: carried.readings, rejected: [], started_at: at, finished_at: at });
      }
      batch = new Map();
    };
    let any = false;
    for (const r of source.readings.iterateBuckets(from - BUCKET_MS + 1, Math.min(to, rawFrom - 1), fields ? { fields } : {})) {
      if (r.bucket!.start !== start) {
        flush();
        start = r.bucket!.start;
      }
      any = true;
      // The bucket's reading itself, as over raw time (its poll and seen_at ride along unread): a rest copy that left
      // them out was a generic copy per bucket.
      const reading: Reading = r;
      const list = batch.get(r.poll);
      if (list) list.push(reading);
      else batch.set(r.poll, [reading]);
    }
    flush();
    if (any) result.resolution.push({ from, to: Math.min(to, rawFrom), resolution: '5m buckets' });
  };

  try {
    replayBuckets();
    if (rawFrom <= to) result.resolution.push({ from: result.resolution.length ? rawFrom : from, to, resolution: 'raw' });
    // A run's rows come together, in storage order: what was worked out for a row holds for the next of the same poll
    // and storage time (nothing is due before a time already advanced to, and the same run stored both).
    let advancedTo: number | undefined;
    let runPoll: string | undefined;
    let runSeen: number | undefined;
    let runIndex: number | undefined;
    const runAt = (poll: string, seen: number): number | undefined => {
      if (poll !== runPoll || seen !== runSeen) {
        runPoll = poll;
        runSeen = seen;
        runIndex = runOf(poll, seen);
      }
      return runIndex;
    };
    for (const r of source.readings.iterateHistory(rawFrom, to, { vanished: true, ...(describe ? { fields: judged, describe } : fields ? { fields } : {}) })) {
      if (r.seen_at !== advancedTo) {
        advance(r.seen_at);
        advancedTo = r.seen_at;
      }
      if (r.vanished) {
        const i = runPolls.has(r.poll) ? runAt(r.poll, r.seen_at) : undefined;
        if (i !== undefined && i >= nextRun) {
          const p = pending.get(i) ?? { readings: [], vanished: [], seen: r.seen_at };
          p.vanished.push(slots.of(r.kind, r.entity));
          pending.set(i, p);
        }
        continue;
      }
      // The history reading itself (its poll and seen_at ride along unread): no copy of each of them.
      const reading: Reading = r;
      if (runPolls.has(r.poll)) {
        const i = runAt(r.poll, r.seen_at);
        // Stored by a run before the range: not part of it.
        if (i === undefined) continue;
        if (i < nextRun) {
          result.unassigned++; // stored more than SEEN_SLACK after its run finished, after the run was replayed
          continue;
        }
        let p = pending.get(i);
        if (p === undefined) pending.set(i, (p = { readings: [], vanished: [], seen: r.seen_at }));
        p.readings.push(reading);
        if (r.seen_at > p.seen) p.seen = r.seen_at;
      } else {
        const g = groups.get(r.poll);
        if (g && g.at !== r.seen_at) applyGroup(r.poll);
        const cur = groups.get(r.poll) ?? { at: r.seen_at, kind: POLL_KIND_OF[r.kind] ?? r.kind, readings: [] };
        cur.readings.push(reading);
        groups.set(r.poll, cur);
      }
    }
    advance(Infinity);
    collect(runTimersUntil(engine, to, tx));
    if (runs.length > 0) result.grouping.push('poll_runs');
    if (result.runs > runs.length) result.grouping.push('timestamps');
    opts.onProgress?.(total, total);
    return result;
  } finally {
    state.close();
  }
}
