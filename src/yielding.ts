/**
 * Long synchronous work written once as a generator that `yield`s at points where it may pause (between rows),
 * run either to the end at once ({@link runSync}) or giving the event loop a turn whenever it has held it for
 * `sliceMs` ({@link runYielding}): a 10,000-market response read in one go held `/metrics`, `/healthz` and deliveries
 * for hundreds of milliseconds. Same steps, same result, either way.
 */

/** Work that pauses at each `yield` and returns its result at the end. */
export type Steps<T> = Generator<void, T, void>;

/** Rows a parser reads between points where it may pause. */
export const ROWS_PER_STEP = 100;

/** Rows of heavier work (a reading stored, an alert stepped and written: 10–100 µs each) between points where it may pause. */
export const HEAVY_ROWS_PER_STEP = 10;

/** How long one slice of work may hold the event loop before it gives a turn, ms. */
export const SLICE_MS = 8;

/**
 * How long a slice may run while some response waits for its socket to take more, ms. A 12 MB `/metrics` body goes
 * out a few MB per event-loop turn (what the socket takes at once); at {@link SLICE_MS} a turn, a scrape during a poll
 * took up to ~115 ms where idle it takes ~20.
 */
export const DRAIN_SLICE_MS = 1;

/**
 * How long one waiting output shortens slices at most, ms. A local scrape of 12 MB goes out in 20–60 ms; a client that
 * reads slowly (a remote scraper on a thin link) would otherwise keep every slice at {@link DRAIN_SLICE_MS} for its
 * whole transfer, where more turns do not make it read faster.
 */
export const DRAIN_MAX_MS = 1_000;

let draining = 0;

/**
 * Says that output waits for a socket (a write returned false) until the returned function is called (once; later
 * calls do nothing) or `maxMs` have passed: meanwhile every slice of {@link runYielding} is at most
 * {@link DRAIN_SLICE_MS}.
 */
export function outputWaiting(maxMs = DRAIN_MAX_MS): () => void {
  draining++;
  let done = false;
  const release = () => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    draining--;
  };
  const timer = setTimeout(release, maxMs);
  timer.unref();
  return release;
}

/** The slice to run now: `sliceMs`, or {@link DRAIN_SLICE_MS} while output waits for a socket. */
export const sliceNow = (sliceMs: number): number => (draining > 0 ? Math.min(sliceMs, DRAIN_SLICE_MS) : sliceMs);

/** Runs the steps to the end without pausing. */
export function runSync<T>(steps: Steps<T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/**
 * One turn of the event loop: timers, I/O and other callbacks queued meanwhile run before this resolves — when called
 * from an immediate, a timer or a pause of {@link runYielding}. From an I/O callback it resolves in the same turn,
 * before the loop looks at its timers and sockets again: {@link afterIo} is the turn then.
 */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * A turn of the event loop that takes in its timers and I/O, also when called from an I/O callback (a response's last
 * chunk): from there an immediate runs in the same turn, right after the callback, before the loop looks at timers
 * or sockets again; the second one runs after it has.
 */
export const afterIo = (): Promise<void> => new Promise((resolve) => setImmediate(() => setImmediate(resolve)));

/**
 * Runs the steps, giving the event loop a turn each time a slice has run `sliceMs` or longer ({@link DRAIN_SLICE_MS}
 * while a response waits for its socket: {@link outputWaiting}).
 */
export async function runYielding<T>(steps: Steps<T>, sliceMs = SLICE_MS): Promise<T> {
  let start = performance.now();
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    if (performance.now() - start >= sliceNow(sliceMs)) {
      await nextTurn();
      start = performance.now();
    }
  }
}
