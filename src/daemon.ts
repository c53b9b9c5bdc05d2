/**
 * The daemon: wires config → store → client → scheduler → poll runner → engine → outbox → dispatcher, with metrics
 * and the HTTP listener beside. Owns start, reload and stop; every part is built from the config and passed in.
 */
import type { Clock } from './clock.js';
import { systemClock } from './clock.js';
import { nextTurn } from './yielding.js';
import type { Config } from './config/load.js';
import { createLogger, type Logger } from './log.js';
import type { Alert, AlertEvent, MarketInfo, PollOutcome } from './model.js';
import { inShard, shardKey } from './source/shard.js';
import { startCheckpointer } from './store/checkpointer.js';
import { openStore, type Store } from './store/index.js';
import { StoreHealth } from './store/health.js';
import { Scheduler } from './scheduler/index.js';
import { runPoll } from './poll-runner.js';
import { FieldRejectionLog } from './source/field-log.js';
import { createDataServiceClient, type DataServiceClient } from './source/client.js';
import { runPoll as runPollKind } from './source/polls/registry.js';
import { DataServiceError } from './source/errors.js';
import { formatDuration } from './config/duration.js';
import { lookBack } from './rules/look-back.js';
import { createMetrics, type Metrics } from './metrics/index.js';
import { startHttpServer } from './http/server.js';
import { AlertEngine } from './alerts/engine.js';
import { createNotifications, type Notifications } from './notify/index.js';
import { createAlertRepo } from './alerts/repo.js';
import { alertPageView } from './alerts/page-data.js';
import { fetchAdoptable } from './notify/adopt.js';
import { silenceApi } from './silences/api.js';
import type { PollConfig } from './source/polls/schemas.js';
import type { Dispatcher } from 'undici';
import type { PollRunSummary } from './store/poll-runs.js';
import type { PollStatus } from './http/types.js';

/** How long a stop waits for polls in flight before it aborts them, ms. */
const STOP_POLL_GRACE_MS = 3_000;
/** How long start-up and a reload wait for the Alertmanager cluster's firing alerts before going on without them. */
const ADOPT_TIMEOUT_MS = 3_000;
/** How long a stop waits for deliveries in flight, ms. */
const STOP_NOTIFY_GRACE_MS = 3_000;

/** Options of {@link startDaemon}. */
export interface DaemonOptions {
  config: Config;
  clock?: Clock;
  log?: Logger;
  version?: string;
  /** Where the console notifier writes (stdout by default). */
  consoleOut?: { write(text: string): unknown; isTTY?: boolean };
  /** undici dispatcher for the data-service client (tests). */
  sourceDispatcher?: Dispatcher;
}

/** A running daemon. */
export interface Daemon {
  readonly config: Config;
  readonly store: Store;
  readonly metrics: Metrics;
  /** URL of the HTTP listener, when enabled. */
  readonly url: string | undefined;
  /** Runs one poll now (tests, the demo); resolves with its outcome. */
  pollNow(name: string): Promise<void>;
  /** Applies a new, already-validated config; keeps the store and the listener. A no-op once stopping. */
  reload(config: Config): Promise<void>;
  /** Finishes in-flight work (a reload in flight first), flushes what can be flushed, closes the DB. Idempotent. */
  stop(): Promise<void>;
}

