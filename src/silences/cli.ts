/**
 * `lookout silence add|list|expire`: functions the CLI wires into commander; each returns the exit code. They work on
 * the DB file the config names, or on a running daemon through its API (`target`, from `--url` or `LOOKOUT_URL`).
 */
import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import { systemClock, type Clock } from '../clock.js';
import { loadConfig } from '../config/load.js';
import { formatDuration, parseDuration } from '../config/duration.js';
import { ConfigError, LookoutError } from '../errors.js';
import { openStore, type Store } from '../store/index.js';
import { formatMatcher, parseMatcher } from './matcher.js';
import { SilenceRepo, type Silence } from './repo.js';
import { silenceJson } from '../http/types.js';
import { daemonRequest, type DaemonTarget } from '../commands/daemon-api.js';

/** Where a command prints: stdout for results, stderr for problems. */
export interface CommandIO {
  out?: { write(text: string): unknown };
  err?: { write(text: string): unknown };
  clock?: Clock;
  /** A running daemon to work on instead of the DB file. */
  target?: DaemonTarget;
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

async function withRepo(opts: CommandIO & { configFile: string }, fn: (repo: SilenceRepo, clock: Clock) => void, mode: { readonly?: boolean; mustExist?: boolean } = {}): Promise<number> {
  const clock = opts.clock ?? systemClock;
  let store: Store | undefined;
  return reported(opts, async () => {
    try {
      const config = loadConfig(opts.configFile);
      // Reading never creates a DB: a missing file is an error, as for `lookout alerts`.
      // Nor does expiring: with no DB there is no silence to end, and an empty file would only hide the mistake.
      if (mode.mustExist && config.storage.path !== ':memory:' && !existsSync(config.storage.path)) {
        throw new LookoutError('E_STORE_OPEN', `cannot open database ${config.storage.path}: the file does not exist (run lookout first, or check storage.path)`);
      }
      store = openStore(config.storage.path, { clock, readonly: mode.readonly ?? false });
      fn(new SilenceRepo(store.db, clock), clock);
    } finally {
      store?.close();
    }
  });
}

/** Runs a command body; a problem is one line on stderr: exit 1 for bad input or an unknown id, 2 otherwise. */
async function reported(opts: CommandIO, body: () => Promise<void>): Promise<number> {
  const err = opts.err ?? process.stderr;
  try {
    await body();
    return 0;
  } catch (e) {
    if (e instanceof ConfigError || e instanceof LookoutError) {
      err.write(`lookout silence: ${e.message}\n`);
      return e.code === 'E_NOT_FOUND' || e.code === 'E_BAD_REQUEST' || e instanceof ConfigError ? 1 : 2;
    }
    err.write(`lookout silence: ${(e as Error).message}\n`);
    return 2;
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
  const clock = opts.clock ?? systemClock;
  const input = () => {
    const ms = parseDuration(opts.for);
    if (ms === undefined || ms <= 0) throw new LookoutError('E_BAD_REQUEST', `invalid --for '${opts.for}': write it like 30m, 2h or 1d`);
    if (opts.match.length === 0) throw new LookoutError('E_BAD_REQUEST', 'give at least one --match label=value');
    const now = clock.now();
    return { matchers: opts.match.map(parseMatcher), startsAt: now, endsAt: now + ms, author: opts.author ?? defaultAuthor(), comment: opts.comment };
  };
  const target = opts.target;
  if (target) {
    return reported(opts, async () => {
      const { startsAt: _now, endsAt, ...rest } = input();
      const s = await daemonRequest<{ id: string }>(target, 'POST', '/api/silences', { ...rest, endsAt: new Date(endsAt).toISOString() });
      out.write(`${s.id}\n`);
    });
  }
  return withRepo(opts, (repo) => {
    const s = repo.add(input());
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

/** A silence as the API sends it (ISO times), back in the repository's shape. */
function fromJson(j: ReturnType<typeof silenceJson>): Silence {
  const ms = (v: unknown) => (typeof v === 'string' ? Date.parse(v) : 0);
  return { ...(j as unknown as Silence), startsAt: ms(j.startsAt), endsAt: ms(j.endsAt), createdAt: ms(j.createdAt), updatedAt: ms(j.updatedAt) };
}

/** `silence list`: one line per silence in force (all with `all`), or JSON with `json` (the API's shape, ISO times). */
export function silenceListCommand(opts: SilenceListOptions): Promise<number> {
  const out = opts.out ?? process.stdout;
  const clock = opts.clock ?? systemClock;
  const print = (list: Silence[]) => {
    const now = clock.now();
    if (opts.json) {
      out.write(JSON.stringify(list.map((s) => silenceJson(s, now)), null, 2) + '\n');
      return;
    }
    if (list.length === 0) {
      out.write(opts.all ? 'no silences\n' : 'no active silences\n');
      return;
    }
    for (const s of list) out.write(describe(s, now) + '\n');
  };
  const target = opts.target;
  if (target) {
    return reported(opts, async () => {
      const list = await daemonRequest<Array<ReturnType<typeof silenceJson>>>(target, 'GET', opts.all ? '/api/silences?all=1' : '/api/silences');
      print(list.map(fromJson));
    });
  }
  return withRepo(opts, (repo) => print(opts.all ? repo.list() : repo.list({ active: true })), { readonly: true });
}

/** `silence expire ID`: ends the silence now; exit 1 when there is no such id. */
export function silenceExpireCommand(opts: SilenceExpireOptions): Promise<number> {
  const out = opts.out ?? process.stdout;
  const target = opts.target;
  if (target) {
    return reported(opts, async () => {
      await daemonRequest(target, 'DELETE', `/api/silences/${encodeURIComponent(opts.id)}`);
      out.write(`expired ${opts.id}\n`);
    });
  }
  return withRepo(
    opts,
    (repo) => {
      const s = repo.expire(opts.id);
      out.write(`expired ${s.id}\n`);
    },
    { mustExist: true },
  );
}
