/** Prints rule-test results like a test runner: the file, ✓/✗ per test, what differed, and a final count line. */
import type { RuleTestRun } from './run.js';

/** Formats a run as lines: per file a heading, per test a ✓ or ✗ line with its failures indented below, then `N passed, N failed`. */
export function formatRuleTests(run: RuleTestRun): string[] {
  const lines: string[] = [];
  let file: string | undefined;
  for (const r of run.results) {
    if (r.file !== file) {
      if (file !== undefined) lines.push('');
      file = r.file;
      lines.push(r.file);
    }
    lines.push(`  ${r.passed ? '✓' : '✗'} ${r.name}`);
    for (const f of r.failures) lines.push(`      ${f}`);
  }
  lines.push('');
  lines.push(`${run.passed} passed, ${run.failed} failed`);
  return lines;
}
