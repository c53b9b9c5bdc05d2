/** Running an engine's timers up to a time without a wall-clock tick loop: for replays (backtest, rule tests). */
import type { AlertEngine, EngineResult } from './engine.js';

/**
 * Ticks the engine at each timer deadline (`for`, keep_firing_for, flap settling) that falls at or before `t`,
 * in order, each inside `transaction`, so timers move exactly when they are due rather than at the next poll.
 */
export function runTimersUntil(engine: AlertEngine, t: number, transaction: <T>(fn: () => T) => T): EngineResult[] {
  const out: EngineResult[] = [];
  let last = -Infinity;
  for (;;) {
    const due = engine.nextDeadline();
    // A deadline that does not move after its tick would loop forever; it is retried at the next call.
    if (due === undefined || due > t || due <= last) break;
    last = due;
    out.push(transaction(() => engine.tick(due)));
  }
  return out;
}
