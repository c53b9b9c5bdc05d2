import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Vitest's default is one worker fewer than the cores: one worker on a two-core CI machine. Most of the suite's
    // time is spent waiting on child processes and sockets (daemons, Prometheus, Alertmanager, Chromium), so a worker
    // per core halves the wall time there (12 m 18 s → 6 m 18 s on two cores) without starving the children.
    maxWorkers: '100%',
    // A TMPDIR of the run's own: a temp folder a test or a command under test leaves behind fails the run.
    globalSetup: ['./test/temp-guard.ts'],
    reporters: ['default', './test/summary-reporter.ts'],
  },
});
