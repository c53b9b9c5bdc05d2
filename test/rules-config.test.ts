/** The rule kinds through the real config loader: the starter rules load clean, and each mistake is one fixture with its exact message and position. */
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfigText } from '../src/config/load.js';
import { ConfigError, formatProblem } from '../src/errors.js';
import { ruleKinds, buildRegistry, getRuleKind } from '../src/rules/registry.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const fixtures = join(root, 'test', 'rules-fixtures');

function configWith(ruleFiles: string[]): string {
  return [
    'source: { base_url: "http://127.0.0.1:9" }',
    'polls:',
    '  - { name: markets, kind: metrics, cron: "*/30 * * * * *" }',
    'rules:',
    `  files: [${ruleFiles.map((f) => JSON.stringify(f)).join(', ')}]`,
    '',
  ].join('\n');
}

function problems(ruleFile: string): string[] {
  try {
    loadConfigText(join(root, 'lookout.yaml'), configWith([join(fixtures, ruleFile)]), { env: {}, dir: root });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems.map((p) => formatProblem({ ...p, file: basename(p.file) }));
    throw err;
  }
  return [];
}

describe('starter rules', () => {
  it('rules/*.yaml load through the config loader without a problem', () => {
    const cfg = loadConfigText(join(root, 'lookout.yaml'), configWith([join(root, 'rules', '*.yaml')]), { env: {}, dir: root });
    const names = cfg.rules.map((r) => r.rule.name);
    expect(names).toContain('market-utilization-critical');
    expect(new Set(cfg.ruleFiles.map((f) => f.slice(root.length + 1)))).toEqual(
      new Set(['rules/benchmarks.yaml', 'rules/markets.yaml', 'rules/oracles.yaml', 'rules/positions.yaml']),
    );
    const byName = Object.fromEntries(cfg.rules.map((r) => [r.rule.name, r.rule]));
    expect(byName['market-utilization-warning']).toMatchObject({ threshold: 0.92, clear_below: 0.9, for: 600_000, severity: 'warning' });
    expect(byName['market-utilization-critical']).toMatchObject({ threshold: 0.95, clear_below: 0.93, for: 600_000, severity: 'critical' });
    expect(byName['market-borrow-apy-jump']).toMatchObject({ window: 3_600_000, min_change: 0.02, min_change_rel: 0.5, require: 'all', direction: 'up' });
    expect(byName['market-borrow-apy-high']).toMatchObject({ field: 'borrow_apy', op: '>', value: 0.25 });
    expect(byName['oracle-lag-stable-24h']).toMatchObject({ heartbeat: 86_400_000 });
    expect(byName['oracle-lag-volatile-1h']).toMatchObject({ heartbeat: 3_600_000 });
    expect(byName['position-unverified']).toMatchObject({ min_value_usd: 10_000 });
    expect(byName['benchmark-stale']).toMatchObject({ max_age: 36 * 3_600_000, incomplete_for: 6 * 3_600_000 });
  });
});

