import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ABSENT, expandValues, runTestCommand } from '../src/ruletest/index.js';
import { tempDirs } from './alerts-helpers.js';

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

const START = Date.UTC(2025, 0, 15);

describe('expanding notation', () => {
  it.each<[string, unknown[]]>([
    ['0.5', [0.5]],
    ['0.5 0.96x3 0.5', [0.5, 0.96, 0.96, 0.96, 0.5]],
    ['0.5+0.01x4', [0.5, 0.51, 0.52, 0.53]],
    ['1-0.1x3', [1, 0.9, 0.8]],
    ['_ 1 _x2', [ABSENT, 1, ABSENT, ABSENT]],
    ['null true false', [null, true, false]],
    ["'0.95' '12'x2", ['0.95', '12', '12']],
    ['start start+1h', [START, START + 3_600_000]],
  ])('%s', (text, want) => {
    expect(expandValues(text).map((c) => c(START + 60_000, START))).toEqual(want);
  });

  it('now is the poll time', () => {
    const cells = expandValues('now now-26h');
    expect(cells.map((c) => c(START + 5000, START))).toEqual([START + 5000, START + 5000 - 26 * 3_600_000]);
  });

  it('a YAML list is taken literally, except _', () => {
    expect(expandValues([0.1, '0.2', '_', null]).map((c) => c(0, 0))).toEqual([0.1, '0.2', ABSENT, null]);
  });

  it.each(['abc', '0.5x0', 'now-5q', '1+x3'])('refuses %s with a message', (bad) => {
    expect(() => expandValues(bad)).toThrow(/./);
  });
});

const rules = `
rules:
  - name: util-high
    kind: utilization_above
    severity: critical
    threshold: 0.95
    for: 2m
    labels: { team: risk }
    annotations:
      summary: "{{market.loan_asset_symbol}} utilization {{utilization | pct}}"
`;

const series = `
    series:
      - entity: m1
        labels: { chain: base }
        fields: { market: { loan_asset_symbol: USDC } }
        values:
          utilization: "0.5 0.97x5"
`;

function write(text: string): string {
  const f = join(dirs.make(), 'x.test.yaml');
  writeFileSync(f, text);
  return f;
}

async function runFile(text: string): Promise<{ code: number; out: string[] }> {
  const out: string[] = [];
  const code = await runTestCommand([write(text)], { out: (l) => out.push(l), env: {} });
  return { code, out };
}

