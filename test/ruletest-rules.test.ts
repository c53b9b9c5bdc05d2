/** Runs every shipped rule unit test (rules/tests/*.test.yaml), so `npm test` checks the starter rules. */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatRuleTests, runRuleTests } from '../src/ruletest/index.js';

const dir = join(import.meta.dirname, '..', 'rules', 'tests');
const files = readdirSync(dir).filter((f) => f.endsWith('.test.yaml')).sort();

describe('shipped rule tests', () => {
  it('covers every rule file under rules/', () => {
    const ruleFiles = readdirSync(join(dir, '..')).filter((f) => f.endsWith('.yaml'));
    expect(files.map((f) => f.replace('.test.yaml', '.yaml')).sort()).toEqual(expect.arrayContaining(ruleFiles.sort()));
  });

  it.each(files)('%s passes', (f) => {
    const run = runRuleTests([join(dir, f)], { env: {} });
    const report = formatRuleTests(run).join('\n');
    expect(run.failed, report).toBe(0);
    expect(run.passed).toBeGreaterThan(0);
  });
});
