import { defineConfig } from 'vitest/config';

/**
 * The test run Stryker repeats for every mutant (`npm run mutate`, stryker.config.mjs): only the in-process unit
 * tests of the decision code it mutates (rules, alerts, notify, silences, source/read). The daemon, e2e, crash,
 * soak, differential and external-tool tests drive the built CLI or other processes, which never load the
 * mutated sources; they would only slow each mutant's run.
 */
export default defineConfig({
  test: {
    include: [
      'src/rules/**/*.test.ts',
      'test/alerts-*.test.ts',
      'src/html/chart.test.ts',
      'test/backtest.test.ts',
      'test/notify-dispatcher.test.ts',
      'test/notify-dispatcher-loop.test.ts',
      'test/notify-units.test.ts',
      'test/notify-notifiers.test.ts',
      'test/notify-slack-bot.test.ts',
      'test/notify-render*.test.ts',
      'test/notify-store-fault.test.ts',
      'test/notify-delivery.test.ts',
      'test/notify-format.test.ts',
      'test/notify-adopt.test.ts',
      'test/notify-outbox.test.ts',
      'test/notify-notifier-parts.test.ts',
      'test/notify-notifier-texts.test.ts',
      'test/notify-labels.test.ts',
      'test/notify-notifier-more.test.ts',
      'test/notify-slack-api.test.ts',
      'test/notify-registry.test.ts',
      'test/notify-http-dispatcher.test.ts',
      'test/notify-email.test.ts',
      'test/notify-gate.test.ts',
      'test/notify-schema.test.ts',
      'test/silences.test.ts',
      'test/silences-url.test.ts',
      'test/rules-*.test.ts',
      'test/ruletest.test.ts',
      'test/template-bps.test.ts',
      'test/source-read.test.ts',
      'test/source-values.test.ts',
      'test/source-parse.test.ts',
      'test/source-decimal.test.ts',
      'test/history-memo.test.ts',
    ],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
