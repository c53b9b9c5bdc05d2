/** One poll run end to end: fetch → validate → (one transaction, yielding between slices: store readings, record the run, evaluate rules, enqueue notifications) → metrics. */
import { channel } from 'node:diagnostics_channel';
import type { Clock } from './clock.js';
import { POLL_ROWS_CHANNEL } from './channels.js';
import type { Logger } from './log.js';
import type { PollOutcome, Reading } from './model.js';
import type { Store } from './store/index.js';
import type { PollConfig } from './source/polls/schemas.js';
import { failureReason } from './source/errors.js';
import type { FieldRejectionLog } from './source/field-log.js';
import { ROWS_PER_STEP, type Steps } from './yielding.js';

const pollRows = channel(POLL_ROWS_CHANNEL);

/** What the evaluation of one poll returns. */
export interface Evaluation {
  events: unknown[];
  durationMs: number;
  dataErrors: Array<{ rule: string; reason: string }>;
}

/** What a poll run needs from the rest of the daemon; each stage is replaceable in tests. */
export interface PollStages {
  clock: Clock;
  log: Logger;
  store: Store;
  /** Fetches and validates one poll's rows from the data service. */
  fetch(poll: PollConfig, signal: AbortSignal, now: number): Promise<{ readings: Reading[]; rejected: PollOutcome['rejected'] }>;
  /** Judges the outcome against the rules, as steps that may pause; runs inside the poll's transaction and returns what changed. */
  evaluate(outcome: PollOutcome, now: number): Steps<Evaluation>;
  /** Writes notifications for the events; runs inside the same transaction. */
  enqueue(events: unknown[], now: number): void;
  /** When the poll's transaction failed (database locked, disk full): count it; nothing of the poll was kept. */
  storeFailed?(poll: string, err: unknown): void;
  /** How long a slice of the poll's transaction may hold the event loop before it gives a turn, ms (default: {@link SLICE_MS}). */
  sliceMs?: number;
  /** Remembers logged field rejections across runs (one line per entity and field until the service changes what it sends). */
  fieldLog: FieldRejectionLog;
  /** After the commit: metrics, waking the dispatcher (awaited: it may give the event loop turns while it works). */
  after(outcome: PollOutcome, durationSeconds: number, result: { durationMs: number; dataErrors: Array<{ rule: string; reason: string }> }): void | Promise<void>;
}

/**
 * Runs one poll; never throws. A failed fetch is a failed outcome. A failed transaction (the database locked past its
 * busy timeout, a full disk) rolls back everything of the poll — readings, the run, alert changes, notifications — so
 * it too changes no alert; it is logged, counted through `storeFailed`, and returned as a failed outcome with reason
 * `store`, and the next run tries again.
 */
