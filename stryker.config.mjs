// Mutation testing of the decision code (issue 17): `npm run mutate`, or one folder with
// `npm run mutate -- --mutate 'src/silences/**/*.ts'`. Not in CI and not part of `npm test`: slow on two cores.
// See docs/testing.md for the scores, the survivors left and why.
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