describe('lookout test', () => {
  it('a passing file: ✓ per test, exit 0, final count line alone', async () => {
    const { code, out } = await runFile(`${rules}
tests:
  - name: fires after for
${series}
    alert_expectations:
      - at: 2m
        alerts: [{ rule: util-high, entity: m1, state: pending }]
      - at: 3m
        alerts:
          - rule: util-high
            entity: m1
            labels: { team: risk, chain: base, severity: critical }
            annotations: { summary: "USDC utilization 97%" }
  - name: quiet before
${series}
    alert_expectations:
      - at: 0m
        alerts: []
`);
    expect(out.slice(1)).toEqual(['  ✓ fires after for', '  ✓ quiet before', '', '2 passed, 0 failed']);
    expect(code).toBe(0);
  });

  it('a failing file: ✗, expected vs got, the differing annotation, exit 1', async () => {
    const { code, out } = await runFile(`${rules}
tests:
  - name: wrong expectations
${series}
    alert_expectations:
      - at: 2m
        alerts: [{ rule: util-high, entity: m1, state: firing }]
      - at: 3m
        alerts:
          - rule: util-high
            entity: m1
            annotations: { summary: "USDC utilization 96%" }
  - name: right one
${series}
    alert_expectations:
      - at: 1m
        alerts: [{ rule: util-high, entity: m1, state: pending }]
`);
    expect(code).toBe(1);
    expect(out.slice(1)).toEqual([
      '  ✗ wrong expectations',
      '      at 2m:',
      '        expected: util-high/m1 firing',
      '        got:      util-high/m1 pending',
      '        util-high/m1: state: expected firing, got pending',
      '      at 3m:',
      '        expected: util-high/m1 firing',
      '        got:      util-high/m1 firing',
      '        util-high/m1: annotation summary:',
      '          - expected: "USDC utilization 96%"',
      '          + got:      "USDC utilization 97%"',
      '  ✓ right one',
      '',
      '1 passed, 1 failed',
    ]);
  });

  it('an unexpected alert fails the expectation', async () => {
    const { code, out } = await runFile(`${rules}
tests:
  - name: expects none
${series}
    alert_expectations:
      - at: 4m
        alerts: []
`);
    expect(code).toBe(1);
    expect(out).toContain('        unexpected: util-high/m1 firing');
  });

  it('a broken file is one failure with file:line:col', async () => {
    const { code, out } = await runFile(`${rules}
tests:
  - name: bad
    alert_expectations:
      - at: 2m
        alerts: [{ rule: util-hgh, entity: m1 }]
`);
    expect(code).toBe(1);
    expect(out[1]).toBe('  ✗ (file)');
    expect(out[2]).toMatch(/x\.test\.yaml:16:\d+: unknown rule 'util-hgh'$/);
  });

  it('a bad value token names the series and field', async () => {
    const { code, out } = await runFile(`${rules}
tests:
  - name: bad token
    series:
      - entity: m1
        values: { utilization: "0.5 lots" }
    alert_expectations:
      - at: 1m
        alerts: []
`);
    expect(code).toBe(1);
    expect(out).toContain(`      error: series m1, values.utilization: 'lots' is not a value (a number, _, null, true, false, 'text', now-5m, start+1h, with xN to repeat)`);
  });

  it('failed polls change nothing and trip source_down after 3', async () => {
    const { code, out } = await runFile(`${rules}
tests:
  - name: outage
    failed_polls: [3m, 4m, 5m]
    series:
      - entity: m1
        fields: { market: { loan_asset_symbol: USDC } }
        values: { utilization: "0.97x8" }
    alert_expectations:
      - at: 4m
        alerts: [{ rule: util-high, entity: m1, state: firing }]
      - at: 5m
        alerts:
          - { rule: util-high, entity: m1 }
          - { rule: source_down, entity: markets, labels: { poll: markets, severity: warning } }
      - at: 6m
        alerts:
          - { rule: util-high, entity: m1 }
          - { rule: source_down, entity: markets, state: resolved }
`);
    expect(out.join('\n')).toContain('1 passed, 0 failed');
    expect(code).toBe(0);
  });

  it('points hold their fields until the next point; absent removes the entity', async () => {
    const { code, out } = await runFile(`${rules}
tests:
  - name: points
    series:
      - entity: m1
        fields: { utilization: 0.5, market: { loan_asset_symbol: USDC } }
        points:
          - { at: 2m, fields: { utilization: 0.99 } }
          - { at: 6m, fields: { utilization: 0.5 } }
          - { at: 8m, absent: true }
      - entity: m2
        fields: { market: { loan_asset_symbol: USDC } }
        points:
          - { at: 0m, fields: { utilization: 0.99 } }
          - { at: 5m, absent: true }
    alert_expectations:
      - at: 1m
        alerts: [{ rule: util-high, entity: m2, state: pending }]
      - at: 4m
        alerts:
          - { rule: util-high, entity: m1, value: 0.99 }
          - { rule: util-high, entity: m2 }
      - at: 6m
        alerts: [{ rule: util-high, entity: m2 }]
      - at: 7m
        alerts: [{ rule: util-high, entity: m2, state: resolved }]
`);
    expect(out.join('\n')).toContain('1 passed, 0 failed');
    expect(code).toBe(0);
  });

  it('no files is a usage error', async () => {
    const out: string[] = [];
    expect(await runTestCommand([], { out: (l) => out.push(l) })).toBe(1);
  });
});
