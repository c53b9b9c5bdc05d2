/**
 * Annotation templates of a rule (SPEC §3 `annotations`): what a template shows for each kind of verdict, and which
 * names `lookout check` lets it read — a typo is refused at load time with a suggestion, not rendered blank at 3 a.m.
 */
import { describe, expect, it } from 'vitest';
import { annotationCheck, renderAnnotations, templateScope } from '../src/rules/annotations.js';
import { apyJump } from '../src/rules/kinds/apy-jump.js';
import { threshold } from '../src/rules/kinds/threshold.js';
import { utilizationAbove } from '../src/rules/kinds/utilization-above.js';
import type { Verdict } from '../src/rules/rule-kind.js';
import { NOW, market, position, rule } from './rules-helpers.js';

/** The problems `lookout check` reports for a utilization_above rule with these annotations. */
function problemsOf(annotations: Record<string, string>, raw: Record<string, unknown> = { kind: 'utilization_above', threshold: 0.9 }) {
  const r = rule({ ...raw, annotations });
  const kind = { utilization_above: utilizationAbove, threshold, apy_jump: apyJump }[r.kind as string]!;
  return kind.check!(r);
}

describe('annotation check: the names a template may read', () => {
  it('accepts the verdict’s values, the reading’s identity, the kind’s context, fields, labels and the rule', () => {
    expect(
      problemsOf({
        verdict: '{{ value }} {{ threshold }} {{ previous }} {{ entity }} {{ at }} {{ kind }} {{ reason }}',
        context: '{{ utilization | pct }} {{ clear_below }}',
        fields: '{{ borrow_apy }} {{ market.loan_asset_symbol }} {{ market }}',
        labels: '{{ labels.chain }} {{ labels.collateral_asset_symbol }}',
        rule: '{{ rule }} {{ rule.name }} {{ rule.kind }} {{ rule.severity }} {{ rule.threshold }} {{ rule.clear_below }} {{ rule.for | duration "ms" }}',
        nested: '{{ rule.select.chain }} {{ rule.labels.team }} {{ rule.annotations.summary }}',
      }),
    ).toEqual([]);
  });

  it.each([
    ['another kind’s context', '{{ change }}', "unknown field 'change' in template for a market reading"],
    ['a label of another reading kind', '{{ labels.wallet }}', "unknown field 'labels.wallet' in template for a market reading"],
    ['the labels object itself', '{{ labels }}', "unknown field 'labels' in template for a market reading (did you mean 'labels.chain'?)"],
    ['a path below a label', '{{ labels.chain.name }}', "unknown field 'labels.chain.name' in template for a market reading"],
    ['another kind’s parameter', '{{ rule.max_lag }}', "unknown field 'rule.max_lag' in template for a market reading"],
    ['a path below a plain rule key', '{{ rule.name.first }}', "unknown field 'rule.name.first' in template for a market reading"],
    ['a path below the rule’s threshold', '{{ rule.threshold.x }}', "unknown field 'rule.threshold.x' in template for a market reading"],
    ['a field of another reading kind', '{{ value_usd }}', "unknown field 'value_usd' in template for a market reading"],
  ])('refuses %s', (_what, text, message) => {
    expect(problemsOf({ summary: text })).toEqual([{ path: ['annotations', 'summary'], message: `summary: ${message}` }]);
  });

  it.each([
    ['a verdict name', '{{ valeu }}', 'value'],
    ['a context key', '{{ clear_belw }}', 'clear_below'],
    ['a field', '{{ utilisation }}', 'utilization'],
    ['a label', '{{ labels.chian }}', 'labels.chain'],
  ])('suggests the name meant for a typo of %s', (_what, text, meant) => {
    const [p] = problemsOf({ summary: text });
    expect(p!.message).toMatch(new RegExp(`\\(did you mean '${meant.replace('.', '\\.')}'\\?\\)$`));
  });

  it('reports an unknown name once per annotation, and lets a name piped through default be absent', () => {
    expect(problemsOf({ a: '{{ nope }} and {{ nope | upper }}', b: '{{ nope }} {{ gone | default "-" }}' })).toEqual([
      { path: ['annotations', 'a'], message: "a: unknown field 'nope' in template for a market reading" },
      { path: ['annotations', 'b'], message: "b: unknown field 'nope' in template for a market reading" },
    ]);
  });

  it('reports syntax problems and unknown filters under the annotation’s key', () => {
    expect(problemsOf({ summary: 'x {{ utilization | percent }} {{ }}' })).toEqual([
      { path: ['annotations', 'summary'], message: expect.stringMatching(/^summary: unknown filter 'percent' \(known: pct, /) },
      { path: ['annotations', 'summary'], message: "summary: empty '{{ }}' at character 31" },
    ]);
  });

  it('checks against the reading kind the rule judges: a threshold rule on positions knows position fields and labels', () => {
    const onPositions = { kind: 'threshold', reading: 'position', field: 'value_usd', op: '<', value: 1 };
    expect(problemsOf({ s: '{{ value_usd | usd }} {{ labels.wallet }} {{ field }} {{ op }} {{ rule.reading }}' }, onPositions)).toEqual([]);
    expect(problemsOf({ s: '{{ utilization }}' }, onPositions)).toEqual([
      { path: ['annotations', 's'], message: "s: unknown field 'utilization' in template for a position reading" },
    ]);
  });

  it('names every reading kind a rule reads when it reads several', () => {
    expect(annotationCheck({ s: '{{ nope }}' }, utilizationAbove, ['market', 'position'])).toEqual([
      { path: ['annotations', 's'], message: "s: unknown field 'nope' in template for market/position readings" },
    ]);
    // A field of either kind, or a label of either, is known.
    expect(annotationCheck({ s: '{{ value_usd }} {{ utilization }} {{ labels.wallet }}' }, utilizationAbove, ['market', 'position'])).toEqual([]);
  });

  it('does not check the fields of reading kinds whose fields are unspecified, but still the rule’s keys', () => {
    expect(annotationCheck({ s: '{{ anything.at.all }} {{ labels.whatever }}' }, threshold, ['asset'])).toEqual([]);
    expect(annotationCheck({ s: '{{ rule.nope }}' }, threshold, ['asset'])).toEqual([
      { path: ['annotations', 's'], message: "s: unknown field 'rule.nope' in template for an asset reading" },
    ]);
  });

  it('skips an annotation that is not text (the schema refuses it with its own message)', () => {
    expect(annotationCheck({ s: 42, t: '{{ nope }}' }, utilizationAbove, ['market'])).toEqual([
      { path: ['annotations', 't'], message: "t: unknown field 'nope' in template for a market reading" },
    ]);
  });
});

describe('annotation rendering: what each verdict shows', () => {
  const annotations = {
    values: '{{ value }} / {{ threshold }} / {{ previous }} / {{ reason }}',
    context: '{{ utilization }} {{ clear_below }}',
    identity: '{{ entity }} {{ kind }} {{ at | date }} {{ labels.chain }} {{ rule.name }} {{ rule.threshold }}',
  };
  const r = { ...rule({ kind: 'utilization_above', threshold: 0.9, clear_below: 0.8 }), annotations };
  const reading = market({ utilization: 0.95 });

  it.each<[string, Verdict | undefined, Record<string, string>]>([
    [
      'a breach: its value, threshold and context; no previous',
      { status: 'breach', value: 0.95, threshold: 0.9, context: { utilization: 0.951, clear_below: 0.8 } },
      { values: '0.95 / 0.9 / n/a / n/a', context: '0.951 0.8' },
    ],
    ['an ok with a previous value', { status: 'ok', value: 0.5, threshold: 0.9, previous: 0.7 }, { values: '0.5 / 0.9 / 0.7 / n/a', context: '0.95 n/a' }],
    ['a wait: its reason, no value', { status: 'wait', reason: 'no reading 3600s old yet' }, { values: 'n/a / n/a / n/a / no reading 3600s old yet', context: '0.95 n/a' }],
    ['a data error: its reason and the value refused', { status: 'data_error', reason: 'utilization 2 outside [0, 1]', value: 2 }, { values: '2 / n/a / n/a / utilization 2 outside [0, 1]', context: '0.95 n/a' }],
    ['a data error without a value', { status: 'data_error', reason: 'utilization missing' }, { values: 'n/a / n/a / n/a / utilization missing', context: '0.95 n/a' }],
    ['no verdict (a resolve)', undefined, { values: 'n/a / n/a / n/a / n/a', context: '0.95 n/a' }],
  ])('%s', (_what, verdict, want) => {
    expect(renderAnnotations(r, reading, verdict)).toEqual({ ...want, identity: `morpho-base-0xabc123 market ${new Date(NOW).toISOString().slice(0, 10)} base test-rule 0.9` });
  });

  it('a field named like a verdict value shows the verdict’s (the context and values win over the reading’s fields)', () => {
    const odd = market({ value: 'field value', utilization: 0.95, reason: 'field reason' });
    const rr = { ...r, annotations: { s: '{{ value }} {{ utilization }} {{ reason }}' } };
    expect(renderAnnotations(rr, odd, { status: 'breach', value: 0.95, threshold: 0.9, context: { utilization: 0.96 } })).toEqual({ s: '0.95 0.96 field reason' });
    expect(renderAnnotations(rr, odd, { status: 'wait', reason: 'later' })).toEqual({ s: 'n/a 0.95 later' });
    expect(renderAnnotations(rr, odd)).toEqual({ s: 'field value 0.95 field reason' });
  });

  it('a rule without annotations renders none', () => {
    expect(renderAnnotations(rule({ kind: 'utilization_above', threshold: 0.9 }), reading, { status: 'ok', value: 0.5, threshold: 0.9 })).toEqual({});
  });

  it('templateScope holds the reading’s fields, its identity and the verdict’s values', () => {
    const scope = templateScope(r, position({ value_usd: 10 }), { status: 'data_error', reason: 'bad' });
    expect(scope).toMatchObject({ value_usd: 10, entity: 'pos-1', kind: 'position', at: NOW, rule: r, reason: 'bad', value: null });
    expect(scope.labels).toEqual(position().labels);
    expect(templateScope(r, reading, { status: 'ok', value: 1, threshold: 2 })).toMatchObject({ value: 1, threshold: 2, previous: null });
    expect(templateScope(r, reading, { status: 'wait', reason: 'w' })).toMatchObject({ value: null, reason: 'w' });
    expect('reason' in templateScope(r, reading)).toBe(false);
  });
});
