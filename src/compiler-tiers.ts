/**
 * Which of V8's compilers the daemon's JavaScript may use (target B6s: a daemon watching a few hundred markets in
 * ≤ 80 MB). Set once by each process that runs the daemon, at its entry, beside the heap settings
 * (src/heap-growth.ts), and for the same reason never by `startDaemon`: these are process-wide V8 flags.
 *
 * V8 runs a function in its interpreter first, then, once it is hot, compiles it with its baseline compiler
 * (Sparkplug), then with its optimizing ones (Maglev where the V8 has it, TurboFan). The optimizing compilers' own code
 * in the node binary (TurboFan alone ~3 MB of its pages), their zones in malloc and the machine code they make cost a
 * watch of 200 markets ~7 MB of RSS (91 → 84–86 MB, docs/performance.md "B6s: the compilers by the work"), and buy it
 * nothing it needs: its markets poll takes ~40 ms in the interpreter against ~27 ms compiled, every 30 s. At SPEC §8's
 * scale they are what keeps a 10,000-market poll within 1.5× of its bare parts (B1: 4.3× in the interpreter alone).
 *
 * So the daemon starts with `--max-opt=0` (the interpreter only: V8's own switch over all its tiers, in every V8 node
 * 20–24 ships) and gives V8 its compilers back (`--max-opt=999`, V8's default) at the first poll whose readings reach
 * {@link COMPILERS_ROWS} (the poll runner publishes each fetched poll's size on {@link POLL_ROWS_CHANNEL}, before its
 * transaction, so that poll's store and evaluation already run compiled). V8 reads the flag each time it decides to
 * tier a function up, so setting it while the process runs takes effect from then on (a function that has been hot
 * since tiers up at its next budget check). It never goes back: a deployment that once polled that much will again.
 *
 * The operator's command line wins: any of V8's tiering flags there (`--max-opt`, `--jitless`, `--no-opt`,
 * `--sparkplug`, `--maglev`, …, on node's command line or in NODE_OPTIONS) leaves the compilers as node was told.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { setFlagsFromString } from 'node:v8';
import { POLL_ROWS_CHANNEL } from './channels.js';

/** A poll of this many readings or more gives V8 its compilers back: 10× a 200-market watch, a fifth of SPEC §8's markets. */
export const COMPILERS_ROWS = 2_000;

/** What {@link holdCompilers} says when it holds the compilers back. */
export const COMPILERS_SETTING = `interpreter until a poll of ${COMPILERS_ROWS} readings or more`;

/** V8's flags that choose tiers: given by the operator, they are left as they are. */
const TIER_FLAGS = /^--(no[-_])?(max[-_]opt|opt|turbofan|sparkplug|maglev|jitless|lite[-_]mode|always[-_]\w+)(=|$)/;

/** The compilers' state over the polls, apart from V8: `held` until a poll of {@link COMPILERS_ROWS} or more. */
export class CompilerGate {
  held = true;

  /** A poll of `rows` readings: true when this one lifts the gate (once). */
  poll(rows: unknown): boolean {
    if (!this.held || typeof rows !== 'number' || !(rows >= COMPILERS_ROWS)) return false;
    this.held = false;
    return true;
  }
}

let applied: string | undefined;
let liftedBy: number | undefined;
const liftListeners: ((rows: number) => void)[] = [];

/**
 * The compilers V8 runs by default in this node, each to be held back and later turned on again: TurboFan and
 * Sparkplug (on by default on x64 and arm64, the architectures node's release builds run them on), and Maglev where
 * node turns it on (22.0–22.8 and 24; 20 does not build it in, 22.9 turned it off for its bugs). Nothing elsewhere,
 * nor Maglev in a node not named here: the lift must only turn on what was on, and V8 has no way to read a flag. (Its
 * flags' hash in `cachedDataVersionTag()` would tell, but computing it makes V8 apply its flag implications again,
 * which puts back the young generation's growth factor that src/heap-growth.ts sets.)
 */
export function compilersOn(node: string = process.versions.node, arch: string = process.arch): string[] {
  if (arch !== 'x64' && arch !== 'arm64') return [];
  const [major = 0, minor = 0] = node.split('.').map(Number);
  const maglev = major === 24 || (major === 22 && minor < 9);
  return ['turbofan', ...(maglev ? ['maglev'] : []), 'sparkplug'];
}

/**
 * Holds V8's optimizing and baseline compilers back until a poll of {@link COMPILERS_ROWS} readings or more (see the
 * module's comment), unless `args` (node's command line and NODE_OPTIONS' words) name a tiering flag. Once a process:
 * later calls return what the first set.
 */
export function holdCompilers(args: readonly string[]): string {
  if (applied) return applied;
  if (args.some((a) => TIER_FLAGS.test(a))) return (applied = 'as node was told');
  const held = compilersOn();
  if (held.length === 0) return (applied = `as V8 runs them (none held back on ${process.arch})`);
  for (const c of held) setFlagsFromString(`--no-${c}`);
  const gate = new CompilerGate();
  const onPoll = (message: unknown) => {
    const rows = (message as { rows?: unknown } | undefined)?.rows;
    if (!gate.poll(rows)) return;
    unsubscribe(POLL_ROWS_CHANNEL, onPoll);
    for (const c of held) setFlagsFromString(`--${c}`);
    liftedBy = rows as number;
    for (const l of liftListeners.splice(0)) l(liftedBy);
  };
  subscribe(POLL_ROWS_CHANNEL, onPoll);
  return (applied = `${COMPILERS_SETTING} (${held.join(', ')} held back)`);
}

/** `listener` is told (once) when a poll gives V8 its compilers back, with that poll's readings; at once if one has. */
export function onCompilersLifted(listener: (rows: number) => void): void {
  if (liftedBy !== undefined) listener(liftedBy);
  else liftListeners.push(listener);
}
