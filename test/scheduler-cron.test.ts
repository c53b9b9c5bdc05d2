/**
 * A poll's cron expression is node-cron's syntax (SPEC §2) run on croner's timers (src/scheduler/cron.ts). node-cron is
 * the oracle here: for the forms its syntax has, croner as lookout sets it must name the very runs node-cron names;
 * the config's check gives node-cron's verdict; and a tick reads no ICU data (the point of the swap: B6s).
 */
import { validateDetailed, createTask } from 'node-cron';
import { afterEach, describe, expect, it } from 'vitest';
import { until } from './fixtures/daemon/harness.js';
import { createLogger } from '../src/log.js';
import { cronJob, cronProblem } from '../src/scheduler/cron.js';
import { Scheduler } from '../src/scheduler/index.js';
import { mulberry32 as rng } from '../src/simulator/random.js';

const zone = process.env.TZ;
afterEach(() => {
  if (zone === undefined) delete process.env.TZ;
  else process.env.TZ = zone;
});

/** Sets the process's time zone and checks it took (node reads TZ again when it is assigned). */
function inZone(tz: string, probe: Date, offsetMinutes: number): void {
  process.env.TZ = tz;
  expect(probe.getTimezoneOffset(), `TZ=${tz} in effect`).toBe(offsetMinutes);
}

/** What jobs whose function never throws handed to onError anyway: checked empty after each test. */
const unexpected: unknown[] = [];
const fail = (err: unknown) => void unexpected.push(err);
afterEach(() => {
  expect(unexpected.splice(0)).toEqual([]);
});

/** node-cron's next `n` runs from now and croner's (as lookout sets it) from the same second, as ISO strings. */
function bothNext(expr: string, n: number): { nodeCron: string[]; croner: string[] } {
  for (;;) {
    const before = Date.now();
    const task = createTask(expr, () => undefined);
    const nodeCron = task.getNextRuns(n).map((d) => d.toISOString());
    void task.destroy();
    // node-cron counts from its own `new Date()`: retried when a second boundary passed meanwhile.
    if (Math.floor(Date.now() / 1000) !== Math.floor(before / 1000)) continue;
    const job = cronJob(expr, () => undefined, fail);
    const croner = job.nextRuns(n, new Date(before)).map((d) => d.toISOString());
    job.stop();
    return { nodeCron, croner };
  }
}

/** A random field of [min, max] in one of node-cron's forms: *, a, a-b, a-b/k, * /k, a,b,c. */
function field(r: () => number, min: number, max: number): string {
  const v = () => min + Math.floor(r() * (max - min + 1));
  const form = Math.floor(r() * 6);
  if (form === 0) return '*';
  if (form === 1) return String(v());
  if (form === 5) return `*/${1 + Math.floor(r() * Math.min(15, max))}`;
  const [a, b] = [v(), v()].sort((x, y) => x - y);
  if (form === 2) return `${a}-${b}`;
  if (form === 3) return `${a}-${b}/${1 + Math.floor(r() * 5)}`;
  return [...new Set([v(), v(), v()])].sort((x, y) => x - y).join(',');
}

/** The forms SPEC's examples and users' schedules take, and node-cron's rarer ones. */
const FORMS = [
  '*/30 * * * * *',
  '*/5 * * * *',
  '0 * * * *',
  '0 0 1 1 *',
  '0 0 29 2 *',
  '30 2 * * *',
  '0 0 * * 1-5',
  '0 0 13 * 5',
  '0 0 1-7 * 1',
  '15,45 */2 * * *',
  '0 0 L * *',
  '0 0 * * 1#2',
  '0 0 * * 5L',
  '0 9 15W * *',
  '0 0 ? * MON',
  '0 0 1 JAN,JUL *',
  '0 0 * * 7',
  '0 10-20/3 * * *',
  '0 0 31 * *',
  '@daily',
  '@hourly',
  // Forms node-cron reads that croner would refuse as text: full names, a range that wraps, steps past the field.
  '0 0 * * monday',
  '0 0 * * Monday-Friday',
  '0 0 1 January *',
  '0 0 * * 5-1',
  '0 0 */32 * *',
  '0 0 * */13 *',
  '0 0 L,15 * *',
  '0 0 * * 1#2,3',
];

