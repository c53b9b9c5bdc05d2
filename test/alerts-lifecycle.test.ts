import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { fingerprint, step, type LifecycleSettings, type Signal, type TrackedAlert } from '../src/alerts/lifecycle.js';
import type { AlertEvent } from '../src/model.js';

const M = 60_000;
const HOUR = 60 * M;
const base: LifecycleSettings = { for: 0, keep_firing_for: 0, absent_for: 3, flap_threshold: 100, flap_window: 3600_000 };
const id = { rule: 'r', kind: 'test', entity: 'e1', severity: 'warning' as const };

const breach = (value = 1): Signal => ({ type: 'verdict', verdict: { status: 'breach', value, threshold: 0.5 } });
const ok = (value = 0): Signal => ({ type: 'verdict', verdict: { status: 'ok', value, threshold: 0.5 } });
const wait: Signal = { type: 'verdict', verdict: { status: 'wait', reason: 'no history' } };
const bad: Signal = { type: 'verdict', verdict: { status: 'data_error', reason: 'utilization 1.2 outside [0, 1]' } };
const absent: Signal = { type: 'absent' };
const failed: Signal = { type: 'failed_poll' };
const tick: Signal = { type: 'tick' };

type Script = Array<[minute: number, signal: Signal]>;

function run(script: Script, settings: Partial<LifecycleSettings> = {}) {
  let t: TrackedAlert | undefined;
  const events: Array<{ at: number; type: AlertEvent['type'] }> = [];
  const dataErrors: string[] = [];
  for (const [min, signal] of script) {
    const r = step(t, { signal, now: min * M, settings: { ...base, ...settings }, identity: id });
    t = r.next;
    events.push(...r.events.map((e) => ({ at: e.at / M, type: e.type })));
    if (r.dataError) dataErrors.push(r.dataError);
  }
  return { alert: t!.alert, tracked: t!, events, dataErrors, log: events.map((e) => `${e.type}@${e.at}`).join(' ') };
}

