// Mutation testing of the decision code (issue 17): `npm run mutate`, or one folder with
// `npm run mutate -- --mutate 'src/silences/**/*.ts'`. Not in CI and not part of `npm test`: slow on two cores.
// See docs/testing.md for the scores, the survivors left and why.

// A zone that is not UTC for the whole run, set before Stryker forks its test runners (they inherit it): the runner
// runs the tests in worker threads, where a test setting process.env.TZ does not change the zone, so the test that a
// zone-less date-time is read as UTC (test/source-decimal.test.ts) would see nothing on a UTC host. Chatham: +12:45/+13:45,
// so no test passes by the hour alone. Set whatever the shell says: a TZ=UTC there would make that test fail the dry run.
process.env.TZ = 'Pacific/Chatham';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutate.config.ts' },
  coverageAnalysis: 'perTest',
  mutate: [
    'src/rules/**/*.ts',
    'src/alerts/**/*.ts',
    'src/notify/**/*.ts',
    'src/silences/**/*.ts',
    'src/source/read/**/*.ts',
    '!src/**/*.test.ts',
  ],
  // A re-run after a change tests only the mutants whose code or covering tests changed.
  incremental: true,
  incrementalFile: 'reports/stryker-incremental.json',
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  tempDirName: 'reports/.stryker-tmp',
  cleanTempDir: true,
  concurrency: 1,
  timeoutMS: 10_000,
  thresholds: { high: 85, low: 70, break: null },
};