describe('cron expressions: node-cron syntax on croner timers', () => {
  it.each(FORMS)("croner names node-cron's next runs for %s", (expr) => {
    process.env.TZ = 'UTC';
    const { nodeCron, croner } = bothNext(expr, 30);
    expect(nodeCron).toHaveLength(30);
    expect(croner).toEqual(nodeCron);
  });

  it("croner names node-cron's next runs for 300 random expressions node-cron accepts", () => {
    process.env.TZ = 'UTC';
    const r = rng(20261127);
    let tried = 0;
    while (tried < 300) {
      const sec = r() < 0.5 ? `${field(r, 0, 59)} ` : '';
      // One of day of month, month and weekday restricted at most, so that every expression runs often enough.
      const days = ['*', '*', '*'];
      const which = Math.floor(r() * 4);
      const [lo, hi] = ([[1, 28], [1, 12], [0, 7]] as const)[which] ?? [0, 0];
      if (which < 3) days[which] = field(r, lo, hi);
      const expr = `${sec}${field(r, 0, 59)} ${field(r, 0, 23)} ${days.join(' ')}`;
      if (!validateDetailed(expr).valid) continue;
      tried++;
      const { nodeCron, croner } = bothNext(expr, 12);
      expect(croner, expr).toEqual(nodeCron);
    }
  });

  it("the config's check gives node-cron's verdict, field by field", () => {
    for (const ok of [...FORMS, '0 0 0 1 1 *']) expect(cronProblem(ok), ok).toBeUndefined();
    expect(cronProblem('61 * * * *')).toMatch(/^invalid cron expression '61 \* \* \* \*' \(minute: /);
    expect(cronProblem('0 0 30 2 *')).toMatch(/impossible day of month/);
    expect(cronProblem('5/5 * * * *')).toMatch(/^invalid cron expression/);
    expect(cronProblem('* * * *')).toMatch(/expected 5 or 6 fields/);
    // node-cron's second-to-last day croner cannot schedule: said by the check, not at start-up.
    expect(cronProblem('0 0 L-2 * *')).toMatch(/^cron expression '0 0 L-2 \* \*' cannot be scheduled/);
    // node-cron takes days that never come together; the poll would never run again: said by the check.
    expect(validateDetailed('0 0 1 * 1#3').valid).toBe(true);
    expect(cronProblem('0 0 1 * 1#3')).toMatch(/never runs/);
  });

  it("a tick that throws goes to onError and the job ticks on (croner alone would leave an unhandled rejection)", async () => {
    const errors: unknown[] = [];
    let ticks = 0;
    const job = cronJob(
      '* * * * * *',
      () => {
        ticks++;
        throw new Error(`tick ${ticks}`);
      },
      (err) => errors.push(err),
    );
    job.resume();
    try {
      await until('two ticks to throw', () => (errors.length >= 2 ? true : undefined), 10_000);
    } finally {
      job.stop();
    }
    expect(errors.map((e) => (e as Error).message).slice(0, 2)).toEqual(['tick 1', 'tick 2']);
  });

  it("the scheduler logs a tick that throws (its onSkip hook here) and goes on ticking", async () => {
    const logs: Record<string, unknown>[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const scheduler = new Scheduler({
      log: createLogger({ level: 'debug', write: (l) => logs.push(JSON.parse(l) as Record<string, unknown>) }),
      onSkip: () => {
        throw new Error('hook broke');
      },
    });
    try {
      // Runs at start and stays busy: each tick after is a skip, whose hook throws.
      scheduler.start([{ name: 'busy', cron: '* * * * * *', run: () => gate }]);
      const failed = () => logs.filter((l) => l.msg === 'job_failed' && l.poll === 'busy');
      await until('two failed ticks logged', () => (failed().length >= 2 ? true : undefined), 10_000);
      expect(JSON.stringify(failed()[0])).toContain('hook broke');
    } finally {
      release();
      await scheduler.stop();
    }
  });

  it('a tick the event loop held past its time runs late, once (node-cron skipped it)', async () => {
    const ticks: number[] = [];
    const job = cronJob('* * * * * *', () => void ticks.push(Date.now()), fail);
    job.resume();
    try {
      // Held across two seconds' ticks, to the middle of a second: croner's timer fires when the loop is free, for one
      // run, before the next second's tick.
      const held = Math.ceil((Date.now() + 2_200) / 1000) * 1000 + 500;
      while (Date.now() < held);
      const nextTick = held + 500;
      // Until the next second's own tick has come: the runs before it are those for the ticks the loop held.
      await until("the next second's tick", () => (ticks.some((t) => t >= nextTick) ? true : undefined), 5_000);
      expect(ticks.filter((t) => t < nextTick)).toHaveLength(1);
    } finally {
      job.stop();
    }
  });

  it("a daily poll whose time falls in the spring-forward gap runs that day at the gap's end (node-cron skips the day)", () => {
    inZone('Europe/Berlin', new Date('2027-03-29T12:00:00Z'), -120);
    const job = cronJob('30 2 * * *', () => undefined, fail);
    const runs = job.nextRuns(3, new Date('2027-03-26T12:00:00Z')).map((d) => d.toISOString());
    job.stop();
    // 27 March 02:30 CET; 28 March has no 02:30 (02:00 → 03:00 CEST): 03:00 CEST; then 29 March 02:30 CEST.
    expect(runs).toEqual(['2027-03-27T01:30:00.000Z', '2027-03-28T01:00:00.000Z', '2027-03-29T00:30:00.000Z']);
    // Interval schedules read the same either way across the change: every 30 minutes is every 30 minutes.
    const every = cronJob('0 */30 * * * *', () => undefined, fail);
    const around = every.nextRuns(4, new Date('2027-03-28T00:15:00Z')).map((d) => d.toISOString());
    every.stop();
    expect(around).toEqual(['2027-03-28T00:30:00.000Z', '2027-03-28T01:00:00.000Z', '2027-03-28T01:30:00.000Z', '2027-03-28T02:00:00.000Z']);
  });

  it("the scheduler's ticks make and use no Intl.DateTimeFormat (no ICU date data read)", async () => {
    const real = Intl.DateTimeFormat;
    const proto = real.prototype;
    const saved = { format: Object.getOwnPropertyDescriptor(proto, 'format')!, formatToParts: Object.getOwnPropertyDescriptor(proto, 'formatToParts')! };
    const toParts = proto.formatToParts;
    let made = 0;
    let used = 0;
    // Uses counted too: a library that made its formatter earlier in this process (node-cron caches one) still
    // formats with it at each tick.
    Object.defineProperty(proto, 'formatToParts', {
      ...saved.formatToParts,
      value(this: Intl.DateTimeFormat, d?: Date | number) {
        used++;
        return toParts.call(this, d);
      },
    });
    Object.defineProperty(proto, 'format', {
      ...saved.format,
      get(this: Intl.DateTimeFormat) {
        used++;
        return saved.format.get!.call(this) as unknown;
      },
    });
    Intl.DateTimeFormat = new Proxy(real, {
      construct(target, args: unknown[], newTarget) {
        made++;
        return Reflect.construct(target, args, newTarget) as object;
      },
      apply(target, self, args: unknown[]) {
        made++;
        return Reflect.apply(target, self, args) as unknown;
      },
    });
    const scheduler = new Scheduler({ log: createLogger({ level: 'error' }) });
    try {
      let runs = 0;
      scheduler.start([{ name: 'tick', cron: '* * * * * *', run: async () => void runs++ }], { runAtStart: false });
      await until('two runs', () => (runs >= 2 ? true : undefined), 10_000);
      expect({ made, used }).toEqual({ made: 0, used: 0 });
    } finally {
      await scheduler.stop();
      Intl.DateTimeFormat = real;
      Object.defineProperty(proto, 'formatToParts', saved.formatToParts);
      Object.defineProperty(proto, 'format', saved.format);
    }
  });
});
