/** `lookout test FILE...`: rule unit tests in YAML (format: docs/rule-tests.md). */
import { formatRuleTests } from './report.js';
import { runRuleTests } from './run.js';

export { runRuleTests, type RuleTestResult, type RuleTestRun, type RuleTestOptions } from './run.js';
export { formatRuleTests } from './report.js';
export { expandValues, ABSENT, type Cell } from './values.js';
export { loadRuleTestFile, type RuleTestFile } from './file.js';

/** Runs the tests in `files` (only those `run` selects), prints the report line by line, and returns the exit code: 0 when all passed, else 1. */
export async function runTestCommand(
  files: readonly string[],
  io: { out: (line: string) => void; env?: NodeJS.ProcessEnv; run?: string },
): Promise<number> {
  if (files.length === 0) {
    io.out('no test files given: lookout test FILE...');
    return 1;
  }
  const run = runRuleTests(files, { ...(io.env ? { env: io.env } : {}), ...(io.run !== undefined ? { run: io.run } : {}) });
  if (run.results.length === 0) {
    io.out(`no test named or matching '${io.run}' in ${files.join(', ')}`);
    return 1;
  }
  for (const line of formatRuleTests(run)) io.out(line);
  return run.failed > 0 ? 1 : 0;
}