describe('rule config errors: one fixture each, exact message and position', () => {
  it.each([
    ['a negative threshold', 'negative-threshold.yaml', ['negative-threshold.yaml:4:16: threshold: must be between 0 and 1 (a fraction: 0.95 = 95%)']],
    ['a window of 0', 'zero-window.yaml', ['zero-window.yaml:4:13: window: duration must be greater than 0']],
    ['a missing field name', 'missing-field.yaml', ["missing-field.yaml:2:5: missing required key 'field'"]],
    ['clear_below not below threshold', 'clear-below-not-below.yaml', ['clear-below-not-below.yaml:5:18: clear_below: must be below threshold (0.95 ≥ 0.95)']],
    [
      'a template naming an unknown field',
      'unknown-template-field.yaml',
      ["unknown-template-field.yaml:6:16: summary: unknown field 'utilisation' in template for a market reading (did you mean 'utilization'?)"],
    ],
    [
      'a template using an unknown filter',
      'unknown-filter.yaml',
      ["unknown-filter.yaml:6:20: description: unknown filter 'percent' (known: pct, bps, usd, duration, date, time, short, upper, lower, round, default)"],
    ],
    [
      'apy_jump without a change',
      'apy-jump-no-change.yaml',
      ['apy-jump-no-change.yaml:2:5: apy_jump needs min_change (absolute, 0.02 = 2 points) and/or min_change_rel (relative, 0.5 = 50%)'],
    ],
    ['oracle_lag with max_lag and heartbeat', 'oracle-lag-both.yaml', ['oracle-lag-both.yaml:5:16: heartbeat: give max_lag or heartbeat, not both']],
    ['oracle_lag with neither', 'oracle-lag-neither.yaml', ['oracle-lag-neither.yaml:2:5: oracle_lag needs max_lag, or the feed’s heartbeat']],
    ['an empty select list', 'empty-select-list.yaml', ['empty-select-list.yaml:6:14: chain: an empty list matches nothing (leave the key out to match all)']],
    [
      'a select key no reading has',
      'unknown-select-key.yaml',
      ["unknown-select-key.yaml:6:20: select: unknown key 'loan_symbol' for market readings (did you mean 'loan_asset_symbol'?)"],
    ],
    [
      'a threshold field the reading lacks',
      'threshold-unknown-field.yaml',
      ["threshold-unknown-field.yaml:5:12: field: unknown field 'value' of a position reading (did you mean 'value_usd'?)"],
    ],
    ['a threshold on a text field', 'threshold-text-field.yaml', ["threshold-text-field.yaml:4:12: field: 'market.chain' is a string, not a number"]],
    ['a negative min_value_usd', 'negative-min-value.yaml', ['negative-min-value.yaml:4:20: min_value_usd: must be 0 or more']],
    ['an unknown operator', 'bad-op.yaml', ["bad-op.yaml:5:9: op: '=>' is not one of >, >=, <, <=, ==, !="]],
    [
      "a built-in alert's name",
      'builtin-name.yaml',
      ["builtin-name.yaml:2:11: name: source_down and watchdog are the names of lookout's built-in alerts; choose another"],
    ],
  ])('%s', (_name, file, want) => {
    expect(problems(file)).toEqual(want);
  });
});

describe('registry', () => {
  it('lists every kind once, each with a description, what it reads and its context keys', () => {
    expect(ruleKinds.map((k) => k.kind)).toEqual(['utilization_above', 'apy_jump', 'oracle_lag', 'unverified_position', 'stale_benchmark', 'threshold', 'price_deviation']);
    // The keys a template may use under each kind (README "Rules"): a renamed or dropped key breaks users' templates.
    expect(Object.fromEntries(ruleKinds.map((k) => [k.kind, k.context]))).toEqual({
      utilization_above: ['utilization', 'clear_below'],
      apy_jump: ['change', 'change_rel', 'field', 'window', 'direction', 'apy'],
      oracle_lag: ['lag', 'max_lag', 'heartbeat'],
      unverified_position: ['verified', 'value_usd'],
      stale_benchmark: ['reason', 'age', 'incomplete_for', 'day', 'max_age'],
      threshold: ['field', 'op'],
      price_deviation: ['deviation', 'oracle_price', 'service_price'],
    });
    for (const k of ruleKinds) {
      expect(k.description.length).toBeGreaterThan(10);
      expect(k.reads.length).toBeGreaterThan(0);
      expect(getRuleKind(k.kind)).toBe(k);
    }
  });

  it('refuses a duplicate kind and the reserved source_down', () => {
    const k = ruleKinds[0]!;
    expect(() => buildRegistry([k, k])).toThrow("rule kind 'utilization_above' is registered twice (or reserved)");
    expect(() => buildRegistry([{ ...k, kind: 'source_down' }])).toThrow("rule kind 'source_down' is registered twice (or reserved)");
  });
});
