/**
 * Ends a test run with one plain line, `tests: N passed, N failed, N skipped`, that any CI reads the same way,
 * and that shows at a glance when something skipped. Failed files that ran no test (an import error) count as
 * failed too.
 */
import type { Reporter, TestModule } from 'vitest/node';

/** The summary reporter, added beside vitest's default one in vitest.config.ts. */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = unhandledErrors.length;
    let skipped = 0;
    for (const m of testModules) {
      let tests = 0;
      for (const t of m.children.allTests()) {
        tests++;
        const state = t.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
      if (tests === 0 && m.state() === 'failed') failed++;
    }
    process.stdout.write(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
