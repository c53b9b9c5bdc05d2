import { describe, expect, it } from 'vitest';
import { market, rule } from '../../test/rules-helpers.js';
import { annotationCheck, renderAnnotations, templateScope } from './annotations.js';
import { apyJump } from './kinds/apy-jump.js';
import { utilizationAbove } from './kinds/utilization-above.js';
import { evaluateExplained } from './rule-kind.js';
import { compileTemplate } from './template.js';

const render = (text: string, scope: Record<string, unknown>) => compileTemplate(text).render(scope);

describe('filters', () => {
  it.each([
    { name: 'pct', text: '{{x | pct}}', x: 0.953, want: '95.3%' },
    { name: 'pct whole', text: '{{x | pct}}', x: 0.95, want: '95%' },
    { name: 'pct two decimals', text: '{{x | pct}}', x: 0.95349, want: '95.35%' },
    { name: 'pct with precision', text: '{{x | pct 0}}', x: 0.9551, want: '96%' },
    { name: 'pct of a numeric string', text: '{{x | pct}}', x: '0.25', want: '25%' },
    { name: 'usd large', text: '{{x | usd}}', x: 1234567.4, want: '$1,234,567' },
    { name: 'usd small', text: '{{x | usd}}', x: 12.5, want: '$12.50' },
    { name: 'usd negative', text: '{{x | usd}}', x: -25000, want: '-$25,000' },
    { name: 'bps', text: '{{x | bps}}', x: 0.0123, want: '123 bps' },
    { name: 'bps fractional', text: '{{x | bps}}', x: 0.00015, want: '1.5 bps' },
    { name: 'duration h m', text: '{{x | duration}}', x: 3900, want: '1h 5m' },
    { name: 'duration two largest units', text: '{{x | duration}}', x: 95_340, want: '1d 2h' },
    { name: 'duration seconds', text: '{{x | duration}}', x: 45, want: '45s' },
    { name: 'duration zero', text: '{{x | duration}}', x: 0, want: '0s' },
    { name: 'duration skips empty middle units', text: '{{x | duration}}', x: 3605, want: '1h' },
    { name: 'duration of milliseconds', text: '{{x | duration "ms"}}', x: 600_000, want: '10m' },
    { name: 'date', text: '{{x | date}}', x: Date.UTC(2025, 0, 14), want: '2025-01-14' },
    { name: 'time', text: '{{x | time}}', x: Date.UTC(2025, 0, 14, 12, 5, 30), want: '2025-01-14 12:05 UTC' },
    { name: 'date of a huge number is left as is', text: '{{x | date}}', x: 1e300, want: '1e+300' },
    { name: 'short address', text: '{{x | short}}', x: '0x1234567890abcdef1234567890abcdef1234abcd', want: '0x1234…abcd' },
    { name: 'short leaves short strings', text: '{{x | short}}', x: 'USDC', want: 'USDC' },
    { name: 'upper', text: '{{x | upper}}', x: 'base', want: 'BASE' },
    { name: 'round', text: '{{x | round 2}}', x: 1.23456, want: '1.23' },
    { name: 'default on null', text: '{{x | default "none"}}', x: null, want: 'none' },
    { name: 'default keeps a value', text: '{{x | default "none"}}', x: 'v', want: 'v' },
    { name: 'default then pct', text: "{{x | default '0' | pct}}", x: undefined, want: '0%' },
    { name: 'chained filters', text: '{{x | short | upper}}', x: '0x1234567890abcdef1234567890abcdef1234abcd', want: '0X1234…ABCD' },
    { name: 'null renders n/a', text: 'u={{x | pct}}', x: null, want: 'u=n/a' },
    { name: 'a non-number through pct is shown as is', text: '{{x | pct}}', x: 'high', want: 'high' },
    { name: 'raw number without float noise', text: '{{x}}', x: 0.1 + 0.2, want: '0.3' },
    { name: 'boolean', text: '{{x}}', x: false, want: 'false' },
  ])('$name', ({ text, x, want }) => {
    expect(render(text, { x })).toBe(want);
  });
});

