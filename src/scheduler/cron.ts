/**
 * A poll's cron expression: node-cron's syntax (SPEC §2), scheduled with croner (see src/scheduler/index.ts for why).
 * node-cron reads the expression — its names (`monday`, `Jan`), nicknames (`@daily`), ranges that wrap (`5-1`) and
 * steps — into the values each field takes; croner gets those values as plain lists, so it schedules what node-cron
 * read rather than reading the text a second time its own way (it refuses full day names, ranges that wrap and steps
 * past a field's end, all of which node-cron takes). One place says what an expression may be, for the config's
 * check and the scheduler alike.
 */
import { Cron } from 'croner';
import { parse, validateDetailed } from 'node-cron';

/** croner's options for node-cron's reading: day-of-month and day-of-week must both match, as node-cron has it. */
const CRON_OPTIONS = { domAndDow: true } as const;

/**
 * node-cron's reading of `expr` as a six-field pattern croner takes: each field the comma-separated list of the values
 * node-cron gives it (numbers, and its `L`, `15W`, `1#2`, `5L` tokens as they are). Throws what node-cron throws for
 * an expression it refuses.
 */
export function cronerPattern(expr: string): string {
  return patternOf(parse(expr));
}

/** node-cron's fields as a croner pattern. */
function patternOf(f: ReturnType<typeof parse>): string {
  return [f.second, f.minute, f.hour, f.dayOfMonth, f.month, f.dayOfWeek].map((values) => values.join(',')).join(' ');
}

/**
 * Why `expr` is not a schedule lookout runs, or `undefined`: node-cron's verdict on its syntax, then whether croner
 * takes node-cron's reading of it (it does for every form test/scheduler-cron.test.ts tries; node-cron's `L-2`, the
 * second-to-last day, and `LW` in a list, it does not — said here rather than at start-up), then whether it ever
 * runs.
 */
export function cronProblem(expr: string): string | undefined {
  const v = validateDetailed(expr);
  if (!v.valid) {
    const why = v.errors.map((e) => `${e.field}: ${e.message}`).join('; ');
    return `invalid cron expression '${expr}'${why ? ` (${why})` : ''}`;
  }
  let job: Cron;
  try {
    // The fields node-cron read in its verdict (`parse` would read the expression again).
    job = new Cron(patternOf(v.fields ?? parse(expr)), { ...CRON_OPTIONS, paused: true });
  } catch (err) {
    return `cron expression '${expr}' cannot be scheduled (${err instanceof Error ? err.message : String(err)})`;
  }
  // Days that never come together (the 1st that is a 3rd Monday): the poll would never run after its first.
  const next = job.nextRun();
  job.stop();
  return next === null ? `cron expression '${expr}' never runs (its day of month and day of week never fall on one day)` : undefined;
}

/**
 * A paused croner job running `fn` on `expr`'s schedule (`resume()` starts it, `stop()` ends it). What `fn` throws
 * goes to `onError` (croner would leave it an unhandled rejection, which ends the process).
 */
export function cronJob(expr: string, fn: () => void, onError: (err: unknown) => void): Cron {
  return new Cron(cronerPattern(expr), { ...CRON_OPTIONS, paused: true, catch: (err: unknown) => onError(err) }, fn);
}
