/**
 * Contexts are made in one place: a kind's `evaluate` gives no `context` (70,000 verdicts a poll, whose context
 * nothing reads), and `explained` adds the kind's `explain` where a verdict is shown (the engine, for an alert it
 * describes; `lookout notify render`). Every kind with a context is here, with a reading it finds ok and one it finds
 * a breach, and the verdicts with the contexts each kind gave before contexts moved to `explain`.
 */
import { describe, expect, it } from 'vitest';
import type { Reading } from '../src/model.js';
import { ruleKinds } from '../src/rules/registry.js';
import { evaluateExplained, explained, LEAN_OK, type HistoryView, type Verdict } from '../src/rules/rule-kind.js';
import type { RuleBase } from '../src/rules/schema.js';
import { benchmark, historyOf, HOUR, market, noHistory, NOW, position, rule } from './rules-helpers.js';

interface Case {
  rule: RuleBase;
  ok: Reading;
  breach: Reading;
  history?: HistoryView;
}

const hourAgo = market({ borrow_apy: 0.05 }, NOW - HOUR);
const cases: Record<string, Case> = {
  threshold: { rule: rule({ kind: 'threshold', field: 'utilization', op: '>', value: 0.9 }), ok: market({ utilization: 0.5 }), breach: market({ utilization: 0.95 }) },
  utilization_above: { rule: rule({ kind: 'utilization_above', threshold: 0.9, clear_below: 0.8 }), ok: market({ utilization: 0.5 }), breach: market({ utilization: 0.95 }) },
  apy_jump: {
    rule: rule({ kind: 'apy_jump', window: '1h', min_change: 0.02 }),
    ok: market({ borrow_apy: 0.051 }),
    breach: market({ borrow_apy: 0.2 }),
    history: historyOf([hourAgo]),
  },
  oracle_lag: { rule: rule({ kind: 'oracle_lag', max_lag: '2h' }), ok: market({ oracle_last_update: NOW - HOUR }), breach: market({ oracle_last_update: NOW - 3 * HOUR }) },
  price_deviation: { rule: rule({ kind: 'price_deviation', max_deviation: 0.01 }), ok: market({ oracle_price_scaled: 1.001, service_price: 1 }), breach: market({ oracle_price_scaled: 1.05, service_price: 1 }) },
  unverified_position: { rule: rule({ kind: 'unverified_position', min_value_usd: 10_000 }), ok: position({ verified: true }), breach: position({ verified: false, value_usd: 50_000 }) },
  stale_benchmark: { rule: rule({ kind: 'stale_benchmark' }), ok: benchmark({ day: NOW - 24 * HOUR }), breach: benchmark({ isStale: true }) },
};

/** What each kind's `evaluate` gave with its context (without `lean`) before contexts moved to `explain`, active or not. */
const before: Record<string, { ok: Verdict; breach: Verdict }> = {
  utilization_above: {
    ok: { status: 'ok', value: 0.5, threshold: 0.9, context: { utilization: 0.5, clear_below: 0.8 } },
    breach: { status: 'breach', value: 0.95, threshold: 0.9, context: { utilization: 0.95, clear_below: 0.8 } },
  },
  apy_jump: {
    ok: { status: 'ok', value: 0.051, threshold: 0.02, previous: 0.05, context: { change: 0.000999999999999994, change_rel: 0.01999999999999988, field: 'borrow_apy', window: 3600, direction: 'up', apy: 0.051 } },
    breach: { status: 'breach', value: 0.2, threshold: 0.02, previous: 0.05, context: { change: 0.15000000000000002, change_rel: 3.0000000000000004, field: 'borrow_apy', window: 3600, direction: 'up', apy: 0.2 } },
  },
  oracle_lag: {
    ok: { status: 'ok', value: 3600, threshold: 7200, context: { lag: 3600, max_lag: 7200, heartbeat: null } },
    breach: { status: 'breach', value: 10800, threshold: 7200, context: { lag: 10800, max_lag: 7200, heartbeat: null } },
  },
  unverified_position: {
    ok: { status: 'ok', value: 50000, threshold: 10000, context: { verified: true, value_usd: 50000 } },
    breach: { status: 'breach', value: 50000, threshold: 10000, context: { verified: false, value_usd: 50000 } },
  },
  stale_benchmark: {
    ok: { status: 'ok', value: 86400, threshold: 129600, context: { age: 86400, incomplete_for: null, day: 1736856000000, max_age: 129600, reason: null } },
    breach: { status: 'breach', value: 129600, threshold: 129600, context: { age: 129600, incomplete_for: null, day: 1736812800000, max_age: 129600, reason: 'stale' } },
  },
  threshold: {
    ok: { status: 'ok', value: 0.5, threshold: 0.9, context: { field: 'utilization', op: '>' } },
    breach: { status: 'breach', value: 0.95, threshold: 0.9, context: { field: 'utilization', op: '>' } },
  },
  price_deviation: {
    ok: { status: 'ok', value: 0.0009999999999998899, threshold: 0.01, context: { deviation: 0.0009999999999998899, oracle_price: 1.001, service_price: 1 } },
    breach: { status: 'breach', value: 0.050000000000000044, threshold: 0.01, context: { deviation: 0.050000000000000044, oracle_price: 1.05, service_price: 1 } },
  },
};

