/** Inhibition as in Alertmanager: a firing source alert mutes target alerts that share its `equal` labels. */
import type { Alert } from '../model.js';
import { matchesConfig, routingLabels } from './labels.js';
import type { InhibitConfig } from './schema.js';

/**
 * Shipped when `inhibit` is not set: `source_down` of a poll mutes every other alert with the same `poll`
 * label, and `oracle_lag` on a market mutes `price_deviation` on the same `market_id`. Matched on
 * `__kind__` (the rule kind), so they hold whatever the rules are named.
 */
export const defaultInhibitRules: readonly InhibitConfig[] = [
  {
    source_match: { __kind__: 'source_down' },
    source_match_re: {},
    target_match: {},
    target_match_re: { __kind__: '(?!source_down$).*' },
    equal: ['poll'],
  },
  {
    source_match: { __kind__: 'oracle_lag' },
    source_match_re: {},
    target_match: { __kind__: 'price_deviation' },
    target_match_re: {},
    equal: ['market_id'],
  },
];

/** Judges inhibition against a snapshot of the firing alerts. */
export class Inhibitor {
  private readonly sources: Array<{ rule: InhibitConfig; alerts: Array<{ fingerprint: string; labels: Record<string, string> }> }>;

  /** `firing` are the alerts firing now (the candidates for sources); `rules` the inhibit config. */
  constructor(rules: readonly InhibitConfig[], firing: readonly Alert[]) {
    this.sources = rules.map((rule) => ({
      rule,
      alerts: firing
        .map((a) => ({ fingerprint: a.fingerprint, labels: routingLabels(a) }))
        .filter((a) => matchesConfig(a.labels, rule.source_match, rule.source_match_re)),
    }));
  }

  /** True when some firing source alert (not the alert itself) mutes this alert. */
  isInhibited(alert: Pick<Alert, 'fingerprint' | 'labels' | 'kind'>): boolean {
    const labels = routingLabels(alert);
    for (const { rule, alerts } of this.sources) {
      if (alerts.length === 0 || !matchesConfig(labels, rule.target_match, rule.target_match_re)) continue;
      const hit = alerts.some(
        (s) => s.fingerprint !== alert.fingerprint && rule.equal.every((l) => (s.labels[l] ?? '') === (labels[l] ?? '')),
      );
      if (hit) return true;
    }
    return false;
  }
}
