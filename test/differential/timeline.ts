/**
 * Alert timelines for the differential test: what happens when, in slots of one group_interval. Every action
 * falls half-way between two flush ticks (a group's ticks are group_wait = half an interval after its first alert,
 * then every interval), so neither side can see it on the other side of a tick: a difference is a difference in
 * what was decided, not a race.
 */
import fc from 'fast-check';

/** One alert of the timeline: a group (rule), an entity, and when it fires and resolves (slots; null: never). */
export interface TimelineAlert {
  rule: string;
  entity: string;
  poll: 'p1' | 'p2';
  fireAt: number;
  resolveAt: number | null;
}

/** A silence on one entity's market_id, added and expired at slots. */
export interface TimelineSilence {
  entity: string;
  from: number;
  to: number;
}

/** A timeline: alerts, a source_down of poll p1 (inhibits the alerts of p1), silences, an optional restart of lookout. */
export interface Timeline {
  alerts: TimelineAlert[];
  sourceDown: { from: number; to: number | null } | null;
  silences: TimelineSilence[];
  restartAt: number | null;
  /** Slots the timeline lasts (then one more for the last flushes). */
  slots: number;
}

/** One thing to do at a slot, on both sides. */
export type Action =
  | { at: number; do: 'fire' | 'resolve'; alert: TimelineAlert }
  | { at: number; do: 'down' | 'up' }
  | { at: number; do: 'silence' | 'unsilence'; silence: TimelineSilence; index: number }
  | { at: number; do: 'restart' };

/** The actions of a timeline in time order (within a slot: silences and the source first, then alerts). */
export function actionsOf(t: Timeline): Action[] {
  const out: Action[] = [];
  for (const a of t.alerts) {
    out.push({ at: a.fireAt, do: 'fire', alert: a });
    if (a.resolveAt !== null) out.push({ at: a.resolveAt, do: 'resolve', alert: a });
  }
  if (t.sourceDown) {
    out.push({ at: t.sourceDown.from, do: 'down' });
    if (t.sourceDown.to !== null) out.push({ at: t.sourceDown.to, do: 'up' });
  }
  t.silences.forEach((s, index) => {
    out.push({ at: s.from, do: 'silence', silence: s, index });
    out.push({ at: s.to, do: 'unsilence', silence: s, index });
  });
  if (t.restartAt !== null) out.push({ at: t.restartAt, do: 'restart' });
  const rank = { restart: 0, silence: 1, unsilence: 1, down: 2, up: 2, fire: 3, resolve: 3 } as const;
  return out.sort((a, b) => a.at - b.at || rank[a.do] - rank[b.do]);
}

const RULES = ['r1', 'r2', 'r3'];

/**
 * Timelines of 1–3 groups of 1–3 alerts. Each alert fires once (an alert that fires again after resolving while muted
 * meets Alertmanager's notification log still holding it: a documented difference, pinned by its own test). After a
 * group has fully resolved, none of its alerts fires for two slots (lookout sends an all-resolved message at once,
 * Alertmanager at its next tick: the other documented difference, see docs/alertmanager-parity.md).
 */
export function timelineArb(opts: { restarts: boolean }): fc.Arbitrary<Timeline> {
  const slots = 8;
  const alertArb = (rule: string, poll: 'p1' | 'p2', i: number) =>
    fc.record({ fireAt: fc.oneof(fc.integer({ min: 0, max: 1 }), fc.integer({ min: 0, max: 5 })), lasts: fc.option(fc.integer({ min: 1, max: 6 }), { nil: null, freq: 3 }) }).map(
      ({ fireAt, lasts }): TimelineAlert => ({ rule, entity: `${rule}-m${i}`, poll, fireAt, resolveAt: lasts === null || fireAt + lasts >= slots ? null : fireAt + lasts }),
    );
  const groupArb = (rule: string) =>
    fc.tuple(fc.constantFrom<'p1' | 'p2'>('p1', 'p2'), fc.integer({ min: 1, max: 3 })).chain(([poll, n]) => fc.tuple(...Array.from({ length: n }, (_, i) => alertArb(rule, poll, i))));
  return fc
    .record({
      groups: fc.integer({ min: 1, max: 3 }).chain((n) => fc.tuple(...RULES.slice(0, n).map(groupArb))),
      // Mutes mostly start once alerts have been announced and end before their repeat: where re-announcing would show.
      down: fc.option(fc.record({ from: fc.integer({ min: 1, max: 5 }), lasts: fc.option(fc.integer({ min: 1, max: 3 }), { nil: null, freq: 5 }) }), { nil: null, freq: 4 }),
      silences: fc.array(fc.record({ pick: fc.nat(), from: fc.integer({ min: 1, max: 5 }), lasts: fc.integer({ min: 1, max: 3 }) }), { maxLength: 2 }),
      restartAt: opts.restarts ? fc.option(fc.integer({ min: 1, max: 7 }), { nil: null }) : fc.constant(null),
    })
    .map(({ groups, down, silences, restartAt }): Timeline => {
      const alerts = groups.flat();
      return {
        alerts: spaceOutRefires(alerts),
        sourceDown: down && { from: down.from, to: down.lasts === null || down.from + down.lasts >= slots ? null : down.from + down.lasts },
        silences: silences.map((s) => ({ entity: (alerts[s.pick % alerts.length] as TimelineAlert).entity, from: s.from, to: Math.min(slots, s.from + s.lasts) })),
        restartAt,
        slots,
      };
    });
}

/** Moves an alert's firing later where its group had fully resolved less than two slots before. */
function spaceOutRefires(alerts: TimelineAlert[]): TimelineAlert[] {
  const byRule = new Map<string, TimelineAlert[]>();
  for (const a of alerts) byRule.set(a.rule, [...(byRule.get(a.rule) ?? []), a]);
  for (const group of byRule.values()) {
    for (let changed = true; changed; ) {
      changed = false;
      for (const a of group) {
        // Slots at which every alert of the group that has fired is resolved (the group is empty).
        const emptyAt = (slot: number) => group.every((b) => b === a || b.fireAt > slot || (b.resolveAt !== null && b.resolveAt <= slot));
        const lastEmptied = Math.max(-Infinity, ...group.filter((b) => b !== a && b.resolveAt !== null && b.resolveAt <= a.fireAt && emptyAt(b.resolveAt)).map((b) => b.resolveAt as number));
        if (Number.isFinite(lastEmptied) && emptyAt(a.fireAt) && a.fireAt - lastEmptied < 2) {
          const shift = lastEmptied + 2 - a.fireAt;
          a.fireAt += shift;
          if (a.resolveAt !== null) a.resolveAt += shift;
          changed = true;
        }
      }
    }
  }
  return alerts;
}

/** A timeline as text, for a failure message. */
export function describeTimeline(t: Timeline): string {
  const lines = actionsOf(t).map((a) => {
    const what = a.do === 'fire' || a.do === 'resolve' ? `${a.do} ${a.alert.entity} (${a.alert.poll})` : a.do === 'silence' || a.do === 'unsilence' ? `${a.do} ${a.silence.entity}` : a.do === 'down' ? 'source_down p1 fires' : a.do === 'up' ? 'source_down p1 resolves' : 'restart lookout';
    return `  slot ${a.at}: ${what}`;
  });
  return lines.join('\n');
}
