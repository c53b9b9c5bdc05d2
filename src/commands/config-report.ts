/** How a command reports a config that failed to load: each problem as file:line:col, then one summary line. */
import { ConfigError, formatProblem } from '../errors.js';

/** Where a command writes. */
export interface Output {
  out: (line: string) => void;
  err: (line: string) => void;
}

/** "1 problem", "3 problems". */
export const problemCount = (n: number) => `${n} problem${n === 1 ? '' : 's'}`;

/**
 * Prints every problem of a {@link ConfigError} as file:line:col, then `last` (given the number of problems), and
 * returns undefined — the command then exits 1; any other error is thrown again.
 */
export function reportConfigError(err: unknown, io: Output, last: (n: number) => string): undefined {
  if (!(err instanceof ConfigError)) throw err;
  for (const p of err.problems) io.err(formatProblem(p));
  io.err(last(err.problems.length));
  return undefined;
}
