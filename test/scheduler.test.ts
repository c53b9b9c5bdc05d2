/** The poll scheduler: a poll never overlaps with itself, runs once at start, and stop() winds in-flight runs down. */
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../src/log.js';
import { Scheduler, type Job } from '../src/scheduler/index.js';

/** A cron that does not fire while a test runs (midnight of 1 January), so only trigger() and start() run jobs. */
const NEVER = '0 0 1 1 *';

/** A promise and the function that resolves it. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Resolves when `signal` aborts. */
function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
}

/** A run body that waits for `gate`, or for the abort of stop() so a failed test cannot leave it hanging. */
const gated = (gate: { promise: Promise<void> }) => (signal: AbortSignal) => Promise.race([gate.promise, aborted(signal)]);

/** One macrotask hop: work after it happens only if its caller is awaited, not just started. */
const hop = () => new Promise<void>((r) => setImmediate(r));

/** A job that records each run and its signal, and whose run is `body`. */
function job(name: string, body: (signal: AbortSignal) => Promise<void>): Job & { runs: number; signals: AbortSignal[] } {
  const j = {
    name,
    cron: NEVER,
    runs: 0,
    signals: [] as AbortSignal[],
    run: (signal: AbortSignal) => {
      j.runs++;
      j.signals.push(signal);
      return body(signal);
    },
  };
  return j;
}

const schedulers: Scheduler[] = [];
/** A scheduler with a log captured as parsed lines and the onSkip calls recorded. */
function scheduler(): { s: Scheduler; logs: { level: string; msg: string; poll?: string }[]; skips: string[] } {
  const logs: { level: string; msg: string; poll?: string }[] = [];
  const skips: string[] = [];
  const s = new Scheduler({ log: createLogger({ level: 'debug', write: (l) => logs.push(JSON.parse(l)) }), onSkip: (name) => skips.push(name) });
  schedulers.push(s);
  return { s, logs, skips };
}

afterEach(async () => {
  await Promise.all(schedulers.splice(0).map((s) => s.stop({ graceMs: 0 })));
});

describe('overlap guard', () => {
  it('a trigger while a run is in flight is skipped and counted; after it ends, a trigger runs again', async () => {
    const { s, logs, skips } = scheduler();
    const gate = deferred();
    const j = job('markets', gated(gate));
    s.start([j], { runAtStart: false });
    expect(s.busy('markets')).toBe(false);

    const first = s.trigger('markets');
    expect(j.runs).toBe(1);
    expect(s.busy('markets')).toBe(true);
    const second = s.trigger('markets');
    const third = s.trigger('markets');
    expect(j.runs).toBe(1);
    expect(s.skipped('markets')).toBe(2);
    expect(skips).toEqual(['markets', 'markets']);
    expect(logs.filter((l) => l.msg === 'poll_skipped')).toEqual([
      expect.objectContaining({ level: 'warn', poll: 'markets' }),
      expect.objectContaining({ level: 'warn', poll: 'markets' }),
    ]);
    expect(s.busy('markets')).toBe(true);

    gate.resolve();
    await Promise.all([first, second, third]);
    expect(s.busy('markets')).toBe(false);
    expect(j.runs).toBe(1);

    await s.trigger('markets');
    expect(j.runs).toBe(2);
    expect(s.skipped('markets')).toBe(2);
    expect(skips).toHaveLength(2);
  });

  it('the guard is per job: one busy job does not hold another back', async () => {
    const { s } = scheduler();
    const gate = deferred();
    const slow = job('slow', gated(gate));
    const fast = job('fast', async () => {});
    s.start([slow, fast], { runAtStart: false });
    const pending = s.trigger('slow');
    await s.trigger('fast');
    await s.trigger('fast');
    expect(fast.runs).toBe(2);
    expect(s.skipped('fast')).toBe(0);
    expect(s.busy('slow')).toBe(true);
    gate.resolve();
    await pending;
  });

  // The second is a plain function that throws before it returns a promise: legal for Job.run, and once wedged the job.
  it.each<[string, (signal: AbortSignal) => Promise<void>]>([
    ['rejects', () => Promise.reject(new Error('source down'))],
    [
      'throws before returning a promise',
      () => {
        throw new Error('source down');
      },
    ],
  ])('a run that %s is logged and does not wedge the job', async (_name, body) => {
    const { s, logs } = scheduler();
    const j = job('markets', body);
    s.start([j], { runAtStart: false });
    await s.trigger('markets');
    expect(logs.filter((l) => l.msg === 'job_failed')).toEqual([expect.objectContaining({ level: 'error', poll: 'markets' })]);
    expect(s.busy('markets')).toBe(false);
    await s.trigger('markets');
    expect(j.runs).toBe(2);
    expect(s.skipped('markets')).toBe(0);
  });

  it('scheduling two jobs with one name is refused', () => {
    const { s } = scheduler();
    expect(() => s.start([job('a', async () => {}), job('a', async () => {})])).toThrow("job 'a' is scheduled twice");
  });
});

describe('start', () => {
  it('runs each job once at start by default', async () => {
    const { s } = scheduler();
    const gate = deferred();
    const jobs = [job('markets', gated(gate)), job('positions', gated(gate))];
    s.start(jobs);
    expect(jobs.map((j) => j.runs)).toEqual([1, 1]);
    expect(jobs.map((j) => s.busy(j.name))).toEqual([true, true]);
    expect(s.skipped('markets') + s.skipped('positions')).toBe(0);
    gate.resolve();
    await Promise.all(jobs.map((j) => s.trigger(j.name)));
  });

  it('runs nothing at start with runAtStart: false', () => {
    const { s } = scheduler();
    const jobs = [job('markets', async () => {}), job('positions', async () => {})];
    s.start(jobs, { runAtStart: false });
    expect(jobs.map((j) => j.runs)).toEqual([0, 0]);
    expect(jobs.map((j) => s.busy(j.name))).toEqual([false, false]);
  });
});

describe('stop', () => {
  it('past the grace, aborts the signal of an in-flight run and waits for the run to end; nothing runs after', async () => {
    const { s } = scheduler();
    let ended = false;
    const j = job('markets', async (signal) => {
      await aborted(signal);
      await hop();
      ended = true;
    });
    s.start([j]);
    expect(s.busy('markets')).toBe(true);
    await s.stop({ graceMs: 0 });
    expect(j.signals[0]!.aborted).toBe(true);
    expect((j.signals[0]!.reason as Error).message).toBe('lookout is stopping');
    expect(ended).toBe(true);
    expect(s.busy('markets')).toBe(false);

    await s.trigger('markets');
    expect(j.runs).toBe(1);
    expect(s.skipped('markets')).toBe(0);
  });

  it('a run that ends within the grace is awaited and not aborted', async () => {
    const { s } = scheduler();
    const gate = deferred();
    let ended = false;
    const j = job('markets', async () => {
      await gate.promise;
      await hop();
      ended = true;
    });
    s.start([j]);
    const stopping = s.stop({ graceMs: 60_000 });
    gate.resolve();
    await stopping;
    expect(ended).toBe(true);
    expect(j.signals[0]!.aborted).toBe(false);
    await s.trigger('markets');
    expect(j.runs).toBe(1);
  });
});
