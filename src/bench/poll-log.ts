/** The logger a daemon child of the bench runs with: it keeps the poll runner's `poll` lines and passes errors on. */
import { createLogger, type Logger } from '../log.js';

/** One `poll` log line of the poll runner. */
export interface PollLine {
  poll: string;
  rows: number;
  duration_ms: number;
  eval_ms: number;
  events: number;
  outcome: string;
}

/**
 * A logger that appends each `poll` line to `lines` and writes error lines to stderr, nothing else; `seen` gets every
 * line's message.
 */
export function pollLog(lines: PollLine[], seen?: (msg: string) => void): Logger {
  return createLogger({
    level: 'info',
    write: (line) => {
      const o = JSON.parse(line) as { msg?: string; level?: string } & PollLine;
      if (o.msg !== undefined) seen?.(o.msg);
      if (o.msg === 'poll') lines.push(o);
      else if (o.level === 'error') process.stderr.write(line + '\n');
    },
  });
}

/** Throws on a poll the runner logged as failed: a failed poll is cheap and would flatter a time or an RSS. */
export function assertPollsOk(lines: readonly PollLine[], what: string): void {
  const bad = lines.find((l) => l.outcome !== 'ok');
  if (bad) throw new Error(`${what}: a poll failed: ${JSON.stringify(bad)}`);
}
