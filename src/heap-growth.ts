/**
 * How far V8 lets the daemon's heap grow (SPEC §8 memory, targets B6/B6s). Set once by each process that runs the
 * daemon — `lookout run`, `lookout demo`, the benchmarks' daemon children — at its entry, never by `startDaemon`:
 * these are process-wide V8 flags, and a library call must not change the process it is loaded into.
 *
 * **The old generation.** V8 sets the next full collection's trigger at the live heap times a factor it picks from
 * its own speed, up to 4× for a process as big as the daemon. A markets poll makes tens of MB of short-lived objects
 * that outlive the young generation (the parsed response and its readings are alive for the whole poll), so with
 * polls coming one after another the old generation sat near 4× the ~50 MB live heap: ~390 MB of RSS at SPEC §8
 * scale. `--heap-growing-percent=50` collects sooner, at 1.5× (docs/performance.md, "B6/B6s: the heap's growing
 * factor"). V8 reads it each time it sets that trigger, so setting it once the process runs takes effect at the next
 * full collection.
 *
 * **The young generation.** V8 doubles a semi-space (1 MB at first) whenever a scavenge's survivors since the last
 * growth exceed its size, up to 16 MB: two semi-spaces of 16 MB, 32 MB committed, which a process polling back to back
 * keeps. `--max-semi-space-size` is read once, when node builds the heap, so it can only be given on node's command
 * line. `--semi-space-growth-factor` is read at each growth (`SemiSpaceNewSpace::Grow`: the new size is the factor
 * times the old, capped at the maximum), so the daemon lets the young generation double until a semi-space reaches
 * its cap and then sets the factor to 1: no more growth. The cap is {@link YOUNG_SEMI_SPACE_FIRST_CAP_MB} until the
 * data service sends a response of {@link LARGE_RESPONSE_BYTES} or more (the source's HTTP layer says so on the
 * {@link RESPONSE_BYTES_CHANNEL} diagnostics channel), then {@link YOUNG_SEMI_SPACE_CAP_MB}: a watch of a few hundred
 * markets (responses under 1 MB) keeps V8's first 1 MB a semi-space (2 MB of young generation, where a first cap of
 * 2 MB kept 4 and none 8 or more: B6s, ~1 MB of RSS each), while a poll of SPEC §8's 10,000 markets (a 9 MB response)
 * gets the room its parse's survivors need from its first response on (docs/performance.md "B6s: undici without its
 * index, no ICU, the young generation by the responses" and "B6s: the compilers by the work, the config's parser in
 * a child"). A performance observer looks after collections (the size only grows in one); when V8 has shrunk the
 * young generation (it does when allocation slows down, between polls at a real cadence), the factor goes back to 2
 * and it may grow to the cap again.
 *
 * V8 declares `DEFINE_MIN_VALUE_IMPLICATION(semi_space_growth_factor, 2)` and applies it when it starts (a 1 on
 * node's command line becomes 2) and when a worker thread's isolate starts. V8 11.3 (Node 20) does not apply it when
 * a flag is set at run time; from the source, neither does a recent V8's `V8::SetFlagsFromString` (13.x), while one
 * of an 11.x/12.x era does (Node 22's 12.4 not checked, none of them run here). So the factor is set again after a
 * worker starts (see {@link capYoungGeneration}), and a V8 that clamps it anyway is noticed (the young generation
 * grows while the factor is 1) and left to its own sizing, as before this setting: nothing fails.
 *
 * The operator's command line wins over both: `node --heap-growing-percent=0 dist/cli.js run …` gives V8's own old
 * generation sizing back, and any of `--max-semi-space-size`, `--min-semi-space-size`, `--semi-space-growth-factor`
 * leaves the young generation as node was told (NODE_OPTIONS takes `--max-semi-space-size`, not the others).
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { RESPONSE_BYTES_CHANNEL } from './channels.js';
import { holdCompilers } from './compiler-tiers.js';
import { nodeOptionWords } from './node-options.js';
import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import type { Worker } from 'node:worker_threads';

/** The growth allowed past the live heap, percent: the trigger is at 1.5× what the last full collection kept. */
export const HEAP_GROWING_PERCENT = 50;

/** The largest a semi-space of the young generation grows to, MB (V8's own limit: 16). */
export const YOUNG_SEMI_SPACE_CAP_MB = 4;

/** A semi-space's cap until a large response comes, MB. */
export const YOUNG_SEMI_SPACE_FIRST_CAP_MB = 1;

