/** The engine's own alerts: `source_down` (a poll failing again and again) and `watchdog` (always firing). */
import type { PollOutcome, Severity } from '../model.js';
import type { Verdict } from '../rules/rule-kind.js';
import type { AlertDescription } from './lifecycle.js';

/** Rule name (and kind) of the built-in alert on a poll that keeps failing; its entity is the poll's name. */
export const SOURCE_DOWN = 'source_down';
/** Rule name (and kind) of the always-firing alert that proves the pipeline works end to end. */
export const WATCHDOG = 'watchdog';
/** Entity of the watchdog alert. */
export const WATCHDOG_ENTITY = 'lookout';

/** Labels and annotations of the built-in alerts. */
export const builtinDescription = {
  /** `source_down` for one poll: the count of failures and the last error (never a secret: errors are redacted at the source). */
  sourceDown(outcome: PollOutcome, severity: Severity, verdict: Verdict): AlertDescription {
    const labels = { rule: SOURCE_DOWN, alertname: SOURCE_DOWN, severity, poll: outcome.poll };
    if (verdict.status !== 'breach') {
      return { labels, annotations: { summary: `poll ${outcome.poll} is answering again`, description: `poll ${outcome.poll} succeeded` } };
    }
    const n = verdict.value ?? 0;
    return {
      labels,
      annotations: {
        summary: `poll ${outcome.poll} failed ${n} times in a row`,
        description: `last error${outcome.errorReason ? ` (${outcome.errorReason})` : ''}: ${outcome.error ?? 'unknown'}`,
      },
    };
  },
  /** The watchdog alert. */
  watchdog(severity: Severity): AlertDescription {
    return {
      labels: { rule: WATCHDOG, alertname: WATCHDOG, severity },
      annotations: {
        summary: 'lookout is running and its alerts reach you',
        description: 'This alert always fires. If it stops arriving, lookout or its notification path is broken.',
      },
    };
  },
};
