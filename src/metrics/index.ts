/**
 * lookout's Prometheus metrics (SPEC §5), on a registry of its own (never prom-client's global one).
 * Gauges hold their values between scrapes, so a scrape only serializes: it recomputes nothing.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Alert, PollOutcome, Reading } from '../model.js';
import type { Clock } from '../clock.js';
import { SeriesTracker, type SeriesBatch } from './series.js';
import { ROWS_PER_STEP, runSync, runYielding, type Steps } from '../yielding.js';
import { MarketFamily, MarketTable, type MarketRow } from './market-table.js';
import {
  POSITION_LABELS,
  addBenchmark,
  addPosition,
  marketRow,
  positionBatch,
  type PositionGroup,
  type PositionGroupIndex,
  type ReadingGauges,
} from './readings.js';

/** Options of {@link createMetrics}. */
export interface MetricsOptions {
  /** Registry to register on; a new one by default. */
  registry?: Registry;
  /** Accepted for symmetry with the other parts; unused today (times come from each outcome and the `now` of setReadings). */
  clock?: Clock;
  /** Exported as `lookout_build_info{version}`. */
  version?: string;
  /** Process and Node.js metrics of prom-client (default true). */
  processMetrics?: boolean;
}

/** What the daemon reports; every method is cheap and never throws on odd input. */
export interface Metrics {
  /** The registry holding every lookout metric. */
  readonly registry: Registry;
  /** Content-Type of {@link Metrics.scrape}'s text. */
  readonly contentType: string;
  /** Records one run of a poll: duration, errors, last success, source up/down, rejected rows. */
  observePoll(outcome: PollOutcome, durationSeconds: number): void;
  /** After a successful poll: replaces the market, position and benchmark series this poll exports. */
  setReadings(poll: string, readings: readonly Reading[], now: number): void;
  /** {@link Metrics.setReadings} giving the event loop turns while it reads the readings; the series change at once at the end. */
  setReadingsYielding(poll: string, readings: readonly Reading[], now: number, sliceMs?: number): Promise<void>;
  /** Drops every series of a poll that left the config. */
  forgetPoll(poll: string): void;
  /** Mirrors the current alerts as `lookout_alerts{rule,severity,state}` counts (pending and firing). */
  setAlerts(alerts: ReadonlyArray<Pick<Alert, 'rule' | 'severity' | 'state'>>): void;
  /** Records how long one evaluation of the rules took. */
  observeEvaluation(seconds: number): void;
  /** Counts one notification attempt's outcome (`sent`, `failed`, `retry`, `dropped`, ...). */
  notification(notifier: string, outcome: string): void;
  /** Sets the number of outbox entries waiting for delivery. */
  setOutboxPending(n: number): void;
  /** Counts a scheduled run skipped because the previous run of the poll was still going (overlap guard). */
  pollSkipped(poll: string): void;
  /** Counts a reading a rule could not judge (e.g. utilization out of range). */
  dataError(rule: string, reason: string): void;
  /** Counts a poll whose results could not be stored (`lookout_poll_errors_total{reason="store"}`); the source's gauges stay as they are. */
  pollStoreFailed(poll: string): void;
  /** Counts a write to the database that failed (`lookout_store_errors_total{operation,reason}`: reason full, readonly, locked, io, ...). */
  storeError(operation: string, reason: string): void;
  /** Whether the database takes writes (`lookout_store_writable`, 1 or 0). */
  setStoreWritable(writable: boolean): void;
  /** The exposition text of the registry. */
  scrape(): Promise<string>;
  /**
   * The same text as bytes, in chunks to be sent in order: the market families' kept bytes as they are (no copy, no
   * join of 12 MB per scrape), the small live part around them encoded afresh. The families' bytes are lent: call
   * `release` once they are sent (or the response ended); until then no render writes into them.
   */
  exposition(): Promise<Exposition>;
}

/** The exposition as byte chunks, and the release of the families' bytes it holds ({@link Metrics.exposition}). */
export interface Exposition {
  chunks: Buffer[];
  release(): void;
}

/** Creates lookout's metrics on their own registry. */
/**
 * A data error's reason as a label value: its kind, without the values it quotes. "utilization 1.2 outside [0, 1]"
 * and "borrow_apy not a number: high" would make one series per value the service ever sent (unbounded
 * cardinality, and the service's text on /metrics); the log line and the alert keep the full reason.
 */