describe('compileTemplate', () => {
  it('reads nested names and lists them', () => {
    const t = compileTemplate('{{market.loan_asset_symbol}}/{{ market.collateral_asset_symbol }} at {{utilization | pct}} ({{utilization}})');
    expect(t.errors).toEqual([]);
    expect(t.names).toEqual(['market.loan_asset_symbol', 'market.collateral_asset_symbol', 'utilization']);
    expect(t.render({ utilization: 0.96, market: { loan_asset_symbol: 'USDC', collateral_asset_symbol: 'WETH' } })).toBe('USDC/WETH at 96% (0.96)');
  });

  it.each([
    { name: 'unknown filter', text: '{{x | percent}}', error: 'unknown filter \'percent\' (known: pct, bps, usd, duration, date, time, short, upper, lower, round, default)' },
    { name: 'unclosed', text: 'a {{x', error: "unclosed '{{' at character 3" },
    { name: 'empty', text: '{{ }}', error: "empty '{{ }}' at character 1" },
    { name: 'not a name', text: '{{ 1 + 2 }}', error: "'1 + 2' is not a field name" },
    { name: 'an inherited property is not a filter', text: '{{x | constructor}}', error: 'unknown filter \'constructor\' (known: pct, bps, usd, duration, date, time, short, upper, lower, round, default)' },
  ])('error: $name', ({ text, error }) => {
    expect(compileTemplate(text).errors).toEqual([error]);
  });

  it('usd writes an amount as toLocaleString does, around its two forms and at the ends of a double', () => {
    const values = [0, 0.004, 0.005, 0.015, 1, 12.345, 99.994, 99.995, 99.999, 100, 100.5, 101.5, 1234567.5, 2.5e15, 1e21, 1.7976931348623157e308, 5e-324];
    for (const v of [...values, ...values.map((x) => -x)]) {
      const abs = Math.abs(v);
      const text = abs.toLocaleString('en-US', abs >= 100 ? { maximumFractionDigits: 0 } : { minimumFractionDigits: 2, maximumFractionDigits: 2 });
      expect(render('{{x | usd}}', { x: v }), String(v)).toBe(`${v < 0 ? '-' : ''}$${text}`);
    }
    // What a reader sees, spelled out: cents below $100, whole dollars with thousands separators from there.
    const seen = [0, 0.005, 12.345, 99.999, 100, 100.5, 1234567.5, -1234.5].map((x) => render('{{x | usd}}', { x }));
    expect(seen).toEqual(['$0.00', '$0.01', '$12.35', '$100.00', '$100', '$101', '$1,234,568', '-$1,235']);
  });

  it('never throws while rendering', () => {
    const scope = { get x(): unknown { throw new Error('boom'); }, y: { toJSON() { throw new Error('boom'); } } };
    expect(render('{{x}} {{y}} {{z.deep.path | pct}} {{x | usd}}', scope)).toBe('n/a n/a n/a n/a');
  });
});

describe('annotations of a rule', () => {
  const util = rule({
    kind: 'utilization_above',
    threshold: 0.95,
    clear_below: 0.92,
    annotations: {
      summary: '{{market.loan_asset_symbol}}/{{labels.collateral_asset_symbol}} utilization {{utilization | pct}} > {{threshold | pct}} ({{rule.name}}, clears below {{clear_below | pct}})',
    },
  });

  it('renders with the verdict, labels, context and rule', () => {
    const reading = market({ utilization: 0.9612 });
    const v = evaluateExplained(utilizationAbove, { rule: util as never, reading, now: 0, history: { at: () => undefined, range: () => [] }, active: false });
    expect(renderAnnotations(util, reading, v)).toEqual({ summary: 'USDC/WETH utilization 96.12% > 95% (test-rule, clears below 92%)' });
  });

  it('a wait or data error verdict exposes its reason', () => {
    expect(templateScope(util, market(), { status: 'data_error', reason: 'utilization missing' })).toMatchObject({ reason: 'utilization missing', value: null });
  });

  it.each([
    { name: 'a known field', text: '{{utilization | pct}}', want: [] },
    { name: 'a nested known field', text: '{{market.oracle | short}}', want: [] },
    { name: 'a context key of the kind', text: '{{change | pct}} {{change_rel | pct}} {{previous | pct}}', want: [] },
    { name: 'labels and rule keys', text: '{{labels.chain}} {{rule.window | duration}} {{rule.min_change}} {{rule.select.chain}}', want: [] },
    { name: 'an optional (defaulted) unknown name is allowed', text: '{{curator | default "unknown"}}', want: [] },
    { name: 'unknown field, with a suggestion', text: '{{borow_apy | pct}}', want: ["summary: unknown field 'borow_apy' in template for a market reading (did you mean 'borrow_apy'?)"] },
    { name: 'unknown nested field', text: '{{market.loan_symbol}}', want: ["summary: unknown field 'market.loan_symbol' in template for a market reading (did you mean 'market.loan_asset_symbol'?)"] },
    { name: 'unknown label', text: '{{labels.network}}', want: ["summary: unknown field 'labels.network' in template for a market reading"] },
    { name: 'unknown rule key', text: '{{rule.treshold}}', want: ["summary: unknown field 'rule.treshold' in template for a market reading"] },
    { name: 'context key of another kind', text: '{{lag | duration}}', want: ["summary: unknown field 'lag' in template for a market reading"] },
    { name: 'unknown filter', text: '{{utilization | percent}}', want: ["summary: unknown filter 'percent' (known: pct, bps, usd, duration, date, time, short, upper, lower, round, default)"] },
  ])('check: $name', ({ text, want }) => {
    const problems = annotationCheck({ summary: text }, apyJump, ['market']);
    expect(problems.map((p) => p.message)).toEqual(want);
    for (const p of problems) expect(p.path).toEqual(['annotations', 'summary']);
  });
});