describe('lifecycle', () => {
  it.each<[string, Script, Partial<LifecycleSettings>, string, string]>([
    ['for: 0 fires at once', [[0, breach()]], {}, 'firing', 'firing@0'],
    ['for just short: still pending', [[0, breach()], [9, breach()], [9.99, breach()]], { for: 10 * M }, 'pending', 'pending@0'],
    ['for exactly elapsed: fires', [[0, breach()], [10, breach()]], { for: 10 * M }, 'firing', 'pending@0 firing@10'],
    ['for just over: fires', [[0, breach()], [10.01, breach()]], { for: 10 * M }, 'firing', 'pending@0 firing@10.01'],
    ['tick fires a pending alert once for has elapsed', [[0, breach()], [9, tick], [10, tick]], { for: 10 * M }, 'firing', 'pending@0 firing@10'],
    ['pending that stops breaching is cancelled', [[0, breach()], [5, ok()]], { for: 10 * M }, 'inactive', 'pending@0 cancelled@5'],
    ['firing resolves on ok', [[0, breach()], [1, ok()]], {}, 'resolved', 'firing@0 resolved@1'],
    ['resolved fires again', [[0, breach()], [1, ok()], [2, breach()]], {}, 'firing', 'firing@0 resolved@1 firing@2'],
    ['keep_firing_for holds a cleared alert', [[0, breach()], [1, ok()], [5, ok()]], { keep_firing_for: 10 * M }, 'firing', 'firing@0'],
    ['keep_firing_for expires on a verdict', [[0, breach()], [1, ok()], [11, ok()]], { keep_firing_for: 10 * M }, 'resolved', 'firing@0 resolved@11'],
    ['keep_firing_for expires on a tick', [[0, breach()], [1, ok()], [10.9, tick], [11, tick]], { keep_firing_for: 10 * M }, 'resolved', 'firing@0 resolved@11'],
    ['a breach inside keep_firing_for restarts it', [[0, breach()], [1, ok()], [5, breach()], [6, ok()], [12, ok()]], { keep_firing_for: 10 * M }, 'firing', 'firing@0'],
    ['wait changes nothing', [[0, breach()], [1, wait], [2, wait]], {}, 'firing', 'firing@0'],
    ['data_error changes nothing', [[0, breach()], [1, bad], [2, bad]], {}, 'firing', 'firing@0'],
    ['a failed poll changes nothing', [[0, breach()], [1, failed], [2, failed], [3, failed], [4, failed]], {}, 'firing', 'firing@0'],
    ['absent resolves on the Nth poll', [[0, breach()], [1, absent], [2, absent], [3, absent]], {}, 'resolved', 'firing@0 resolved@3'],
    ['absent twice is not enough', [[0, breach()], [1, absent], [2, absent]], {}, 'firing', 'firing@0'],
    ['a reading in between resets the count', [[0, breach()], [1, absent], [2, absent], [3, breach()], [4, absent], [5, absent]], {}, 'firing', 'firing@0'],
    ['failed polls do not count as absent', [[0, breach()], [1, absent], [2, failed], [3, absent], [4, failed]], {}, 'firing', 'firing@0'],
    ['absent cancels a pending alert', [[0, breach()], [1, absent]], { for: 10 * M, absent_for: 1 }, 'inactive', 'pending@0 cancelled@1'],
    ['an absent pending alert does not fire on tick', [[0, breach()], [1, absent], [20, tick]], { for: 10 * M, absent_for: 3 }, 'pending', 'pending@0'],
    ['absent_for: 1 resolves on the first absence', [[0, breach()], [1, absent]], { absent_for: 1 }, 'resolved', 'firing@0 resolved@1'],
    ['ok on an inactive pair stays inactive, silently', [[0, ok()], [1, ok()]], {}, 'inactive', ''],
  ])('%s', (_name, script, settings, state, log) => {
    const r = run(script, settings);
    expect(r.alert.state).toBe(state);
    expect(r.log).toBe(log);
  });

  it('counts a data error and returns it without a state change', () => {
    const r = run([[0, breach(0.9)], [1, bad]]);
    expect(r.dataErrors).toEqual(['utilization 1.2 outside [0, 1]']);
    expect(r.alert.value).toBe(0.9);
  });

  it('tracks value, previous value, peak and timestamps', () => {
    const r = run([[0, breach(0.96)], [1, breach(0.99)], [2, breach(0.97)], [3, ok(0.9)]], { for: 1 * M });
    expect(r.alert).toMatchObject({
      state: 'resolved',
      value: 0.9,
      previous_value: 0.97,
      peak: 0.99,
      threshold: 0.5,
      pending_since: 0,
      firing_since: 1 * M,
      resolved_at: 3 * M,
      last_eval_at: 3 * M,
    });
  });

  it('peak follows a value that crossed downwards', () => {
    const r = run([[0, breach(0.3)], [1, breach(0.1)], [2, breach(0.2)]]);
    expect(r.alert.peak).toBe(0.1);
  });

  it('a new episode resets the timestamps', () => {
    const r = run([[0, breach()], [1, ok()], [5, breach()]], { for: 1 * M });
    expect(r.alert).toMatchObject({ state: 'pending', pending_since: 5 * M, firing_since: null, resolved_at: null });
  });

  it('flapping: enters once, stays quiet, settles after a quiet flap_window with its state', () => {
    const settings = { flap_threshold: 3, flap_window: 30 * M };
    const script: Script = [];
    for (let m = 0; m < 12; m += 2) script.push([m, breach()], [m + 1, ok()]);
    const r = run(script, settings);
    expect(r.log).toBe('firing@0 resolved@1 firing@2 flapping@3');
    expect(r.alert.flapping).toBe(true);
    expect(r.alert.state).toBe('resolved');

    const later = run([...script, [12, breach()], [41, tick], [42, tick]], settings);
    expect(later.log).toBe('firing@0 resolved@1 firing@2 flapping@3 settled@42');
    expect(later.alert.flapping).toBe(false);
    expect(later.alert.state).toBe('firing');
    const settled = later.events.at(-1)!;
    expect(settled.type).toBe('settled');
  });

  it('a settled event carries the state it settled in', () => {
    const settings = { flap_threshold: 2, flap_window: 10 * M };
    let t: TrackedAlert | undefined;
    const events: AlertEvent[] = [];
    for (const [m, s] of [[0, breach()], [1, ok()], [2, breach()], [3, ok()], [20, tick]] as Script) {
      const r = step(t, { signal: s, now: m * M, settings: { ...base, ...settings }, identity: id });
      t = r.next;
      events.push(...r.events);
    }
    expect(events.map((e) => e.type)).toEqual(['firing', 'resolved', 'flapping', 'settled']);
    expect(events.at(-1)!.alert).toMatchObject({ state: 'resolved', flapping: false });
    expect(events[2]!.alert.flapping).toBe(true);
  });

  it('retire resolves a firing alert and cancels a pending one', () => {
    expect(run([[0, breach()], [1, { type: 'retire' }]]).log).toBe('firing@0 resolved@1');
    expect(run([[0, breach()], [1, { type: 'retire' }]], { for: 5 * M }).log).toBe('pending@0 cancelled@1');
  });

  // flap_threshold 1: firing@5, then the resolve at 6 is the second change, so it flaps from there on, quietly.
  it.each<[string, Script, resolvedAtMin: number]>([
    ['resolved (keeps its resolve time)', [[0, breach()], [5, tick], [6, ok()]], 6],
    ['firing', [[0, breach()], [5, tick], [6, ok()], [7, breach()], [12, tick]], 8],
    ['pending again', [[0, breach()], [5, tick], [6, ok()], [7, breach()]], 8],
    ['inactive again (a pending that was cancelled)', [[0, breach()], [5, tick], [6, ok()], [7, breach()], [7.5, ok()]], 8],
  ])('retire of a flapping alert that is %s resolves it: people told it flaps hear that it is over', (_name, script, resolvedAt) => {
    const r = run([...script, [8, { type: 'retire' }]], { for: 5 * M, flap_threshold: 1, flap_window: HOUR });
    expect(r.log).toBe('pending@0 firing@5 flapping@6 resolved@8');
    expect(r.alert).toMatchObject({ state: 'resolved', flapping: false, resolved_at: resolvedAt * M });
  });

  it('never changes the previous state object', () => {
    const first = step(undefined, { signal: breach(), now: 0, settings: base, identity: id }).next;
    const copy = structuredClone(first);
    step(first, { signal: ok(), now: M, settings: base, identity: id });
    expect(first).toEqual(copy);
  });

  it('a new alert has no change history: flap_threshold 1 lets its first firing through, a failed first poll stores none', () => {
    expect(run([[0, breach()]], { flap_threshold: 1 }).log).toBe('firing@0');
    expect(step(undefined, { signal: failed, now: 0, settings: base, identity: id }).next.alert.changes).toEqual([]);
  });

  it('non-finite values are stored as null; a verdict that names its previous value sets previous_value', () => {
    const inf = run([[0, { type: 'verdict', verdict: { status: 'breach', value: Infinity, threshold: NaN } }]]);
    expect(inf.alert).toMatchObject({ value: null, threshold: null, peak: null });
    const prev = run([[0, { type: 'verdict', verdict: { status: 'breach', value: 0.09, threshold: 0.02, previous: 0.04 } }]]);
    expect(prev.alert.previous_value).toBe(0.04);
  });

  it.each<[string, Array<number | null>, number | null, number | null]>([
    ['rising above the threshold: the max', [0.7, 0.9, 0.8], 0.5, 0.9],
    ['falling below it: the min', [0.3, 0.1, 0.2], 0.5, 0.1],
    ['a value that is not finite leaves the peak', [0.3, 0.1, null], 0.5, 0.1],
    ['a first value that is not finite: the next one is the peak', [null, 0.2], 0.5, 0.2],
    ['from below to above: the max', [0.3, 0.7], 0.5, 0.7],
    ['from above to below: the max', [0.7, 0.3], 0.5, 0.7],
    ['below, then exactly at the threshold: the max', [0.3, 0.5], 0.5, 0.5],
    ['at the threshold, then below: the max', [0.5, 0.3], 0.5, 0.5],
    ['no threshold, negative values: the max', [-0.3, -0.1, -0.2], null, -0.1],
  ])('peak: %s', (_name, values, threshold, peak) => {
    const script: Script = values.map((v, i) => [i, { type: 'verdict', verdict: { status: 'breach', value: v ?? NaN, threshold } }]);
    expect(run(script).alert.peak).toBe(peak);
  });

  it('changes older than flap_window (or exactly that old) do not count towards flapping', () => {
    const settings = { flap_threshold: 2, flap_window: 10 * M };
    expect(run([[0, breach()], [5, ok()], [10, breach()]], settings).log).toBe('firing@0 resolved@5 firing@10');
    expect(run([[0, breach()], [5, ok()], [9, breach()]], settings).log).toBe('firing@0 resolved@5 flapping@9');
  });

  it('retire and settling leave an empty change history; a step result carries dataError only for a data error', () => {
    expect(run([[0, breach()], [1, { type: 'retire' }]]).alert.changes).toEqual([]);
    const settled = run([[0, breach()], [1, ok()], [2, breach()], [3, ok()], [20, tick]], { flap_threshold: 2, flap_window: 10 * M });
    expect(settled.log).toBe('firing@0 resolved@1 flapping@2 settled@20');
    expect(settled.alert.changes).toEqual([]);
    expect(Object.keys(step(undefined, { signal: breach(), now: 0, settings: base, identity: id }))).toEqual(['next', 'events']);
  });

  it('fingerprints are 16 hex digits, stable, and differ by rule and entity', () => {
    expect(fingerprint('r', 'e1')).toMatch(/^[0-9a-f]{16}$/);
    expect(fingerprint('r', 'e1')).toBe(fingerprint('r', 'e1'));
    expect(fingerprint('r', 'e1')).not.toBe(fingerprint('r', 'e2'));
    expect(fingerprint('ra', 'b')).not.toBe(fingerprint('r', 'ab'));
  });
});

