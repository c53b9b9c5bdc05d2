/** An alert's pending and firing periods, read off its stored transitions (for drawing them as shaded spans). */
import type { AlertEvent } from '../model.js';

/** One span of an alert in one state; `to: null` is still going. */
export interface Period {
  kind: 'pending' | 'firing';
  from: number;
  to: number | null;
}

/**
 * The pending and firing spans of one alert from its transitions, oldest first. `pending` opens a pending span,
 * `firing` (or `flapping`) ends it and opens a firing one; `resolved` and `cancelled` end whatever is open, and
 * `settled` ends a flapping stretch (it stays firing when the alert settled firing).
 */
export function periodsOf(events: ReadonlyArray<Pick<AlertEvent, 'type' | 'at' | 'alert'>>): Period[] {
  const out: Period[] = [];
  let open: Period | undefined;
  const start = (kind: Period['kind'], at: number) => {
    if (open?.kind === kind) return;
    if (open) open.to = at;
    open = { kind, from: at, to: null };
    out.push(open);
  };
  const end = (at: number) => {
    if (open) open.to = at;
    open = undefined;
  };
  for (const e of events) {
    if (e.type === 'pending') start('pending', e.at);
    else if (e.type === 'firing' || e.type === 'flapping') start('firing', e.at);
    else if (e.type === 'resolved' || e.type === 'cancelled') end(e.at);
    else if (e.type === 'settled' && e.alert.state !== 'firing') end(e.at);
  }
  return out;
}
