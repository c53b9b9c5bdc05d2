/**
 * The demo's built-in config: fast schedules, the starter rule kinds tuned to the simulator's `demo` timeline
 * (so each fires within a minute and some resolve), the console notifier, a temporary SQLite file.
 */

/** Settings the demo fills into its config. */
export interface DemoConfigInput {
  baseUrl: string;
  catalogUrl: string;
  apiKey: string;
  dbPath: string;
  listen: string;
  slackWebhook?: string;
  /** storage.retention; default 1d (the demo's). A config that is to backtest a simulated week needs more. */
  retention?: string;
}

/**
 * YAML of the demo config. The rules are the starter rules' kinds with demo timings: the starter files wait
 * 10 minutes (`for: 10m`) and look back an hour, which a one-minute demo cannot show.
 */
export function demoConfigYaml(i: DemoConfigInput): string {
  const q = (s: string) => JSON.stringify(s);
  const notify = i.slackWebhook ? '[stdout, slack]' : '[stdout]';
  return `
source:
  base_url: ${q(i.baseUrl)}
  catalog_url: ${q(i.catalogUrl)}
  api_key: ${q(i.apiKey)}
  timeout: 5s
  retries: 2
  backoff: 200ms
  max_backoff: 2s
storage:
  path: ${q(i.dbPath)}
  retention: ${i.retention ?? '1d'}
server:
  listen: ${q(i.listen)}
log:
  level: warn
polls:
  - { name: markets, kind: metrics, cron: "*/2 * * * * *", limit: 1000 }
  - { name: positions, kind: positions, cron: "*/3 * * * * *" }
  - { name: benchmarks, kind: benchmarks, cron: "*/5 * * * * *", networks: all, codes: [usd], lookback: 7d }
alerting:
  tick: 1s
source_down: { after: 3, severity: warning }
rules:
  inline:
    - name: utilization-critical
      kind: utilization_above
      severity: critical
      threshold: 0.95
      clear_below: 0.92
      for: 4s
      annotations:
        summary: "{{market.collateral_asset_symbol}}/{{market.loan_asset_symbol}} on {{labels.chain}} at {{utilization | pct}} utilization (threshold {{threshold | pct}})"
    - name: utilization-extreme
      kind: threshold
      severity: critical
      field: utilization
      op: ">="
      value: 0.98
      annotations:
        summary: "{{market.loan_asset_symbol}} market at {{value | pct}}: suppliers are close to being unable to withdraw"
    - name: borrow-apy-jump
      kind: apy_jump
      severity: warning
      field: borrow_apy
      window: 10s
      min_change: 0.02
      min_change_rel: 0.5
      require: all
      annotations:
        summary: "borrow APY of {{market.collateral_asset_symbol}}/{{market.loan_asset_symbol}} up {{change | bps}} to {{value | pct}}"
    - name: oracle-lag
      kind: oracle_lag
      severity: critical
      max_lag: 20s
      annotations:
        summary: "oracle of {{market.collateral_asset_symbol}}/{{market.loan_asset_symbol}} last updated {{lag | duration}} ago"
    - name: price-deviation
      kind: price_deviation
      severity: warning
      max_deviation: 0.02
      annotations:
        summary: "oracle vs service price of {{market.collateral_asset_symbol}}/{{market.loan_asset_symbol}} apart by {{deviation | pct}}"
    - name: unverified-position
      kind: unverified_position
      severity: warning
      min_value_usd: 10000
      annotations:
        summary: "unverified {{protocol}} position of {{value_usd | usd}} on {{chain}}"
    - name: benchmark-stale
      kind: stale_benchmark
      severity: warning
      max_age: 36h
      incomplete_for: 6h
      annotations:
        summary: "{{network}} {{code}} benchmark is {{reason}}"
notifiers:
  stdout: { type: console, color: auto }
${i.slackWebhook ? `  slack: { type: slack, webhook_url: ${q(i.slackWebhook)} }\n` : ''}routes:
  - default: true
    notify: ${notify}
    group_by: [rule]
    group_wait: 1s
    group_interval: 3s
    repeat_interval: 1h
`;
}