describe('lifecycle properties', () => {
  // Breaches and oks weigh more, so alerts flip, flap and settle often (a uniform mix rarely reached `settled`).
  const signal = fc.oneof(
    { arbitrary: fc.constant(breach()), weight: 3 },
    { arbitrary: fc.constant(ok()), weight: 3 },
    fc.constant(wait),
    fc.constant(bad),
    fc.constant(absent),
    fc.constant(failed),
    fc.constant(tick),
  );
  /** The same, and now and then the rule is removed (retire) and, by the next signal, back. */
  const withRetire = fc.oneof({ arbitrary: signal, weight: 12 }, { arbitrary: fc.constant<Signal>({ type: 'retire' }), weight: 1 });
  /** Minutes between two signals: mostly a poll interval or so, now and then a quiet stretch (flap windows run out). */
  const gap = fc.oneof({ arbitrary: fc.integer({ min: 0, max: 3 }), weight: 5 }, fc.integer({ min: 4, max: 40 }));
  const settings = fc.record({
    for: fc.integer({ min: 0, max: 5 }).map((n) => n * M),
    keep_firing_for: fc.integer({ min: 0, max: 5 }).map((n) => n * M),
    absent_for: fc.integer({ min: 1, max: 4 }),
    flap_threshold: fc.oneof({ arbitrary: fc.integer({ min: 1, max: 3 }), weight: 3 }, fc.integer({ min: 4, max: 8 })),
    flap_window: fc.integer({ min: 1, max: 30 }).map((n) => n * M),
  });

  it('from no alert, a step either records an event or leaves an inactive, steady pair (the engine stores a new pair only on an event)', () => {
    fc.assert(
      fc.property(settings, withRetire, fc.integer({ min: 0, max: 1000 }), (s, sig, min) => {
        const r = step(undefined, { signal: sig, now: min * M, settings: s, identity: id });
        if (r.events.length === 0) expect(r.next).toMatchObject({ alert: { state: 'inactive', flapping: false }, cleared_at: null });
      }),
      { numRuns: 500 },
    );
  });

  it('never announces firing twice without a resolve between (flapping does not reset that), is quiet while flapping, and never changes on a failed poll', () => {
    fc.assert(
      fc.property(settings, fc.array(fc.tuple(withRetire, gap), { maxLength: 80, size: 'max' }), (s, script) => {
        let t: TrackedAlert | undefined;
        let now = 0;
        // What people were last told, firing or resolved, over the whole sequence. A `flapping` message leaves it
        // as it was; a `settled` message says where the alert landed, which is how it is delivered (render.ts and
        // the groups send a settled alert as FIRING or RESOLVED by its state), so it is the notice of that state.
        let told: 'firing' | 'resolved' | undefined;
        let unstable = false; // between a flapping message and the settled (or retire) that ends it
        const seen: string[] = [];
        for (const [sig, gap] of script) {
          now += gap * M;
          const r = step(t, { signal: sig, now, settings: s, identity: id });
          if (sig.type === 'failed_poll') {
            expect(r.events).toEqual([]);
            if (t) expect(r.next).toEqual(t);
          }
          for (const e of r.events) {
            seen.push(`${e.type}(${e.alert.state})@${now / M}`);
            const where = seen.join(' ');
            switch (e.type) {
              case 'firing':
                expect(unstable, `firing while flapping: ${where}`).toBe(false);
                expect(told, `firing twice without a resolve between: ${where}`).not.toBe('firing');
                told = 'firing';
                break;
              case 'resolved':
                if (unstable) {
                  // Only retiring the rule ends a flapping alert with a resolve ("they hear that it is over").
                  expect(sig.type, `resolved while flapping: ${where}`).toBe('retire');
                  unstable = false;
                } else expect(told, `resolved without a firing before it: ${where}`).toBe('firing');
                told = 'resolved';
                break;
              case 'flapping':
                expect(unstable, `flapping twice: ${where}`).toBe(false);
                expect(e.alert.flapping).toBe(true);
                unstable = true;
                break;
              case 'settled':
                expect(unstable, `settled without flapping: ${where}`).toBe(true);
                expect(e.alert.flapping).toBe(false);
                unstable = false;
                told = e.alert.state === 'firing' ? 'firing' : 'resolved';
                break;
              case 'pending':
              case 'cancelled':
                expect(unstable, `${e.type} while flapping: ${where}`).toBe(false);
                break;
            }
          }
          t = r.next;
        }
      }),
      { numRuns: 1000 },
    );
  });
});

