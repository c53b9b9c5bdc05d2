import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // A TMPDIR of the run's own: a temp folder a test or a command under test leaves behind fails the run.
    globalSetup: ['./test/temp-guard.ts'],
    reporters: ['default', './test/summary-reporter.ts'],
  },
});
