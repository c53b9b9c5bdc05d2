/**
 * `lean` verdicts: asked with `lean: true` every rule kind gives the verdict it gives without, except that an `ok`
 * verdict may leave out its `context` (the engine asks so for entities without an active alert: 70,000 readings a
 * poll, whose context nothing reads). Every kind with a context is here, with a reading it finds ok and one it finds
 * a breach.
 */
import { describe, expect, it } from 'vitest';
import type { Reading } from '../src/model.js';
import { ruleKinds } from '../src/rules/registry.js';
import type { HistoryView, RuleKind } from '../src/rules/rule-kind.js';
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

describe('lean verdicts', () => {
  it('has a case for every rule kind whose verdicts carry a context', () => {
    expect(ruleKinds.filter((k) => k.context.length > 0).map((k) => k.kind).sort()).toEqual(Object.keys(cases).sort());
  });

  for (const kind of ruleKinds.filter((k) => k.context.length > 0)) {
    it(`${kind.kind}: an ok verdict without its context, a breach whole; the rest as without lean`, () => {
      const c = cases[kind.kind]!;
      const judge = (k: RuleKind, reading: Reading, lean: boolean | undefined, active = false) =>
        k.evaluate({ rule: c.rule, reading, now: NOW, history: c.history ?? noHistory, active, ...(lean === undefined ? {} : { lean }) });
      for (const active of [false, true]) {
        const full = judge(kind, c.ok, undefined, active);
        expect(full.status).toBe('ok');
        expect(judge(kind, c.ok, false, active)).toEqual(full);
        const lean = judge(kind, c.ok, true, active);
        expect(lean.status === 'ok' && lean.context).toBeUndefined();
        expect(lean).toEqual({ ...full, context: undefined });

        const breach = judge(kind, c.breach, undefined, active);
        expect(breach.status).toBe('breach');
        expect(breach.status === 'breach' && breach.context).toBeDefined();
        expect(judge(kind, c.breach, true, active)).toEqual(breach);
      }
    });
  }
});
