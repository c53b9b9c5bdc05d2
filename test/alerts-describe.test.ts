/**
 * describeAlert given the alert's current labels and annotations keeps those very objects where what it would build is
 * equal, and builds them where anything differs: an alert judged again every poll keeps its maps (issue 14, B4), and
 * never keeps one that a reading or the rule changed.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { describeAlert } from '../src/alerts/engine.js';
import type { Verdict } from '../src/rules/rule-kind.js';
import { market, rule } from './rules-helpers.js';

const breach = (value: number): Verdict => ({ status: 'breach', value, threshold: 0.9 });
const utilRule = (labels: Record<string, string>, severity: 'warning' | 'critical' = 'warning') =>
  rule({ kind: 'threshold', field: 'utilization', op: '>', value: 0.9, severity, labels, annotations: { summary: '{{ entity }} at {{ value | pct }}', chain: '{{ labels.chain }}' } });

describe('describeAlert with the current description', () => {
  it('returns the current labels and annotations objects when nothing they show changed', () => {
    // The rule's own label over one of the reading's, and one the rule's name and severity win over.
    const r = utilRule({ team: 'risk', chain: 'rule chain' });
    const reading = market({ utilization: 0.97 });
    reading.labels = { ...reading.labels, chain: 'reading chain', severity: 'reading severity' };
    const current = describeAlert(r, reading, breach(0.97));
    const again = describeAlert(r, { ...reading, labels: { ...reading.labels }, fields: { ...reading.fields } }, breach(0.97), current);
    expect(again.labels).toBe(current.labels);
    expect(again.annotations).toBe(current.annotations);
  });

  it('builds new annotations when one text changed, and when the current ones have a key more or less', () => {
    const r = utilRule({});
    const reading = market({ utilization: 0.97 });
    const current = describeAlert(r, reading, breach(0.97));
    const moved = describeAlert(r, reading, breach(0.98), current);
    expect(moved.annotations).toEqual(describeAlert(r, reading, breach(0.98)).annotations);
    expect(moved.annotations).not.toBe(current.annotations);
    // The text that changed after one that did not: the new object holds both.
    const later = { ...r, annotations: { chain: '{{ labels.chain }}', summary: '{{ value | pct }}' } };
    const before = describeAlert(later, reading, breach(0.97));
    const after = describeAlert(later, reading, breach(0.98), before);
    expect(after.annotations).toEqual({ chain: 'base', summary: '98%' });
    expect(after.annotations).toEqual(describeAlert(later, reading, breach(0.98)).annotations);
    for (const odd of [{ ...current.annotations, extra: 'x' }, { summary: current.annotations.summary! }] as Array<Record<string, string>>) {
      const fresh = describeAlert(r, reading, breach(0.97), { labels: current.labels, annotations: odd });
      expect(fresh.annotations).toEqual(current.annotations);
      expect(fresh.annotations).not.toBe(odd);
    }
  });

  it('whatever the current labels are, the labels it returns are those it would build without them', () => {
    const key = fc.constantFrom('chain', 'team', 'rule', 'alertname', 'severity', 'poll', 'market_id', '__proto__');
    const labels = fc.dictionary(key, fc.constantFrom('a', 'b', 'util'), { maxKeys: 6 });
    fc.assert(
      fc.property(labels, labels, labels, fc.constantFrom('warning' as const, 'critical' as const), fc.boolean(), (readingLabels, ruleLabels, tweak, severity, fromBuilt) => {
        const r = utilRule(ruleLabels, severity);
        const reading = { ...market({ utilization: 0.97 }), labels: readingLabels };
        const built = describeAlert(r, reading, breach(0.97)).labels;
        // The current labels: those built for this reading with some changed, added or taken away, or any others.
        const current = fromBuilt ? Object.fromEntries(Object.entries({ ...built, ...tweak }).filter(([k]) => !(k in tweak) || tweak[k] !== 'util')) : tweak;
        const got = describeAlert(r, reading, breach(0.97), { labels: current, annotations: {} }).labels;
        expect(got).toEqual(built);
        expect(Object.keys(got).sort()).toEqual(Object.keys(built).sort());
      }),
      { numRuns: 2_000, seed: 20261126 },
    );
  });
});