export function reasonLabel(reason: string): string {
  return reason
    .replace(/:\s.*$/s, '')
    .replace(/-?\d[\w.:+-]*/g, 'N')
    .slice(0, 120);
}

export function createMetrics(opts: MetricsOptions = {}): Metrics {
  const registry = opts.registry ?? new Registry();
  const registers = [registry];
  if (opts.processMetrics !== false) {
    collectDefaultMetrics({ register: registry });
    // These gauges break the `_total` naming convention (promtool check metrics flags them); the
    // per-type `nodejs_active_handles{type}` etc. stay and sum to the same numbers.
    for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) {
      registry.removeSingleMetric(name);
    }
  }

  const gauge = (name: string, help: string, labelNames: readonly string[] = []) =>
    new Gauge({ name, help, labelNames: [...labelNames], registers });
  const counter = (name: string, help: string, labelNames: readonly string[]) =>
    new Counter({ name, help, labelNames: [...labelNames], registers });

  if (opts.version !== undefined) {
    gauge('lookout_build_info', 'Always 1; the version label says which lookout is running.', ['version']).set(
      { version: opts.version },
      1,
    );
  }

  const markets = new MarketTable(registers);
  const g: ReadingGauges = {
    positions: gauge('lookout_positions', 'Number of positions, by chain, protocol and verified.', POSITION_LABELS),
    positionsValue: gauge('lookout_positions_value_usd', 'Summed value of the positions, in USD.', POSITION_LABELS),
    benchmarkApy: gauge(
      'lookout_benchmark_apy_ratio',
      "Benchmark APY of a network and code on its newest day, as a fraction, per window and component.",
      ['network', 'code', 'window', 'component'],
    ),
    benchmarkDay: gauge(
      'lookout_benchmark_latest_day_timestamp_seconds',
      'Unix time of the newest benchmark day (00:00 UTC) of a network and code.',
      ['network', 'code'],
    ),
    benchmarkStale: gauge('lookout_benchmark_stale', '1 when the newest benchmark day is flagged stale, else 0.', ['network', 'code']),
    benchmarkComplete: gauge('lookout_benchmark_complete', '1 when the newest benchmark day is complete, else 0.', ['network', 'code']),
  };

  const pollDuration = new Histogram({
    name: 'lookout_poll_duration_seconds',
    help: 'Duration of one poll run, failed runs included.',
    labelNames: ['poll'],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers,
  });
  const pollErrors = counter('lookout_poll_errors_total', 'Failed poll runs, by failure reason.', ['poll', 'reason']);
  const lastSuccess = gauge(
    'lookout_poll_last_success_timestamp_seconds',
    'Unix time at which the last successful run of a poll finished.',
    ['poll'],
  );
  const sourceUp = gauge('lookout_source_up', "1 when a poll's last run succeeded, 0 from a failed run until the next success.", [
    'poll',
  ]);
  const rowsRejected = counter(
    'lookout_rows_rejected_total',
    'Rows of the data service that failed validation and were skipped, by reason.',
    ['poll', 'reason'],
  );
  const fieldsRejected = counter(
    'lookout_fields_rejected_total',
    'Fields of the data service that could not be read and were treated as unknown (the row was kept), by field and reason.',
    ['poll', 'field', 'reason'],
  );
  const alertsGauge = gauge('lookout_alerts', 'Alerts in each state, like Prometheus ALERTS (pending, firing).', [
    'rule',
    'severity',
    'state',
  ]);
  const notifications = counter('lookout_notifications_total', 'Notification attempts, by notifier and outcome.', [
    'notifier',
    'outcome',
  ]);
  const outboxPending = gauge('lookout_outbox_pending', 'Notifications in the outbox waiting for delivery.');
  const evaluation = new Histogram({
    name: 'lookout_rule_evaluation_duration_seconds',
    help: 'Duration of one evaluation of the rules against a poll outcome.',
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers,
  });
  const dataErrors = counter(
    'lookout_data_errors_total',
    'Readings a rule could not judge (a data error, not an alert), by rule and reason.',
    ['rule', 'reason'],
  );
  const pollSkipped = counter(
    'lookout_poll_skipped_total',
    'Scheduled poll runs skipped because the previous run was still going.',
    ['poll'],
  );
  outboxPending.set(0);
  const storeErrors = counter('lookout_store_errors_total', 'Writes to the database that failed, by operation (poll, notify, tick, prune) and reason (full, readonly, locked, io, corrupt, other).', [
    'operation',
    'reason',
  ]);
  const storeWritable = gauge('lookout_store_writable', '1 while the database takes writes; 0 from a failed write until a poll commits again.');
  storeWritable.set(1);

  const tracker = new SeriesTracker();
  const positionsByPoll = new Map<string, Map<string, PositionGroup>>();
  const POSITIONS_OWNER = '\u0000positions';
  const reasonsByPoll = new Map<string, { errors: Set<string>; rejected: Set<string>; fields: Map<string, { field: string; reason: string }> }>();
  const reasonsOf = (poll: string) => {
    let r = reasonsByPoll.get(poll);
    if (!r) reasonsByPoll.set(poll, (r = { errors: new Set(), rejected: new Set(), fields: new Map() }));
    return r;
  };
  /** Counts a failed run of `poll`, remembering the reason so that forgetPoll can remove its series. */
  const countPollError = (poll: string, reason: string) => {
    pollErrors.inc({ poll, reason });
    reasonsOf(poll).errors.add(reason);
  };
  let alertCombos = new Map<string, { rule: string; severity: string; state: string }>();

  /** Rows and groups built from the readings step by step (pausing between readings), then swapped in at once. */
  function* setReadingsSteps(poll: string, readings: readonly Reading[], now: number): Steps<void> {
    const batch: SeriesBatch = new Map();
    const rows: MarketRow[] = [];
    const groups = new Map<string, PositionGroup>();
    const groupIndex: PositionGroupIndex = new Map();
    let n = 0;
    // By index: a generator's for...of makes an iterator result per reading.
    for (let k = 0; k < readings.length; k++) {
      const r = readings[k]!;
      if (++n % ROWS_PER_STEP === 0) yield;
      if (r.kind === 'market') rows.push(marketRow(r, now));
      else if (r.kind === 'position') addPosition(groups, r, groupIndex);
      else if (r.kind === 'benchmark') addBenchmark(batch, g, r);
    }
    // Matched in steps, swapped in at once: a scrape meanwhile sees the last poll's table or this one's, whole.
    yield* markets.replaceSteps(poll, rows);
    tracker.replace(poll, batch);
    const hadPositions = positionsByPoll.has(poll);
    if (groups.size > 0) positionsByPoll.set(poll, groups);
    else positionsByPoll.delete(poll);
    if (groups.size > 0 || hadPositions) tracker.replace(POSITIONS_OWNER, positionBatch(g, positionsByPoll.values()));
    // Last, after the swap: the market families' text for the scrapes to come, rendered here rather than by the first of them.
    yield* markets.render();
  }

  return {
    registry,
    contentType: registry.contentType,

    observePoll(outcome, durationSeconds) {
      const poll = outcome.poll;
      if (Number.isFinite(durationSeconds) && durationSeconds >= 0) pollDuration.observe({ poll }, durationSeconds);
      if (outcome.ok) {
        lastSuccess.set({ poll }, outcome.finished_at / 1000);
        sourceUp.set({ poll }, 1);
      } else {
        countPollError(poll, outcome.errorReason || 'unknown');
        sourceUp.set({ poll }, 0);
      }
      const byReason = new Map<string, number>();
      for (const r of outcome.rejected) {
        if (r.field !== undefined) {
          const labels = { field: r.field, reason: r.reason || 'unknown' };
          fieldsRejected.inc({ poll, ...labels });
          reasonsOf(poll).fields.set(`${labels.field}\u0000${labels.reason}`, labels);
          continue;
        }
        byReason.set(r.reason || 'unknown', (byReason.get(r.reason || 'unknown') ?? 0) + 1);
      }
      for (const [reason, n] of byReason) {
        rowsRejected.inc({ poll, reason }, n);
        reasonsOf(poll).rejected.add(reason);
      }
    },

    setReadings(poll, readings, now) {
      runSync(setReadingsSteps(poll, readings, now));
    },

    setReadingsYielding(poll, readings, now, sliceMs) {
      return runYielding(setReadingsSteps(poll, readings, now), sliceMs);
    },

    forgetPoll(poll) {
      markets.forget(poll);
      tracker.forget(poll);
      if (positionsByPoll.delete(poll)) tracker.replace(POSITIONS_OWNER, positionBatch(g, positionsByPoll.values()));
      for (const m of [pollDuration, lastSuccess, sourceUp, pollSkipped]) m.remove({ poll });
      const reasons = reasonsByPoll.get(poll);
      for (const reason of reasons?.errors ?? []) pollErrors.remove({ poll, reason });
      for (const reason of reasons?.rejected ?? []) rowsRejected.remove({ poll, reason });
      for (const labels of reasons?.fields.values() ?? []) fieldsRejected.remove({ poll, ...labels });
      reasonsByPoll.delete(poll);
    },

    setAlerts(alerts) {
      const counts = new Map<string, { rule: string; severity: string; state: string; n: number }>();
      for (const a of alerts) {
        if (a.state !== 'pending' && a.state !== 'firing') continue;
        const key = `${a.rule}\u0000${a.severity}\u0000${a.state}`;
        const c = counts.get(key);
        if (c) c.n += 1;
        else counts.set(key, { rule: a.rule, severity: a.severity, state: a.state, n: 1 });
      }
      for (const [key, c] of alertCombos) if (!counts.has(key)) alertsGauge.set(c, 0);
      const next = new Map<string, { rule: string; severity: string; state: string }>();
      for (const [key, c] of counts) {
        const labels = { rule: c.rule, severity: c.severity, state: c.state };
        alertsGauge.set(labels, c.n);
        next.set(key, labels);
      }
      for (const [key, c] of alertCombos) if (!next.has(key)) next.set(key, c);
      alertCombos = next;
    },

    observeEvaluation(seconds) {
      if (Number.isFinite(seconds) && seconds >= 0) evaluation.observe(seconds);
    },

    notification(notifier, outcome) {
      notifications.inc({ notifier, outcome });
    },

    setOutboxPending(n) {
      if (Number.isFinite(n)) outboxPending.set(n);
    },

    pollSkipped(poll) {
      pollSkipped.inc({ poll });
    },

    dataError(rule, reason) {
      dataErrors.inc({ rule, reason: reasonLabel(reason) });
    },

    pollStoreFailed(poll) {
      countPollError(poll, 'store');
    },

    storeError(operation, reason) {
      storeErrors.inc({ operation, reason });
    },

    setStoreWritable(writable) {
      storeWritable.set(writable ? 1 : 0);
    },

    async scrape() {
      const e = await exposition(registry);
      try {
        return Buffer.concat(e.chunks).toString('utf8');
      } finally {
        e.release();
      }
    },

    exposition() {
      return exposition(registry);
    },
  };
}