export async function runPoll(poll: PollConfig, signal: AbortSignal, s: PollStages): Promise<PollOutcome> {
  const started = s.clock.now();
  const t0 = performance.now();
  let outcome: PollOutcome;
  try {
    const data = await s.fetch(poll, signal, started);
    // Every alert says which poll its data came from, so `source_down` of that poll can inhibit it.
    for (const r of data.readings) r.labels.poll = poll.name;
    // Before the transaction: a large poll gives V8 its compilers back for its own store and evaluation (src/compiler-tiers.ts).
    if (pollRows.hasSubscribers) pollRows.publish({ poll: poll.name, rows: data.readings.length });
    outcome = { poll: poll.name, kind: poll.kind, ok: true, readings: data.readings, rejected: data.rejected, started_at: started, finished_at: s.clock.now() };
  } catch (err) {
    outcome = {
      poll: poll.name,
      kind: poll.kind,
      ok: false,
      readings: [],
      rejected: [],
      error: err instanceof Error ? err.message : String(err),
      errorReason: signal.aborted ? 'aborted' : failureReason(err),
      started_at: started,
      finished_at: s.clock.now(),
    };
  }
  if (signal.aborted && !outcome.ok) {
    // Shutting down: an aborted run is not a failure of the source and must not count towards source_down.
    s.log.info('poll', { poll: poll.name, outcome: 'aborted', duration_ms: Math.round(performance.now() - t0) });
    return outcome;
  }
  const now = s.clock.now();
  let result: Evaluation;
  try {
    // One transaction (SPEC §4), held open across turns of the event loop: /metrics, /healthz and deliveries are served
    // between its slices; whatever else touches the database waits for it at the store's gate.
    result = await s.store.transactionYielding(function* () {
      s.store.polls.record(outcome);
      if (outcome.ok) {
        yield* s.store.readings.savePollSteps(poll.name, outcome.readings, now);
        yield* forgetVanished(s.store, poll.name, outcome);
      }
      const r = yield* s.evaluate(outcome, now);
      // A storm (10,000 markets crossing at once) is 10,000 outbox rows: written a slice at a time too.
      for (let i = 0; i < r.events.length; i += ROWS_PER_STEP) {
        if (i > 0) yield;
        s.enqueue(r.events.slice(i, i + ROWS_PER_STEP), now);
      }
      return r;
    }, s.sliceMs === undefined ? {} : { sliceMs: s.sliceMs });
  } catch (err) {
    // A run that had already failed at the source keeps saying so: both failures are in the one error.
    const error = `${outcome.ok ? '' : `${outcome.error}; then `}could not store the poll: ${err instanceof Error ? err.message : String(err)}`;
    s.storeFailed?.(poll.name, err);
    s.log.error('poll', {
      poll: poll.name,
      kind: poll.kind,
      rows: outcome.readings.length,
      duration_ms: Math.round(performance.now() - t0),
      outcome: 'store_failed',
      error,
      reason: 'store',
    });
    return { ...outcome, ok: false, readings: [], rejected: [], error, errorReason: 'store' };
  }
  const seconds = (performance.now() - t0) / 1000;
  await s.after(outcome, seconds, result);
  const line = {
    poll: poll.name,
    kind: poll.kind,
    rows: outcome.readings.length,
    rejected: outcome.rejected.filter((r) => r.field === undefined).length,
    fields_rejected: outcome.rejected.filter((r) => r.field !== undefined).length,
    duration_ms: Math.round(seconds * 1000),
    eval_ms: Math.round(result.durationMs),
    events: result.events.length,
    outcome: outcome.ok ? 'ok' : 'failed',
    ...(outcome.ok ? {} : { error: outcome.error, reason: outcome.errorReason }),
  };
  if (outcome.ok) s.log.info('poll', line);
  else s.log.warn('poll', line);
  const rows = outcome.rejected.filter((r) => r.field === undefined);
  for (const r of rows.slice(0, 20)) s.log.warn('row_rejected', { poll: poll.name, reason: r.reason, entity: r.entity, detail: r.detail });
  if (outcome.ok) {
    const news = s.fieldLog.news(poll.name, outcome.rejected, entitiesOf(outcome.readings));
    for (const r of news) s.log.warn('field_rejected', { poll: poll.name, entity: r.entity, field: r.field, reason: r.reason, detail: r.detail });
  }
  return outcome;
}

/** The readings' entities, one at a time (a positions poll has 50,000; they are often not needed at all). */
function* entitiesOf(readings: readonly Reading[]): Generator<string> {
  for (const r of readings) yield r.entity;
}

/** Drops `latest` rows of entities this poll no longer returns (rejected rows are kept: neither present nor absent). */
function* forgetVanished(store: Store, poll: string, outcome: PollOutcome): Steps<void> {
  const rejected = new Set(outcome.rejected.map((r) => r.entity).filter(Boolean));
  // The poll's save just now knows which entities it returned (by their ids): only the others are named.
  yield* store.readings.forgetVanishedSteps(poll, (e) => rejected.has(e.entity));
}