/** Builds every part from `config` and starts polling. */
export async function startDaemon(opts: DaemonOptions): Promise<Daemon> {
  const clock = opts.clock ?? systemClock;
  let config = opts.config;
  const log =
    opts.log ?? createLogger({ level: config.log.level, secrets: () => config.secrets, base: { service: 'lookout' } });
  const store = openStore(config.storage.path, { clock, log });
  // WAL checkpoints in a worker thread: inside a poll's commit they held the event loop for up to half a second.
  const checkpointer = store.path === ':memory:' ? undefined : startCheckpointer(store.db, store.path, { log: log.child({ component: 'store' }), gate: store.gate });
  const metrics = createMetrics({ clock, ...(opts.version ? { version: opts.version } : {}) });
  const alertRepo = createAlertRepo(store.db);
  const health = new StoreHealth({
    now: () => clock.now(),
    onFailure: (operation, reason) => metrics.storeError(operation, reason),
    onChange: (s) => {
      metrics.setStoreWritable(s.writable);
      if (s.writable) log.info('store_writable', {});
      else log.error('store_not_writable', { reason: s.reason, message: s.message });
    },
  });

  let client: DataServiceClient = makeClient(config);
  const engine = makeEngine(config);
  const notifications: Notifications = createNotifications({
    db: store.db,
    gate: store.gate,
    config,
    ruleNotify: ruleNotify(config),
    alerts: alertRepo,
    clock,
    log: log.child({ component: 'notify' }),
    onResult: (notifier, outcome) => metrics.notification(notifier, outcome),
    onStoreError: (err) => health.failed('notify', err),
    secrets: () => config.secrets,
    ...(opts.consoleOut ? { stdout: opts.consoleOut } : {}),
  });
  const silences = notifications.silences;
  const dispatcher = notifications.dispatcher;
  let scheduler = new Scheduler({ log, onSkip: (poll) => metrics.pollSkipped(poll) });
  let ready = false;
  let stopping = false;
  let stopped: Promise<void> | undefined;
  // Reload and stop run one at a time, in the order asked.
  let lifecycle: Promise<unknown> = Promise.resolve();
  const serial = (fn: () => Promise<void>): Promise<void> => {
    const p = lifecycle.then(fn);
    lifecycle = p.catch(() => undefined);
    return p;
  };

  function makeClient(cfg: Config): DataServiceClient {
    return createDataServiceClient(cfg.source, { log: log.child({ component: 'source' }), ...(opts.sourceDispatcher ? { dispatcher: opts.sourceDispatcher } : {}) });
  }
  function makeEngine(cfg: Config): AlertEngine {
    return new AlertEngine({ store, clock, log: log.child({ component: 'alerts' }), ...engineSettings(cfg) });
  }

  // A market's token decimals never change: remembered across polls for rows that come without them.
  const marketInfo = new Map<string, MarketInfo>();
  const fetch = async (poll: PollConfig, signal: AbortSignal, now: number) => {
    // A poll's own deadline (default: every retry of a few pages) bounds the run; the outer signal is shutdown.
    const limit = poll.timeout ?? config.source.timeout * (config.source.retries + 1) * 4;
    const deadline = AbortSignal.timeout(limit);
    try {
      return await runPollKind(poll, {
        client,
        signal: AbortSignal.any([signal, deadline]),
        now,
        log: log.child({ poll: poll.name }),
        ...(config.shard ? { shard: config.shard } : {}),
        oraclePrice: config.source.oracle_price ?? 'auto',
        marketInfo,
      });
    } catch (err) {
      if (deadline.aborted && !signal.aborted) {
        throw new DataServiceError('E_SOURCE_TIMEOUT', `poll ${poll.name}: did not finish within ${formatDuration(limit)}`, {
          endpoint: poll.kind,
          reason: 'timeout',
          retryable: true,
          cause: err,
        });
      }
      throw err;
    }
  };

  const fieldLog = new FieldRejectionLog();
  const stages = () => ({
    fieldLog,
    clock,
    log,
    store,
    fetch,
    evaluate: (outcome: PollOutcome, now: number) => engine.applyPollSteps(outcome, now),
    enqueue: (events: unknown[], now: number) => notifications.outbox.enqueue(events as AlertEvent[], now),
    storeFailed: (poll: string, err: unknown) => {
      metrics.pollStoreFailed(poll);
      health.failed('poll', err);
    },
    after: async (outcome: PollOutcome, seconds: number, result: { durationMs: number; dataErrors: Array<{ rule: string; reason: string }> }) => {
      // The poll's transaction committed: the DB takes writes (again).
      health.succeeded();
      // Another poll's transaction may have opened meanwhile: the counts below read the database.
      while (store.gate.busy) await store.gate.idle();
      metrics.observePoll(outcome, seconds);
      metrics.observeEvaluation(result.durationMs / 1000);
      for (const d of result.dataErrors) metrics.dataError(d.rule, d.reason);
      // Counts of pending and firing alerts: the active ones are all it counts (not every alert ever stored).
      metrics.setAlerts(engine.repo.activeStates());
      metrics.setOutboxPending(dispatcher.pending());
      dispatcher.wake();
      // Last, with turns for the event loop between readings: 50,000 positions take a while to sum up. The first
      // slice in a turn of its own: this one had the commit and the counts above.
      if (outcome.ok) {
        await nextTurn();
        await metrics.setReadingsYielding(outcome.poll, outcome.readings, clock.now());
      }
    },
  });

  const jobs = (cfg: Config) =>
    cfg.polls
      .filter((p) => p.enabled)
      .map((p) => ({ name: p.name, cron: p.cron, run: async (signal: AbortSignal) => void (await runPoll(p, signal, stages())) }));

  // Timers that move without a poll: for/keep_firing_for, the watchdog; and housekeeping. Each waits for a poll's open
  // transaction (the store's gate) and then runs at once; a timer that comes round while its last run still waits is skipped.
  const whenIdle = (fn: () => void) => {
    let waiting = false;
    return () => {
      if (waiting) return;
      if (!store.gate.busy) return fn();
      waiting = true;
      void store.gate.exclusive(() => {
        waiting = false;
        if (store.db.open) fn();
      });
    };
  };
  const tick = whenIdle(() => {
    if (stopping) return;
    try {
      const now = clock.now();
      const result = store.transaction(() => {
        const r = engine.tick(now);
        notifications.outbox.enqueue(r.events, now);
        return r;
      });
      if (result.events.length) {
        metrics.setAlerts(engine.repo.activeStates());
        dispatcher.wake();
      }
      metrics.setOutboxPending(dispatcher.pending());
    } catch (err) {
      health.failed('tick', err);
      log.error('tick_failed', { err });
    }
  });
  const prune = whenIdle(() => {
    try {
      const before = clock.now() - config.storage.retention;
      const r = store.prune(before);
      const events = alertRepo.pruneEvents(before);
      const deliveries = dispatcher.deliveries.prune(before);
      const muted = silences.prune(before);
      if (r.readings || r.pollRuns || events) log.info('pruned', { readings: r.readings, poll_runs: r.pollRuns, alert_events: events, deliveries, silences: muted });
    } catch (err) {
      health.failed('prune', err);
      log.error('prune_failed', { err });
    }
  });
  // Full-resolution history older than raw_retention becomes 5-minute buckets, and the rows of hours that are over are
  // sealed into chunks, a few thousand rows a turn with the event loop free in between (at SPEC §8 about 330 rows a
  // second arrive; each turn handles up to 10,000 of each).
  let downsampling = false;
  const downsample = async () => {
    if (downsampling) return;
    downsampling = true;
    try {
      const before = clock.now() - config.storage.raw_retention;
      let rows = 0;
      for (let turn = 0; turn < 5 && !stopping && store.db.open; turn++) {
        while (store.gate.busy) await store.gate.idle();
        if (stopping || !store.db.open) break;
        const r = store.readings.downsample(before, { batchSize: 2_000, maxRows: 2_000 });
        rows += r.rows;
        // Full-resolution rows of hours that are over go into one chunk per entity and hour — once the rules no longer
        // look back into them: a rule's look-back (apy_jump's value `window` ago, every market every poll) stays a
        // point read of the current rows, not the decoding of a sealed hour (~44 µs a market).
        while (store.gate.busy) await store.gate.idle();
        if (stopping || !store.db.open) break;
        const sealed = store.readings.sealHistory(clock.now() - lookBack(config.rules.map((x) => x.rule)), { batchSize: 2_000, maxRows: 2_000 });
        if (r.rows < 2_000 && r.sealed < 2_000 && sealed < 2_000) break;
        await new Promise((res) => setImmediate(res));
      }
      if (rows > 0) log.debug('downsampled', { rows });
    } catch (err) {
      health.failed('prune', err);
      log.error('downsample_failed', { err });
    } finally {
      downsampling = false;
    }
  };
  // Before the first poll: take over what another replica had firing for entities this one owns now (SPEC §8).
  const adopt = async (cfg: Config) => {
    const urls = [...new Set(Object.values(cfg.notifiers).flatMap((n) => (n.type === 'alertmanager' ? n.urls : [])))];
    if (urls.length === 0) return;
    try {
      const found = await fetchAdoptable({ urls, timeoutMs: ADOPT_TIMEOUT_MS });
      for (const f of found.failed) log.warn('adopt_peer_failed', { peer: f.peer, reason: f.reason, hint: 'alerts firing there are not taken over; their for starts again' });
      if (found.candidates.length === 0) return;
      const taken = await store.gate.exclusive(() => store.transaction(() => engine.adopt(found.candidates, clock.now())));
      if (taken.length) {
        log.info('alerts_adopted', { count: taken.length });
        metrics.setAlerts(engine.repo.activeStates());
      }
    } catch (err) {
      log.warn('adopt_failed', { err });
    }
  };
  const serve = () =>
    startHttpServer({
      listen: config.server.listen,
      ...(config.server.token ? { token: config.server.token } : {}),
      allowedHosts: () => config.server.allowed_hosts,
      metrics,
      log: log.child({ component: 'http' }),
      ready: () => readiness(ready, store, health),
      exclusive: (fn) => store.gate.exclusive(fn),
      alerts: () => engine.alerts().map(apiAlert),
      polls: () => store.polls.lastAll().map(apiPoll),
      rules: () => config.rules,
      silences: silenceApi(silences),
      alertPage: (fingerprint: string, range: string) =>
        alertPageView(
          {
            db: store.db,
            readings: store.readings,
            alertRepo,
            rules: () => config.rules.map((r) => r.rule),
            silences: () => silences.list({ active: true }),
            ...(opts.version ? { version: opts.version } : {}),
          },
          fingerprint,
          range,
          clock.now(),
        ),
      ...(opts.version ? { version: opts.version } : {}),
      clock,
    });
  let http: Awaited<ReturnType<typeof startHttpServer>> | undefined;
  try {
    http = config.server.enabled ? await serve() : undefined;
  } catch (err) {
    // The listener could not start (e.g. the port is taken): release what is open, so the process can exit.
    await notifications.close(0).catch(() => undefined);
    await client.close().catch(() => undefined);
    await checkpointer?.stop();
    store.close();
    throw err;
  }
  // Timers only once start-up can no longer fail: a live interval would keep a failed process from exiting.
  let tickTimer = setInterval(tick, config.alerting.tick);
  // Hourly, or every tenth of the retention when that is shorter, so a short retention keeps the DB level.
  const pruneTimer = setInterval(prune, Math.max(1_000, Math.min(3_600_000, config.storage.retention / 10)));
  pruneTimer.unref();
  const downsampleTimer = setInterval(() => void downsample(), Math.max(1_000, Math.min(10_000, config.storage.raw_retention / 10)));
  downsampleTimer.unref();

  dispatcher.start();
  prune();
  await adopt(config);
  scheduler.start(jobs(config));
  ready = true;
  log.info('started', { polls: config.polls.length, rules: config.rules.length, url: http?.url, db: store.path });

  return {
    get config() {
      return config;
    },
    store,
    metrics,
    url: http?.url,
    pollNow: (name: string) => scheduler.trigger(name),
    reload(next: Config) {
      return serial(async () => {
        if (stopping) return;
        log.info('reloading', { file: next.file });
        await scheduler.stop();
        await client.close();
        // A stop that came in while the old polls wound down wins: it closes what is left.
        if (stopping) return log.info('reload_abandoned', { reason: 'stopping' });
        const fixed = restartOnly(config, next);
        if (fixed.length) log.warn('reload_needs_restart', { keys: fixed, note: 'these settings keep their running values until lookout restarts' });
        const removed = config.polls.filter((p) => !next.polls.some((q) => q.name === p.name));
        for (const p of removed) metrics.forgetPoll(p.name);
        config = next;
        client = makeClient(config);
        engine.reload(engineSettings(config));
        notifications.reload(config, ruleNotify(config));
        scheduler = new Scheduler({ log, onSkip: (poll) => metrics.pollSkipped(poll) });
        clearInterval(tickTimer);
        tickTimer = setInterval(tick, config.alerting.tick);
        dispatcher.wake();
        await adopt(config);
        scheduler.start(jobs(config));
        metrics.setAlerts(engine.repo.activeStates());
        log.info('reloaded', { polls: config.polls.length, rules: config.rules.length });
      });
    },
    stop() {
      if (stopped) return stopped;
      stopping = true;
      ready = false;
      clearInterval(tickTimer);
      clearInterval(pruneTimer);
      clearInterval(downsampleTimer);
      // After any reload in flight: it must not start a scheduler on a closed store.
      // Bounded to fit `docker stop`'s 10 s before its SIGKILL: a poll cut short is not recorded and runs again at start,
      // a message cut short stays in the outbox and goes out (same dedup key) after the restart.
      stopped = serial(async () => {
        await scheduler.stop({ graceMs: STOP_POLL_GRACE_MS });
        await notifications.close(STOP_NOTIFY_GRACE_MS);
        await client.close();
        await http?.close();
        await checkpointer?.stop();
        store.close();
        log.info('stopped', {});
      });
      return stopped;
    },
  };
}