describe('step shares what it does not change', () => {
  const deepFreeze = (t: TrackedAlert): TrackedAlert => {
    for (const m of [t.alert.labels, t.alert.annotations, t.alert.changes, t.alert]) Object.freeze(m);
    return Object.freeze(t);
  };
  const signal = fc.constantFrom<Signal>(breach(0.9), breach(2), ok(), wait, bad, absent, failed, tick, { type: 'retire' }, {
    type: 'verdict',
    verdict: { status: 'breach', value: 3, threshold: 0.5 },
    describe: (current) => ({ labels: { ...current.labels, chain: 'base' }, annotations: { summary: 'moved' } }),
  });

  it('never changes a previous state in place (frozen, maps and list included), in any run of signals, flapping too', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 30 }), signal), { maxLength: 30 }), (script) => {
        let t: TrackedAlert | undefined;
        let min = 0;
        for (const [dt, s] of script) {
          min += dt;
          const before = t === undefined ? undefined : structuredClone(t);
          const r = step(t === undefined ? undefined : deepFreeze(t), { signal: s, now: min * M, settings: { ...base, flap_threshold: 2, for: 5 * M }, identity: id });
          if (before !== undefined) expect(t).toEqual(before);
          t = r.next;
        }
      }),
      { numRuns: 500, seed: 20261126 },
    );
  });
});