describe('contexts made only where a verdict is shown', () => {
  it('has a case for every rule kind whose verdicts carry a context, and each of them explains', () => {
    const withContext = ruleKinds.filter((k) => k.context.length > 0);
    expect(withContext.map((k) => k.kind).sort()).toEqual(Object.keys(cases).sort());
    expect(withContext.filter((k) => typeof k.explain !== 'function').map((k) => k.kind)).toEqual([]);
  });

  for (const kind of ruleKinds.filter((k) => k.context.length > 0)) {
    it(`${kind.kind}: evaluate gives no context; explained, the verdict with the context the kind gave before`, () => {
      const c = cases[kind.kind]!;
      for (const active of [false, true]) {
        for (const which of ['ok', 'breach'] as const) {
          const input = { rule: c.rule, reading: c[which], now: NOW, history: c.history ?? noHistory, active };
          const bare = kind.evaluate(input);
          expect(bare.status).toBe(which);
          expect('context' in bare).toBe(false);
          expect(evaluateExplained(kind, input)).toEqual(before[kind.kind]![which]);
          // The verdict object itself is completed, and an explained one is left as it is.
          const v = kind.evaluate(input);
          expect(explained(kind, input, v)).toBe(v);
          expect(explained(kind, input, v)).toEqual(before[kind.kind]![which]);
        }
      }
    });
  }

  // Every kind but stale_benchmark (a few benchmarks a poll) shares one `ok` verdict with a caller that reads only its status.
  for (const kind of ruleKinds.filter((k) => k.kind !== 'stale_benchmark')) {
    it(`${kind.kind}: with a lean input, an ok verdict is the shared LEAN_OK and a breach is the verdict it always was`, () => {
      const c = cases[kind.kind]!;
      for (const active of [false, true]) {
        const input = (reading: Reading, lean?: boolean) => ({ rule: c.rule, reading, now: NOW, history: c.history ?? noHistory, active, ...(lean === undefined ? {} : { lean }) });
        expect(kind.evaluate(input(c.ok, true))).toBe(LEAN_OK);
        expect(kind.evaluate(input(c.breach, true))).toEqual(kind.evaluate(input(c.breach)));
        expect(kind.evaluate(input(c.breach, true)).status).toBe('breach');
        // Not lean (unset or false): an ok verdict of its own, with its value.
        for (const lean of [undefined, false]) {
          const ok = kind.evaluate(input(c.ok, lean));
          expect(ok).not.toBe(LEAN_OK);
          expect(ok).toEqual({ ...before[kind.kind]!.ok, context: undefined });
        }
      }
    });
  }

  it('LEAN_OK cannot be changed', () => {
    expect(Object.isFrozen(LEAN_OK)).toBe(true);
    expect(LEAN_OK).toEqual({ status: 'ok', value: null, threshold: null });
  });

  it('a wait or data_error verdict is not explained', () => {
    const c = cases.apy_jump!;
    const wait = evaluateExplained(ruleKinds.find((k) => k.kind === 'apy_jump')!, { rule: c.rule, reading: c.ok, now: NOW, history: noHistory, active: false });
    expect(wait).toEqual({ status: 'wait', reason: 'no reading 3600s old yet' });
  });
});
