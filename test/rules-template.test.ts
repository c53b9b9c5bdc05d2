/**
 * The edges of annotation templates (SPEC §3 `annotations`): the filters' arguments and limits, quoting inside a
 * `{{ }}`, names that are not the scope's own, and what an odd value shows as — what an on-call reads in a message.
 */
import { describe, expect, it } from 'vitest';
import { compileTemplate, formatValue } from '../src/rules/template.js';

const render = (text: string, scope: Record<string, unknown>) => compileTemplate(text).render(scope);

describe('filter arguments', () => {
  it.each([
    ['pct with 0 decimals', '{{x | pct 0}}', 0.12345, '12%'],
    ['pct with 3 decimals', '{{x | pct 3}}', 0.12345, '12.345%'],
    ['pct with 12 decimals (the most)', '{{x | pct 12}}', 0.123456789012345, '12.345678901234%'],
    ['pct with 13 decimals falls back to 2', '{{x | pct 13}}', 0.123456, '12.35%'],
    ['pct with a negative count falls back to 2', '{{x | pct -1}}', 0.123456, '12.35%'],
    ['pct with a fractional count falls back to 2', '{{x | pct 1.5}}', 0.123456, '12.35%'],
    ['pct with a text count', '{{x | pct "1"}}', 0.123456, '12.3%'],
    ['pct with a text that is no count', '{{x | pct "many"}}', 0.123456, '12.35%'],
    ['bps with 2 decimals', '{{x | bps 2}}', 0.000123, '1.23 bps'],
    ['bps keeps one decimal by default', '{{x | bps}}', 0.000125, '1.3 bps'],
    ['round by default to a whole number', '{{x | round}}', 2.5, '3'],
    ['round drops trailing zeros', '{{x | round 3}}', 1.5, '1.5'],
    ['round of a whole number keeps its zeros', '{{x | round}}', 100, '100'],
    ['duration in ms', '{{x | duration "ms"}}', 5_400_000, '1h 30m'],
    ['duration in seconds given a text other than ms', '{{x | duration "s"}}', 90, '1m 30s'],
    ['a negative duration', '{{x | duration}}', -3900, '-1h 5m'],
    ['a duration rounds to whole seconds', '{{x | duration}}', 59.6, '1m'],
    ['a duration under half a second is 0s', '{{x | duration}}', 0.4, '0s'],
    ['a duration of days only', '{{x | duration}}', 172_800, '2d'],
    ['days and seconds do not skip to seconds', '{{x | duration}}', 86_401, '1d'],
    ['usd at exactly $100 has no cents', '{{x | usd}}', 100, '$100'],
    ['usd just below $100 has cents', '{{x | usd}}', 99.5, '$99.50'],
    ['usd of a small negative', '{{x | usd}}', -0.5, '-$0.50'],
    ['usd of zero has no sign', '{{x | usd}}', 0, '$0.00'],
    ['two spaces before an argument', '{{x | pct  1}}', 0.12345, '12.3%'],
    ['default with a fractional number', '{{y | default 1.25}}', 1, '1.25'],
    ['default below a member of null', '{{x.y | default "none"}}', null, 'none'],
    ['short at 13 characters is kept', '{{x | short}}', '0x12345678901', '0x12345678901'],
    ['short at 14 characters is cut', '{{x | short}}', '0x123456789012', '0x1234…9012'],
    ['short of a number is kept', '{{x | short}}', 12345678901234, '12345678901234'],
    ['lower', '{{x | lower}}', 'WETH', 'weth'],
    ['upper of a number is kept', '{{x | upper}}', 5, '5'],
    ['lower of a number is kept', '{{x | lower}}', 5, '5'],
    ['time of a huge number is left as is', '{{x | time}}', 1e300, '1e+300'],
    ['date of a numeric string', '{{x | date}}', String(Date.UTC(2025, 0, 14)), '2025-01-14'],
    ['default on an empty text', '{{x | default "none"}}', '', 'none'],
    ['default on a missing name without an argument', '{{y | default}}', 1, ''],
    ['default with a number', '{{y | default 0}}', 1, '0'],
    ['default keeps 0 and false', '{{x | default "none"}}', 0, '0'],
    ['default with an escaped quote', '{{y | default "say \\"hi\\""}}', 1, 'say "hi"'],
    ['default with single quotes', "{{y | default 'a | b'}}", 1, 'a | b'],
    ['a | inside double quotes is not a pipe', '{{y | default "x|y" | upper}}', 1, 'X|Y'],
    ['spaces around names and pipes', '{{   x   |   pct   }}', 0.5, '50%'],
  ])('%s', (_name, text, x, want) => {
    const t = compileTemplate(text);
    expect(t.errors).toEqual([]);
    expect(t.render({ x })).toBe(want);
  });
});

