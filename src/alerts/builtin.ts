/** The engine's own alerts: `source_down` (a poll failing again and again) and `watchdog` (always firing). */
import type { PollOutcome, Severity } from '../model.js';
import type { Verdict } from '../rules/rule-kind.js';
import type { AlertDescription } from './lifecycle.js';

// The built-in alerts' rule names live in the model: the rule schema refuses them as user rule names.
import { SOURCE_DOWN, WATCHDOG } from '../model.js';
export { SOURCE_DOWN, WATCHDOG };
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
