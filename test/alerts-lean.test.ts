/**
 * The engine asks a rule kind for a verdict's context (`explain`) only where it describes an alert: an active alert
 * judged fine again is still described with its verdict's context (here: keeps firing for a while with its
 * annotations updated, then resolves), a breach of an entity without an alert is described whole, and one that
 * resolved and fires again is described from its new breach. A real SQLite file, rules through the real schema, the
 * engine as the daemon drives it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { fingerprint } from '../src/alerts/lifecycle.js';
import { utilizationAbove } from '../src/rules/kinds/utilization-above.js';
import { ruleKinds } from '../src/rules/registry.js';
import type { Reading } from '../src/model.js';
import type { EvalInput, HistoryView, RuleKind } from '../src/rules/rule-kind.js';
import { drive, engineFor, market, MIN, outcome, rule, T0, tempDirs, tempStore } from './alerts-helpers.js';

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

describe('contexts in the engine', () => {
  it("describes an active alert judged ok with the ok verdict's context, and a new breach with the breach's", () => {
    const store = tempStore(dirs);
    const util = rule({
      name: 'util',
      kind: 'utilization_above',
      threshold: 0.9,
      clear_below: 0.8,
      keep_firing_for: '2m',
      severity: 'warning',
      annotations: { summary: 'utilization {{ utilization | pct }}, clears below {{ clear_below | pct }}' },
    });
    const engine = engineFor(store, [util]);
    const poll = (i: number, utilization: number) => drive(store, engine, outcome('markets', 'metrics', [market('m1', T0 + i * MIN, { utilization })], T0 + i * MIN));
    const summary = () => engine.repo.get(fingerprint('util', 'm1'))?.annotations.summary;

    poll(0, 0.5);
    expect(summary()).toBeUndefined();
    expect(poll(1, 0.95).events.map((e) => e.type)).toEqual(['firing']);
    expect(summary()).toBe('utilization 95%, clears below 80%');
    // Judged ok while firing: still firing (keep_firing_for), described from the ok verdict.
    expect(poll(2, 0.7).events).toEqual([]);
    expect(summary()).toBe('utilization 70%, clears below 80%');
    const resolved = poll(4, 0.6).events;
    expect(resolved.map((e) => e.type)).toEqual(['resolved']);
    expect(resolved[0]!.alert.annotations.summary).toBe('utilization 60%, clears below 80%');
    store.close();
  });

  it('asks a kind for a context exactly where it describes an alert (a breach, or any verdict of an active alert) whose annotations show it', () => {
    const store = tempStore(dirs);
    const explainedFor: string[] = [];
    const kind = utilizationAbove as RuleKind;
    const recording: RuleKind = { ...kind, explain: (input, v) => (explainedFor.push(`${input.reading.entity} ${v.status}`), kind.explain!(input, v)) };
    const kinds = ruleKinds.map((k) => (k.kind === recording.kind ? recording : k));
    const shows = rule({ name: 'util', kind: 'utilization_above', threshold: 0.9, clear_below: 0.8, annotations: { summary: 'clears below {{ clear_below | pct }}' } });
    // The same condition, its annotations reading no name of the kind's context: its alerts are described without one.
    const silent = rule({ name: 'util-plain', kind: 'utilization_above', threshold: 0.9, clear_below: 0.8, annotations: { summary: '{{ entity }} at {{ value | pct }}' } });
    const engine = engineFor(store, [shows, silent], { kinds });
    const poll = (i: number, a: number, b: number) => {
      explainedFor.length = 0;
      drive(store, engine, outcome('markets', 'metrics', [market('a', T0 + i * MIN, { utilization: a }), market('b', T0 + i * MIN, { utilization: b })], T0 + i * MIN));
      return [...explainedFor];
    };
    expect(poll(0, 0.5, 0.95)).toEqual(['b breach']);
    // b fired: its next verdict is described, whatever it is; a resolved alert is no longer active.
    expect(poll(1, 0.5, 0.5)).toEqual(['b ok']);
    expect(poll(2, 0.5, 0.5)).toEqual([]);
    // Firing again and judged again in breach (the alert kept in place): described, so explained, each time.
    expect(poll(3, 0.5, 0.96)).toEqual(['b breach']);
    expect(poll(4, 0.5, 0.97)).toEqual(['b breach']);
    expect(engine.repo.get(fingerprint('util-plain', 'b'))?.annotations.summary).toBe('b at 97%');
    store.close();
  });

  it('an alert that resolved and fires again is described from the new breach', () => {
    const store = tempStore(dirs);
    // clear_below is shown from the verdict's context alone (utilization is a field of the reading too).
    const util = rule({ name: 'util', kind: 'utilization_above', threshold: 0.9, clear_below: 0.8, severity: 'warning', annotations: { summary: 'utilization {{ utilization | pct }} (clears below {{ clear_below | pct }})' } });
    const engine = engineFor(store, [util]);
    const poll = (i: number, utilization: number) => drive(store, engine, outcome('markets', 'metrics', [market('m1', T0 + i * MIN, { utilization })], T0 + i * MIN));
    const summary = () => engine.repo.get(fingerprint('util', 'm1'))?.annotations.summary;

    expect(poll(0, 0.95).events.map((e) => e.type)).toEqual(['firing']);
    const resolved = poll(1, 0.5).events;
    expect(resolved.map((e) => [e.type, e.alert.annotations.summary])).toEqual([['resolved', 'utilization 50% (clears below 80%)']]);
    // Judged ok with no alert active: not described, the resolved alert keeps what it showed.
    expect(poll(2, 0.4).events).toEqual([]);
    expect(summary()).toBe('utilization 50% (clears below 80%)');
    const again = poll(3, 0.97).events;
    expect(again.map((e) => [e.type, e.alert.annotations.summary, e.alert.value])).toEqual([['firing', 'utilization 97% (clears below 80%)', 0.97]]);
    expect(summary()).toBe('utilization 97% (clears below 80%)');
    expect(poll(4, 0.98).events).toEqual([]);
    expect(summary()).toBe('utilization 98% (clears below 80%)');
    store.close();
  });
});

describe('lean verdicts in the engine', () => {
  it('lets a kind share its ok verdict exactly where no alert of the entity is active, and judges active alerts by full verdicts', () => {
    const store = tempStore(dirs);
    const lean: string[] = [];
    const kind = utilizationAbove as RuleKind;
    const recording: RuleKind = { ...kind, evaluate: (input) => (lean.push(`${input.reading.entity} ${input.lean === true}`), kind.evaluate(input)) };
    const kinds = ruleKinds.map((k) => (k.kind === recording.kind ? recording : k));
    const util = rule({ name: 'util', kind: 'utilization_above', threshold: 0.9, keep_firing_for: '5m', annotations: { summary: '{{ value | pct }}' } });
    const engine = engineFor(store, [util], { kinds });
    const poll = (i: number, a: number, b: number) => {
      lean.length = 0;
      drive(store, engine, outcome('markets', 'metrics', [market('a', T0 + i * MIN, { utilization: a }), market('b', T0 + i * MIN, { utilization: b })], T0 + i * MIN));
      return [...lean];
    };
    const b = () => engine.repo.get(fingerprint('util', 'b'))!;
    expect(poll(0, 0.5, 0.95)).toEqual(['a true', 'b true']);
    // b fires: its verdicts are read whole (an ok one keeps it firing for keep_firing_for, with its value and annotations).
    expect(poll(1, 0.5, 0.6)).toEqual(['a true', 'b false']);
    expect([b().state, b().value, b().threshold, b().annotations.summary]).toEqual(['firing', 0.6, 0.9, '60%']);
    expect(poll(2, 0.5, 0.55)).toEqual(['a true', 'b false']);
    expect([b().state, b().value, b().previous_value]).toEqual(['firing', 0.55, 0.6]);
    // Resolved (keep_firing_for ran out): no longer active, so lean again; the resolved alert keeps what it showed.
    expect(poll(7, 0.5, 0.5)).toEqual(['a true', 'b false']);
    expect([b().state, b().value]).toEqual(['resolved', 0.5]);
    expect(poll(8, 0.5, 0.4)).toEqual(['a true', 'b true']);
    expect([b().state, b().value, b().annotations.summary]).toEqual(['resolved', 0.5, '50%']);
    store.close();
  });
});

describe('the evaluate input the engine reuses', () => {
  it('holds neither the last reading nor the poll’s history once the poll is judged', () => {
    const store = tempStore(dirs);
    const seen: Array<{ input: EvalInput; reading: Reading; history: HistoryView }> = [];
    const kind = utilizationAbove as RuleKind;
    const recording: RuleKind = { ...kind, evaluate: (input) => (seen.push({ input, reading: input.reading, history: input.history }), kind.evaluate(input)) };
    const kinds = ruleKinds.map((k) => (k.kind === recording.kind ? recording : k));
    const engine = engineFor(store, [rule({ name: 'util', kind: 'utilization_above', threshold: 0.9 })], { kinds });
    drive(store, engine, outcome('markets', 'metrics', [market('a', T0, { utilization: 0.5 }), market('b', T0, { utilization: 0.95 })], T0));
    expect(seen.map((s) => s.reading.entity)).toEqual(['a', 'b']);
    // One object filled anew for each call (see EvalInput): once the poll is judged it must not keep the poll's
    // readings (50,000 positions) or its history view (the look-backs it cached) alive until the next poll.
    const { input, history } = seen[1]!;
    expect(input.reading).toBeUndefined();
    expect(input.history).not.toBe(history);
    store.close();
  });
});