describe('names and values', () => {
  it('reads only the scope’s own members, at any depth; anything else shows as n/a', () => {
    const scope = { a: { b: { c: 1 } }, s: 'text', n: null };
    expect(render('{{a.b.c}} {{a.b}} {{a.x}} {{s.length}} {{n.x}} {{a.toString}} {{constructor}} {{a.b.c.d}}', scope)).toBe('1 {"c":1} n/a n/a n/a n/a n/a n/a');
  });

  it('names may hold dashes and underscores; a name cannot start with a digit or hold spaces', () => {
    expect(render('{{_a-b.c-d}}', { '_a-b': { 'c-d': 'ok' } })).toBe('ok');
    expect(compileTemplate('{{ 1a }}').errors).toEqual(["'1a' is not a field name"]);
    expect(compileTemplate('{{ a b }}').errors).toEqual(["'a b' is not a field name"]);
    expect(compileTemplate('{{ a. }}').errors).toEqual(["'a.' is not a field name"]);
    // A filter name must be whole: no digit or sign in front of it.
    expect(compileTemplate('{{ x | 9pct }}').errors).toEqual(["unknown filter '9pct' (known: pct, bps, usd, duration, date, time, short, upper, lower, round, default)"]);
  });

  it('lists each name once, in order, and marks one covered by default as optional', () => {
    const t = compileTemplate('{{b}} {{a | default "-"}} {{b | pct}}');
    expect(t.names).toEqual(['b', 'a']);
    expect(t.refs).toEqual([
      { name: 'b', optional: false },
      { name: 'a', optional: true },
      { name: 'b', optional: false },
    ]);
  });

  it('keeps the text around and between placeholders, and reports every problem of a template', () => {
    const t = compileTemplate('a {{x}} b {{x | nope}} c {{x | pct 1 2}} d');
    expect(t.errors).toEqual([
      "unknown filter 'nope' (known: pct, bps, usd, duration, date, time, short, upper, lower, round, default)",
      "unknown filter 'pct 1 2' (known: pct, bps, usd, duration, date, time, short, upper, lower, round, default)",
    ]);
    // A placeholder with an unknown filter still shows its value.
    expect(t.render({ x: 0.5 })).toBe('a 0.5 b 0.5 c 0.5 d');
    expect(render('}} {{x}} {', { x: 1 })).toBe('}} 1 {');
    expect(render('a}}{{x}}', { x: 1 })).toBe('a}}1');
    expect(compileTemplate('{{x}} {{y').errors).toEqual(["unclosed '{{' at character 7"]);
    // What follows an unclosed placeholder is shown as written.
    expect(compileTemplate('{{x}} {{y').render({ x: 1 })).toBe('1 {{y');
  });

  it.each([
    ['null', null, 'n/a'],
    ['undefined', undefined, 'n/a'],
    ['NaN', Number.NaN, 'n/a'],
    ['Infinity', Number.POSITIVE_INFINITY, 'n/a'],
    ['a float with noise', 1.1 * 3, '3.3'],
    // A whole number has no float noise: shown in full, a millisecond time to the millisecond.
    ['a large whole number', 123456789012345, '123456789012345'],
    ['a time in ms', 1736942412345, '1736942412345'],
    ['a large fraction, to 12 digits', 1234567.123456789, '1234567.12346'],
    ['an array', [1, 'a'], '[1,"a"]'],
    ['an object', { a: 1 }, '{"a":1}'],
    ['a text', 'x', 'x'],
    ['true', true, 'true'],
  ])('%s shows as %s', (_name, v, want) => {
    expect(formatValue(v)).toBe(want);
  });
});
