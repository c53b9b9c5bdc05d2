/**
 * renderAnnotations builds a scope of only the names its templates read; it must render exactly what the full
 * templateScope renders — the same layer winning where a name is a field, part of the reading's identity and a
 * verdict value at once, absent names and odd member names included.
 */
import { describe, expect, it } from 'vitest';
import { market, rule } from '../../test/rules-helpers.js';
import { renderAnnotations, templateScope } from './annotations.js';
import type { Verdict } from './rule-kind.js';
import { compileTemplate } from './template.js';

const annotations = {
  summary: '{{ entity }} at {{ utilization }} ({{ value }} vs {{ threshold }}, was {{ previous }})',
  layers: '{{ change }} {{ kind }} {{ at }} {{ labels.chain }} {{ reason | default "-" }} {{ rule.name }}',
  odd: '{{ __proto__ }} {{ constructor }} {{ toString }} {{ missing | default "none" }} {{ market.chain }} {{ entity.length }}',
};

const reading = (() => {
  const r = market({ utilization: 0.97, change: 'field change', value: 'field value', kind: 'field kind', reason: 'field reason', labels: 'field labels' });
  Object.defineProperty(r.fields, '__proto__', { value: 'own proto member', enumerable: true, configurable: true, writable: true });
  return r;
})();

const verdicts: Array<[string, Verdict | undefined]> = [
  ['no verdict', undefined],
  ['breach with context', { status: 'breach', value: 0.97, threshold: 0.9, previous: 0.5, context: { change: 0.47, labels: { from: 'context' } } }],
  ['ok without previous', { status: 'ok', value: 0.5, threshold: 0.9 }],
  ['wait', { status: 'wait', reason: 'no reading 3600s old yet' }],
  ['data error', { status: 'data_error', reason: 'utilization unreadable', value: 2 }],
];

describe('renderAnnotations', () => {
  it.each(verdicts)('renders what the full templateScope renders (%s)', (_name, verdict) => {
    const r = { ...rule({ kind: 'threshold', field: 'utilization', op: '>', value: 0.9 }), annotations };
    const full = templateScope(r, reading, verdict);
    const expected = Object.fromEntries(Object.entries(annotations).map(([k, text]) => [k, compileTemplate(text).render(full)]));
    expect(renderAnnotations(r, reading, verdict)).toEqual(expected);
  });
});