type StringFormatter = { getMetricsAsString?: (m: unknown) => Promise<string> };

/**
 * The registry's text as byte chunks, with the market families' kept bytes in place. Same text as
 * `registry.metrics()` (families joined by a blank line, one newline at the end); falls back to it if
 * prom-client's per-metric formatter ever goes away.
 */
async function exposition(registry: Registry): Promise<Exposition> {
  const format = (registry as unknown as StringFormatter).getMetricsAsString;
  if (typeof format !== 'function' || registry.contentType !== Registry.PROMETHEUS_CONTENT_TYPE) return { chunks: [Buffer.from(await registry.metrics(), 'utf8')], release: () => {} };
  const chunks: Buffer[] = [];
  const releases: (() => void)[] = [];
  const release = () => {
    for (const r of releases.splice(0)) r();
  };
  try {
    const all = registry.getMetricsAsArray() as unknown[];
    // The market families brought up to the table first, in slices, then all lent at once below (no turn between them:
    // one table version in every family). A few passes while polls keep changing the table; whatever is still older
    // then is rendered at once by `lend`.
    const families = all.filter((m): m is MarketFamily => m instanceof MarketFamily);
    for (let pass = 0; pass < 3 && families.some((f) => !f.fresh); pass++) for (const f of families) await f.freshen();
    // Lent, all at once: a poll's render may run while the other metrics are formatted (awaits) or the socket sends.
    const bodies = new Map<MarketFamily, Buffer>();
    for (const f of families) {
      const lent = f.lend();
      releases.push(lent.release);
      bodies.set(f, lent.body);
    }
    let text = '';
    for (const [i, m] of all.entries()) {
      if (i > 0) text += '\n\n';
      if (m instanceof MarketFamily) {
        if (text !== '') chunks.push(Buffer.from(text, 'utf8'));
        chunks.push(bodies.get(m)!);
        text = '';
      } else {
        text += await format.call(registry, m);
      }
    }
    chunks.push(Buffer.from(text + '\n', 'utf8'));
    return { chunks, release };
  } catch (err) {
    release();
    throw err;
  }
}
