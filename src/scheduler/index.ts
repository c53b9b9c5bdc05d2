/**
 * Runs the `polls:` list on their cron schedules: once at start, then on schedule, never overlapping a poll with
 * itself.
 *
 * The expressions are node-cron's syntax (SPEC §2; `lookout check` and the config load validate them with node-cron
 * itself, src/config/cross-check.ts). The timers are croner's: node-cron 4 formats the time through
 * `Intl.DateTimeFormat` at every tick, and ICU's date data cost the daemon watching 200 markets ~7 MB of RSS (B6s,
 * docs/performance.md "B6s: undici without its index, no ICU, the young generation by the responses"); croner reads
 * local time with `Date`'s own getters when no timezone is given. src/scheduler/cron.ts hands croner node-cron's
 * reading of each expression, and test/scheduler-cron.test.ts holds croner's next runs to node-cron's. Where they
 * differ (a schedule in a DST change of a zone with one; a tick the event loop held past its time, which croner runs
 * late and node-cron skipped) is said there and in that section.
 */
import type { Cron } from 'croner';
import type { Logger } from '../log.js';
import { cronJob } from './cron.js';

/** One scheduled job: `run` gets a signal that aborts when the scheduler stops. */
export interface Job {
  name: string;
  cron: string;
  run(signal: AbortSignal): Promise<void>;
}

/** Options of {@link Scheduler}. */
export interface SchedulerOptions {
  log: Logger;
  /** Called when a tick is skipped because the previous run of that job is still going. */
  onSkip?: (job: string) => void;
}

interface Entry {
  job: Job;
  task: Cron;
  running: Promise<void> | null;
  controller: AbortController;
}

/** The poll scheduler. `start` runs every job once at once, then on its cron. */
export class Scheduler {
  private entries = new Map<string, Entry>();
  private readonly skippedCounts = new Map<string, number>();
  private stopping = false;

  constructor(private readonly opts: SchedulerOptions) {}

  /** Schedules `jobs` and runs each once now (unless `runAtStart` is false). */
  start(jobs: readonly Job[], { runAtStart = true }: { runAtStart?: boolean } = {}): void {
    this.stopping = false;
    for (const job of jobs) {
      if (this.entries.has(job.name)) throw new Error(`job '${job.name}' is scheduled twice`);
      const entry: Entry = {
        job,
        running: null,
        controller: new AbortController(),
        // No croner `name`: croner keeps named jobs in a process-wide list and refuses a name twice, where two
        // daemons in one process (the tests) may share one. A tick that throws (a log or metric hook in trigger) is
        // logged, not left to end the process.
        task: cronJob(
          job.cron,
          () => void this.trigger(job.name),
          (err) => this.opts.log.error('job_failed', { poll: job.name, err }),
        ),
      };
      this.entries.set(job.name, entry);
      entry.task.resume();
      if (runAtStart) void this.trigger(job.name);
    }
  }

  /** Runs a job now unless it is already running (then the tick is skipped and counted). Resolves when that run ends. */
  trigger(name: string): Promise<void> {
    const entry = this.entries.get(name);
    if (!entry || this.stopping) return Promise.resolve();
    if (entry.running) {
      this.skippedCounts.set(name, (this.skippedCounts.get(name) ?? 0) + 1);
      this.opts.log.warn('poll_skipped', { poll: name, reason: 'previous run still in progress' });
      this.opts.onSkip?.(name);
      return entry.running;
    }
    // Cleared in .finally, which runs after the assignment below even when `run` throws synchronously.
    const run = (async () => {
      try {
        await entry.job.run(entry.controller.signal);
      } catch (err) {
        this.opts.log.error('job_failed', { poll: name, err });
      }
    })().finally(() => {
      entry.running = null;
    });
    entry.running = run;
    return run;
  }

  /** How many ticks of `name` were skipped because a run was still going. */
  skipped(name: string): number {
    return this.skippedCounts.get(name) ?? 0;
  }

  /** True while a run of `name` is in flight. */
  busy(name: string): boolean {
    return Boolean(this.entries.get(name)?.running);
  }

  /**
   * Stops scheduling, lets in-flight runs finish for up to `graceMs`, then aborts them and waits for them to
   * wind down. Resolves when no run is left.
   */
  async stop({ graceMs = 10_000 }: { graceMs?: number } = {}): Promise<void> {
    this.stopping = true;
    const entries = [...this.entries.values()];
    this.entries = new Map();
    for (const e of entries) e.task.stop();
    const inFlight = entries.map((e) => e.running).filter((r): r is Promise<void> => r !== null);
    if (inFlight.length === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<'timeout'>((res) => (timer = setTimeout(() => res('timeout'), graceMs)));
    const all = Promise.all(inFlight).then(() => 'done' as const);
    const first = await Promise.race([all, graceOver]);
    clearTimeout(timer);
    if (first === 'timeout') {
      const cut = entries.filter((e) => e.running !== null);
      this.opts.log.warn('stop_aborting_polls', { polls: cut.map((e) => e.job.name), grace_ms: graceMs });
      for (const e of entries) e.controller.abort(new Error('lookout is stopping'));
      await all;
    }
  }
}