/** A response of this many bytes or more lifts the young generation's cap to {@link YOUNG_SEMI_SPACE_CAP_MB}. */
export const LARGE_RESPONSE_BYTES = 4 * 1024 * 1024;

const GROWING_FLAG = /^--heap[-_]growing[-_]percent(=|$)/;
const SEMI_SPACE_FLAGS = /^--(max|min)[-_]semi[-_]space[-_]size(=|$)|^--semi[-_]space[-_]growth[-_]factor(=|$)/;

/** What {@link applyDaemonHeapSettings} set, for the process's log. */
export interface DaemonHeapSettings {
  /** The flag set, or `as node was told`. */
  heap_growth: string;
  /** `semi-spaces up to N MB, M MB after a response of L MB or more`, or `as node was told`. */
  young_generation: string;
  /** Which of V8's compilers run: the interpreter until a large poll or response, or `as node was told` (src/compiler-tiers.ts). */
  compilers: string;
}

let applied: DaemonHeapSettings | undefined;
let capIgnored = false;
const ignoredListeners: (() => void)[] = [];

/**
 * Sets the daemon's heap settings, and holds V8's compilers back until a large poll or response
 * (src/compiler-tiers.ts), each unless node's command line (`execArgv`) or NODE_OPTIONS gave one of its own. Call it at
 * the entry of a process that runs the daemon, before the daemon's modules load: loading them alone grows the young
 * generation to 4 MB a semi-space. Once a process: later calls return what the first set. `onCapIgnored` is
 * told if this V8 turns out not to take the young generation's cap (see the module's comment); the young generation
 * then grows as V8 decides.
 */
export function applyDaemonHeapSettings(opts: { execArgv?: readonly string[]; nodeOptions?: string; onCapIgnored?: () => void } = {}): DaemonHeapSettings {
  if (opts.onCapIgnored) {
    if (capIgnored) opts.onCapIgnored();
    else ignoredListeners.push(opts.onCapIgnored);
  }
  if (applied) return applied;
  // NODE_OPTIONS may quote a flag ("--max-semi-space-size=8"), which node accepts: compared without its quotes.
  const args = [...(opts.execArgv ?? process.execArgv), ...nodeOptionWords(opts.nodeOptions ?? process.env.NODE_OPTIONS)];
  let heapGrowth = 'as node was told';
  if (!args.some((a) => GROWING_FLAG.test(a))) {
    heapGrowth = `--heap-growing-percent=${HEAP_GROWING_PERCENT}`;
    setFlagsFromString(heapGrowth);
  }
  let young = 'as node was told';
  if (!args.some((a) => SEMI_SPACE_FLAGS.test(a))) {
    capYoungGeneration(YOUNG_SEMI_SPACE_FIRST_CAP_MB * 1024 * 1024, YOUNG_SEMI_SPACE_CAP_MB * 1024 * 1024);
    young = YOUNG_GENERATION_SETTING;
  }
  applied = { heap_growth: heapGrowth, young_generation: young, compilers: holdCompilers(args) };
  return applied;
}

/** What {@link applyDaemonHeapSettings} says of the young generation when it caps it. */
export const YOUNG_GENERATION_SETTING = `semi-spaces up to ${YOUNG_SEMI_SPACE_FIRST_CAP_MB} MB, ${YOUNG_SEMI_SPACE_CAP_MB} MB after a response of ${LARGE_RESPONSE_BYTES / 1024 / 1024} MB or more`;

/** The growth factor for a semi-space of `semiBytes` under a cap of `capBytes`: 2 while doubling stays within the cap, else 1. */
export function youngGrowthFactor(semiBytes: number, capBytes: number): 1 | 2 {
  return semiBytes * 2 <= capBytes ? 2 : 1;
}

/** A semi-space's usable size, bytes (its pages less their headers, so a little under the MB V8 counts). */
function semiSpaceBytes(): number {
  const s = getHeapSpaceStatistics().find((x) => x.space_name === 'new_space');
  return s ? s.space_used_size + s.space_available_size : 0;
}

let watch: PerformanceObserver | undefined;

/**
 * What the watch over the young generation decides at each look (after a collection), apart from V8 so that its
 * reasoning can be tested on its own. A worker thread counts from its creation until it is online (or exited without
 * coming online): V8 applies its flag implications when the worker's isolate starts, on the worker's own thread, at a
 * moment this thread does not see; until the worker is online, and at the first look after, a growth is not held
 * against V8. A growth while the factor was 1 with no worker about is a strike; at the second V8 is taken not to
 * honour the factor.
 */
