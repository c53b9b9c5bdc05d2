/**
 * A poll's cron expression: node-cron's syntax (SPEC §2), scheduled with croner (see src/scheduler/index.ts for why).
 * One place says what an expression may be, for the config's check and the scheduler alike.
 */
import { Cron } from 'croner';
import { validateDetailed } from 'node-cron';

/** croner's options for a node-cron expression: day-of-month and day-of-week must both match, as node-cron has it. */
export const CRON_OPTIONS = { domAndDow: true } as const;

/**
 * Why `expr` is not a schedule lookout runs, or `undefined`: node-cron's verdict on its syntax, then whether croner
 * takes it (every form node-cron takes that test/scheduler-cron.test.ts tries, it does; one it might not is said here
 * rather than at start-up).
 */
export function cronProblem(expr: string): string | undefined {
  const v = validateDetailed(expr);
  if (!v.valid) {
    const why = v.errors.map((e) => `${e.field}: ${e.message}`).join('; ');
    return `invalid cron expression '${expr}'${why ? ` (${why})` : ''}`;
  }
  try {
    new Cron(expr, { ...CRON_OPTIONS, paused: true }).stop();
  } catch (err) {
    return `cron expression '${expr}' cannot be scheduled (${err instanceof Error ? err.message : String(err)})`;
  }
  return undefined;
}

/** A paused croner job running `fn` on `expr`'s schedule (`resume()` starts it, `stop()` ends it). */
export function cronJob(expr: string, fn: () => void): Cron {
  return new Cron(expr, { ...CRON_OPTIONS, paused: true }, fn);
}
