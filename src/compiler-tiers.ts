/**
 * Which of V8's compilers the daemon's JavaScript may use (target B6s: a daemon watching a few hundred markets in
 * ≤ 80 MB). Set once by each process that runs the daemon, at its entry, with the heap settings
 * (src/heap-growth.ts), and for the same reason never by `startDaemon`: these are process-wide V8 flags.
 *
 * V8 runs a function in its interpreter first, then, once it is hot, compiles it with its baseline compiler
 * (Sparkplug), then with its optimizing ones (Maglev where node runs it, TurboFan). The compilers' own code in the node
 * binary, their zones in malloc and the machine code they make cost a watch of 200 markets ~6 MB of RSS (92 → 86 MB,
 * docs/performance.md "B6s: the compilers by the work, the config's parser in a child"), and buy it nothing it needs:
 * its markets poll takes ~40 ms in the interpreter against ~27 ms compiled. At SPEC §8's scale they are what keeps a
 * 10,000-market poll within 1.5× of its bare parts (B1: 4.3× in the interpreter alone).
 *
 * So the daemon starts with each compiler that is on turned off (`--no-turbofan`, `--no-sparkplug`, `--no-maglev`:
 * {@link compilersOn}) and turns them on again for good at the first sign of work that needs them: a poll of
 * {@link COMPILERS_ROWS} readings or more (the poll runner publishes each fetched poll's size on
 * {@link POLL_ROWS_CHANNEL}, before its transaction, so that poll's store and evaluation already run compiled), or a
 * response of {@link COMPILERS_RESPONSE_BYTES} or more (the source's HTTP layer publishes each on
 * {@link RESPONSE_BYTES_CHANNEL}: a replica of a sharded deployment reads all the markets and keeps its share, and a
 * poll's response comes before its readings). V8 reads these flags each time it decides to tier a function up, so
 * setting them while the process runs takes effect from then on (a function hot since then tiers up at its next
 * budget check; test/compiler-tiers.test.ts asks V8). V8's `--max-opt` is not used: lowering it turns the compilers'
 * own flags off through V8's flag implications, and raising it again does not turn them back on.
 *
 * The operator's command line wins: any of V8's tiering flags on node's command line (`--max-opt`, `--jitless`,
 * `--no-opt`, `--sparkplug`, `--maglev`, …; node takes few V8 flags in NODE_OPTIONS) leaves the compilers as node was
 * told.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { setFlagsFromString } from 'node:v8';
import { POLL_ROWS_CHANNEL, RESPONSE_BYTES_CHANNEL } from './channels.js';

/** A poll of this many readings or more gives V8 its compilers back: 10× a 200-market watch, a fifth of SPEC §8's markets. */
export const COMPILERS_ROWS = 2_000;

/**
 * A response of this many bytes or more gives V8 its compilers back: ~2,300 market rows (a 200-market watch's
 * response at the default limit of 1,000 rows is ~0.9 MB).
 */
export const COMPILERS_RESPONSE_BYTES = 2 * 1024 * 1024;

/** What {@link holdCompilers} says when it holds the compilers back. */
export const COMPILERS_SETTING = `interpreter until a poll of ${COMPILERS_ROWS} readings or a response of ${COMPILERS_RESPONSE_BYTES / 1024 / 1024} MB`;

/** V8's flags that choose tiers: given by the operator, they are left as they are. */
const TIER_FLAGS = /^--(no[-_])?(max[-_]opt|opt|turbofan|sparkplug|maglev|jitless|lite[-_]mode|always[-_](opt|turbofan|sparkplug|maglev|osr))(=|$)/;

/**
 * The compilers' state over the work, apart from V8: `held` until a poll of {@link COMPILERS_ROWS} readings or a
 * response of {@link COMPILERS_RESPONSE_BYTES}.
 */
export class CompilerGate {
  held = true;

  /** A poll of `rows` readings: true when this one lifts the gate (once). */
  poll(rows: unknown): boolean {
    return this.lift(rows, COMPILERS_ROWS);
  }

