/** `lookout silence add|list|expire`: functions the CLI wires into commander; each returns the exit code. */
import { userInfo } from 'node:os';
import { systemClock, type Clock } from '../clock.js';
import { loadConfig } from '../config/load.js';
import { formatDuration, parseDuration } from '../config/duration.js';
import { ConfigError, LookoutError } from '../errors.js';
import { openStore, type Store } from '../store/index.js';
import { formatMatcher, parseMatcher } from './matcher.js';
import { SilenceRepo, type Silence } from './repo.js';

/** Where a command prints: stdout for results, stderr for problems. */
export interface CommandIO {
  out?: { write(text: string): unknown };
  err?: { write(text: string): unknown };
  clock?: Clock;
}

/** Options of {@link silenceAddCommand}. */
export interface SilenceAddOptions extends CommandIO {
  configFile: string;
  /** Matchers as written on the command line: `rule=usdc-util`, `chain!=base`, `market_id=~0xab.*`. */
  match: string[];
  /** How long the silence lasts: `2h`, `30m`. */
  for: string;
  comment: string;
  /** Default: the login name of the user running the command. */
  author?: string;
}

/** Options of {@link silenceListCommand}. */
export interface SilenceListOptions extends CommandIO {
  configFile: string;
  /** Also list expired silences. */
  all?: boolean;
  json?: boolean;
}

/** Options of {@link silenceExpireCommand}. */
export interface SilenceExpireOptions extends CommandIO {
  configFile: string;
  id: string;
}

async function withRepo(opts: CommandIO & { configFile: string }, fn: (repo: SilenceRepo, clock: Clock) => void): Promise<number> {
  const err = opts.err ?? process.stderr;
  const clock = opts.clock ?? systemClock;
  let store: Store | undefined;
  try {
    const config = loadConfig(opts.configFile);
    store = openStore(config.storage.path, { clock });
    fn(new SilenceRepo(store.db, clock), clock);
    return 0;
  } catch (e) {
    if (e instanceof ConfigError || e instanceof LookoutError) {
      err.write(`lookout silence: ${e.message}\n`);
      return e.code === 'E_NOT_FOUND' || e.code === 'E_BAD_REQUEST' || e instanceof ConfigError ? 1 : 2;
    }
    err.write(`lookout silence: ${(e as Error).message}\n`);
    return 2;
  } finally {
    store?.close();
  }
}

function defaultAuthor(): string {
  try {
    return userInfo().username || 'unknown';
  } catch {
    return 'unknown';
  }
}

/** `silence add`: stores a silence from `--match` matchers and `--for`, prints its id; exit 1 on bad input. */
export function silenceAddCommand(opts: SilenceAddOptions): Promise<number> {
  const out = opts.out ?? process.stdout;
  return withRepo(opts, (repo, clock) => {
    const ms = parseDuration(opts.for);
    if (ms === undefined || ms <= 0) throw new LookoutError('E_BAD_REQUEST', `invalid --for '${opts.for}': write it like 30m, 2h or 1d`);
    if (opts.match.length === 0) throw new LookoutError('E_BAD_REQUEST', 'give at least one --match label=value');
    const matchers = opts.match.map(parseMatcher);
    const now = clock.now();
    const s = repo.add({ matchers, startsAt: now, endsAt: now + ms, author: opts.author ?? defaultAuthor(), comment: opts.comment });
    out.write(`${s.id}\n`);
  });
}

function describe(s: Silence, now: number): string {
  const when =
    s.status === 'active'
      ? `ends in ${formatDuration(s.endsAt - now)}`
      : s.status === 'pending'
        ? `starts in ${formatDuration(s.startsAt - now)}`
        : `ended ${new Date(s.endsAt).toISOString()}`;
  return `${s.id}  ${s.status.padEnd(7)}  ${s.matchers.map(formatMatcher).join(' ')}  ${when}  by ${s.author}: ${s.comment}`;
}

/** `silence list`: one line per silence in force (all with `all`), or JSON with `json`. */
export function silenceListCommand(opts: SilenceListOptions): Promise<number> {
  const out = opts.out ?? process.stdout;
  return withRepo(opts, (repo, clock) => {
    const list = opts.all ? repo.list() : repo.list({ active: true });
    if (opts.json) {
      out.write(JSON.stringify(list, null, 2) + '\n');
      return;
    }
    if (list.length === 0) {
      out.write(opts.all ? 'no silences\n' : 'no active silences\n');
      return;
    }
    const now = clock.now();
    for (const s of list) out.write(describe(s, now) + '\n');
  });
}

/** `silence expire ID`: ends the silence now; exit 1 when there is no such id. */
export function silenceExpireCommand(opts: SilenceExpireOptions): Promise<number> {
  const out = opts.out ?? process.stdout;
  return withRepo(opts, (repo) => {
    const s = repo.expire(opts.id);
    out.write(`expired ${s.id}\n`);
  });
}