/** /readyz: starting; the DB locked right now (a short probe); or the last write failed (a full disk shows only in writes). */
function readiness(started: boolean, store: Store, health: StoreHealth): { ok: boolean; reason?: string } {
  if (!started) return { ok: false, reason: 'starting' };
  if (!store.writable()) return { ok: false, reason: 'database is not writable' };
  const h = health.state();
  if (!h.writable) return { ok: false, reason: `database is not writable: ${h.message} (since ${new Date(h.since ?? 0).toISOString()}; polls fail until a write succeeds)` };
  return { ok: true };
}

/** Settings a reload cannot apply (the store, the listener, the logger are built once); names only, never values. */
function restartOnly(old: Config, next: Config): string[] {
  const keys: Array<[string, unknown, unknown]> = [
    ['storage.path', old.storage.path, next.storage.path],
    ['server.listen', old.server.listen, next.server.listen],
    ['server.enabled', old.server.enabled, next.server.enabled],
    ['server.token', old.server.token, next.server.token],
    ['log.level', old.log.level, next.log.level],
  ];
  return keys.filter(([, a, b]) => a !== b).map(([k]) => k);
}

function engineSettings(cfg: Config) {
  const shard = cfg.shard;
  return {
    rules: cfg.rules.map((r) => r.rule),
    alerting: cfg.alerting,
    sourceDown: cfg.source_down,
    watchdog: cfg.watchdog,
    owns: (a: Pick<Alert, 'entity' | 'labels'>) => inShard(shardKey(a), shard),
  };
}

function ruleNotify(cfg: Config): Map<string, readonly string[]> {
  return new Map(cfg.rules.flatMap((r) => (r.rule.notify ? [[r.rule.name, r.rule.notify] as const] : [])));
}

function apiAlert(a: Alert) {
  return { ...a, since: a.state === 'firing' ? a.firing_since : a.state === 'pending' ? a.pending_since : a.resolved_at, last_notified: a.last_notified_at };
}

function apiPoll(p: PollRunSummary): PollStatus {
  return {
    name: p.poll,
    kind: p.kind,
    last_started_at: p.last.started_at,
    last_finished_at: p.last.finished_at,
    ok: p.last.ok,
    error: p.last_error,
    error_at: p.last_error_at,
    duration_ms: p.duration_ms,
    last_success_at: p.last_success_at,
    consecutive_failures: p.consecutive_failures,
    rows: p.last.rows,
    rejected: p.last.rejected,
  };
}