  /** A response of `bytes`: true when this one lifts the gate (once). */
  response(bytes: unknown): boolean {
    return this.lift(bytes, COMPILERS_RESPONSE_BYTES);
  }

  private lift(size: unknown, line: number): boolean {
    if (!this.held || typeof size !== 'number' || !(size >= line)) return false;
    this.held = false;
    return true;
  }
}

/** What lifted the hold: the poll's readings or the response's bytes. */
export type CompilersLift = { rows: number } | { bytes: number };

let applied: string | undefined;
let lifted: CompilersLift | undefined;
const liftListeners: ((why: CompilersLift) => void)[] = [];

/**
 * The compilers V8 runs by default in this node, each to be held back and later turned on again: TurboFan and
 * Sparkplug (on by default on x64 and arm64, the architectures node's release builds run them on), and Maglev where
 * node builds it in (`v8_enable_maglev`) and turns it on (22.0–22.8 and 24; 20 does not build it, 22.9 turned it off
 * for its bugs). Nothing elsewhere, nor Maglev in a node not named here (it then compiles as it did): the lift must
 * only turn on what was on, and V8 has no way to read a flag. (Its flags' hash in `cachedDataVersionTag()` would
 * tell, but computing it makes V8 apply its flag implications again, which puts back the young generation's growth
 * factor that src/heap-growth.ts sets.) test/compiler-tiers.test.ts holds this to `node --v8-options`' defaults.
 */
export function compilersOn(
  node: string = process.versions.node,
  arch: string = process.arch,
  maglevBuilt: boolean = Number((process.config.variables as Record<string, unknown>).v8_enable_maglev) === 1,
): string[] {
  if (arch !== 'x64' && arch !== 'arm64') return [];
  const [major = 0, minor = 0] = node.split('.').map(Number);
  const maglev = maglevBuilt && (major === 24 || (major === 22 && minor < 9));
  return ['turbofan', ...(maglev ? ['maglev'] : []), 'sparkplug'];
}

/**
 * Holds V8's optimizing and baseline compilers back until a poll of {@link COMPILERS_ROWS} readings or a response of
 * {@link COMPILERS_RESPONSE_BYTES} (see the module's comment), unless `args` (node's command line and NODE_OPTIONS'
 * words) name a tiering flag. Once a process: later calls return what the first set.
 */
export function holdCompilers(args: readonly string[]): string {
  if (applied) return applied;
  if (args.some((a) => TIER_FLAGS.test(a))) return (applied = 'as node was told');
  const held = compilersOn();
  if (held.length === 0) return (applied = `as V8 runs them (none held back on ${process.arch})`);
  for (const c of held) setFlagsFromString(`--no-${c}`);
  const gate = new CompilerGate();
  const lift = (why: CompilersLift) => {
    unsubscribe(POLL_ROWS_CHANNEL, onPoll);
    unsubscribe(RESPONSE_BYTES_CHANNEL, onResponse);
    for (const c of held) setFlagsFromString(`--${c}`);
    lifted = why;
    for (const l of liftListeners.splice(0)) l(why);
  };
  const onPoll = (message: unknown) => {
    const rows = (message as { rows?: unknown } | undefined)?.rows;
    if (gate.poll(rows)) lift({ rows: rows as number });
  };
  const onResponse = (message: unknown) => {
    const bytes = (message as { bytes?: unknown } | undefined)?.bytes;
    if (gate.response(bytes)) lift({ bytes: bytes as number });
  };
  subscribe(POLL_ROWS_CHANNEL, onPoll);
  subscribe(RESPONSE_BYTES_CHANNEL, onResponse);
  return (applied = `${COMPILERS_SETTING} (${held.join(', ')} held back)`);
}

/** `listener` is told (once) when the work gives V8 its compilers back, with what lifted them; at once if it has. */
export function onCompilersLifted(listener: (why: CompilersLift) => void): void {
  if (lifted !== undefined) listener(lifted);
  else liftListeners.push(listener);
}