export class YoungGenerationWatch {
  /** The factor last set. */
  factor: 1 | 2 = 1;
  private last: number;
  private starting = 0;
  private onlineSince = false;
  private strikes = 0;

  constructor(
    firstBytes: number,
    private cap: number,
  ) {
    this.last = firstBytes;
  }

  /** The cap is now `cap` (never lowered): the factor to set, or `undefined` when the one set stands. */
  raise(cap: number): 1 | 2 | undefined {
    if (cap <= this.cap) return undefined;
    this.cap = cap;
    const f = youngGrowthFactor(this.last, cap);
    if (f === this.factor) return undefined;
    this.factor = f;
    return f;
  }

  /** A worker thread was created: it counts until {@link workerOnline}. */
  workerCreated(): void {
    this.starting++;
  }

  /** A worker created earlier is online (or exited before): V8 may have put its minimum factor back meanwhile. */
  workerOnline(): void {
    this.starting = Math.max(0, this.starting - 1);
    this.onlineSince = true;
  }

  /**
   * A look with the semi-space now `nowBytes`: the factor to set (`undefined` when the one set stands), or `ignored`
   * when V8 grew it against the factor twice.
   */
  look(nowBytes: number): 1 | 2 | 'ignored' | undefined {
    const workerAbout = this.starting > 0 || this.onlineSince;
    if (this.factor === 1 && nowBytes > this.last && !workerAbout && ++this.strikes >= 2) return 'ignored';
    this.onlineSince = false;
    this.last = nowBytes;
    const f = youngGrowthFactor(nowBytes, this.cap);
    // Set when it changes, and again after a worker's start (which may have put V8's minimum back meanwhile) — not on
    // every collection: this runs after each one.
    if (f === this.factor && !workerAbout) return undefined;
    this.factor = f;
    return f;
  }
}

/**
 * Keeps the young generation's semi-spaces at or under `cap` bytes, `largeCap` once a response of
 * {@link LARGE_RESPONSE_BYTES} or more was published on {@link RESPONSE_BYTES_CHANNEL} (see the module's comment and
 * {@link YoungGenerationWatch}).
 *
 * Starting a worker thread (the store's checkpointer, at the first large commit) makes V8 apply its flag implications
 * again, and with them the minimum of 2: the factor is set again once each worker is online (node's `worker_threads`
 * diagnostics channel), and at each look while one is starting. The worker's isolate starts on its own thread while
 * this one works on, so one growth may come in between: then the semi-spaces stay at twice the cap (V8 shrinks them
 * only when allocation slows). When V8 is taken not to honour the factor, it goes back to V8's 2, the watch ends and
 * the `onCapIgnored` listeners are told.
 */
function capYoungGeneration(cap: number, largeCap: number): void {
  const setFactor = (f: 1 | 2) => setFlagsFromString(`--semi-space-growth-factor=${f}`);
  // No growth until the watch has seen a collection: a long synchronous stretch runs many scavenges before the event
  // loop hands the first to the watch, and at V8's 2 the young generation could double several times in it.
  const state = new YoungGenerationWatch(semiSpaceBytes(), cap);
  setFactor(state.factor);
  const onWorker = (message: unknown) => {
    const worker = (message as { worker?: Worker }).worker;
    if (!worker) return;
    state.workerCreated();
    let settled = false;
    const settle = () => {
      if (settled) return;
      settled = true;
      state.workerOnline();
      if (watch) setFactor(state.factor);
    };
    worker.once('online', settle);
    worker.once('exit', settle);
  };
  const onResponse = (message: unknown) => {
    const bytes = (message as { bytes?: unknown }).bytes;
    if (typeof bytes !== 'number' || bytes < LARGE_RESPONSE_BYTES) return;
    // Once: the cap does not come down again.
    unsubscribe(RESPONSE_BYTES_CHANNEL, onResponse);
    const f = state.raise(largeCap);
    if (f !== undefined && watch) setFactor(f);
  };
  const check = () => {
    const f = state.look(semiSpaceBytes());
    if (f === 'ignored') {
      setFactor(2);
      watch?.disconnect();
      watch = undefined;
      unsubscribe('worker_threads', onWorker);
      unsubscribe(RESPONSE_BYTES_CHANNEL, onResponse);
      capIgnored = true;
      for (const l of ignoredListeners.splice(0)) l();
    } else if (f !== undefined) setFactor(f);
  };
  subscribe('worker_threads', onWorker);
  subscribe(RESPONSE_BYTES_CHANNEL, onResponse);
  watch = new PerformanceObserver(check);
  watch.observe({ entryTypes: ['gc'] });
}
