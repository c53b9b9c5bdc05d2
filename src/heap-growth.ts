/**
 * How far V8 lets the daemon's heap grow past what a full collection found live (SPEC §8 memory, targets B6/B6s).
 *
 * V8 sets the next full collection's trigger at the live heap times a factor it picks from its own speed, up to 4×
 * for a process as big as the daemon. A markets poll makes tens of MB of short-lived objects that outlive the young
 * generation (the parsed response and its readings are alive for the whole poll), so with polls coming one after
 * another the old generation sat near 4× the ~50 MB live heap: ~390 MB of RSS at SPEC §8 scale. A factor of 1.5
 * collects sooner, at a cost measured in CPU (docs/performance.md, "B6/B6s: the heap's growing factor").
 *
 * `--heap-growing-percent` is read by V8 each time it sets that trigger, so setting it from here, once the process
 * runs, takes effect at the next full collection — whether the daemon was started by `lookout run`, the Docker image
 * or a program calling `startDaemon` (the benchmarks' daemon child). A value the operator gave node on its command line
 * wins (`node --heap-growing-percent=0 dist/cli.js run …` gives V8's own choice back; NODE_OPTIONS does not take
 * this flag).
 */
import { setFlagsFromString } from 'node:v8';

/** The growth allowed past the live heap, percent: the trigger is at 1.5× what the last full collection kept. */
export const HEAP_GROWING_PERCENT = 50;

const FLAG = /^--heap[-_]growing[-_]percent(=|$)/;

/**
 * Sets the daemon's heap growing factor unless the operator set one; returns the flag it set, or undefined.
 * Idempotent (a reload or a second daemon in the process sets the same value).
 */
export function applyDaemonHeapGrowth(execArgv: readonly string[] = process.execArgv): string | undefined {
  if (execArgv.some((a) => FLAG.test(a))) return undefined;
  const flag = `--heap-growing-percent=${HEAP_GROWING_PERCENT}`;
  setFlagsFromString(flag);
  return flag;
}
