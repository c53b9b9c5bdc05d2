/** Runs every shipped rule unit test (rules/tests/*.test.yaml), so `npm test` checks the starter rules. */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadRuleFile } from '../src/config/load.js';
import type { ConfigProblem } from '../src/errors.js';
import { formatRuleTests, runRuleTests } from '../src/ruletest/index.js';
import { loadRuleTestFile } from '../src/ruletest/file.js';

const dir = join(import.meta.dirname, '..', 'rules', 'tests');
const files = readdirSync(dir).filter((f) => f.endsWith('.test.yaml')).sort();

/** Names of the rules under `rulesDir` (*.yaml) that no expectation of the test files in `testsDir` expects active. */
function rulesWithoutTest(rulesDir: string, testsDir: string): string[] {
  const problems: ConfigProblem[] = [];
  const rules = readdirSync(rulesDir)
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((f) => loadRuleFile(join(rulesDir, f), {}, problems).map((l) => l.rule.name));
  const expected = new Set<string>();
  for (const f of readdirSync(testsDir).filter((f) => f.endsWith('.test.yaml'))) {
    const loaded = loadRuleTestFile(join(testsDir, f), {});
    if ('problems' in loaded) {
      problems.push(...loaded.problems);
      continue;
    }
    // Seen pending or firing at least once: an expectation that it stays quiet alone does not show it works.
    for (const t of loaded.spec.tests)
      for (const e of t.alert_expectations) for (const a of e.alerts) if (a.state === 'pending' || a.state === 'firing') expected.add(a.rule);
  }
  expect(problems).toEqual([]);
  expect(rules.length).toBeGreaterThan(0);
  return rules.filter((r) => !expected.has(r));
}

describe('shipped rule tests', () => {
  it('covers every rule file under rules/', () => {
    const ruleFiles = readdirSync(join(dir, '..')).filter((f) => f.endsWith('.yaml'));
    expect(files.map((f) => f.replace('.test.yaml', '.yaml')).sort()).toEqual(expect.arrayContaining(ruleFiles.sort()));
  });

  it('every rule of rules/*.yaml is expected pending or firing in at least one expectation of rules/tests/', () => {
    expect(rulesWithoutTest(join(dir, '..'), dir)).toEqual([]);
  });

  it.each(files)('%s passes', (f) => {
    const run = runRuleTests([join(dir, f)], { env: {} });
    const report = formatRuleTests(run).join('\n');
    expect(run.failed, report).toBe(0);
    expect(run.passed).toBeGreaterThan(0);
  });
});
