/** Configs of the benchmarks: the starter rule files as shipped, or the seven market rules of the rules issue. */
import { loadConfigSource, type Config } from '../config/load.js';
import { benchConfigSource } from './config-source.js';

/**
 * Seven rules that read every market (no `select`, so all 10,000 are judged by each), in the starter
 * files' style, plus the position and benchmark rules, which a markets poll must not cost anything.
 */
const SEVEN_RULES = `
    - { name: utilization-warning, kind: utilization_above, severity: warning, threshold: 0.92, clear_below: 0.90, for: 10m,
        annotations: { summary: "{{market.collateral_asset_symbol}}/{{market.loan_asset_symbol}}: utilization {{utilization | pct}}" } }
    - { name: utilization-critical, kind: utilization_above, severity: critical, threshold: 0.95, clear_below: 0.93, for: 10m,
        annotations: { summary: "{{market_id | short}} at {{utilization | pct}}" } }
    - { name: borrow-apy-jump, kind: apy_jump, severity: warning, field: borrow_apy, window: 1h, min_change: 0.02, min_change_rel: 0.5, require: all, direction: up,
        annotations: { summary: "borrow APY {{previous | pct}} → {{value | pct}}" } }
    - { name: borrow-apy-high, kind: threshold, severity: warning, field: borrow_apy, op: ">", value: 0.25, for: 10m }
    - { name: utilization-full, kind: threshold, severity: critical, field: utilization, op: ">=", value: 0.995 }
    - { name: oracle-lag-24h, kind: oracle_lag, severity: critical, heartbeat: 24h,
        annotations: { summary: "oracle not updated for {{lag | duration}}" } }
    - { name: oracle-price-deviation, kind: price_deviation, severity: warning, max_deviation: 0.02, for: 10m,
        annotations: { summary: "oracle price off by {{deviation | pct}}" } }
    - { name: position-unverified, kind: unverified_position, severity: warning, min_value_usd: 10000, for: 15m }
    - { name: benchmark-stale, kind: stale_benchmark, severity: warning, max_age: 36h, incomplete_for: 6h }
`;

/** Which rules a bench config carries: a named set, or YAML list items of `rules.inline`. */
export type RuleSet = 'seven' | 'starter' | { inline: string };

/** What a bench config points at. */
export interface BenchConfigInput {
  baseUrl: string;
  catalogUrl: string;
  apiKey: string;
  dbPath: string;
  rules: RuleSet;
  /** Polls to schedule (cron far in the future: the bench triggers them). */
  polls?: ReadonlyArray<'markets' | 'positions' | 'benchmarks'>;
  /** A poll's cron instead of the far future (e.g. every second: the daemon polls on its own). */
  cron?: Partial<Record<'markets' | 'positions' | 'benchmarks', string>>;
  /** YAML of the `notifiers:` and `routes:` sections, indented two spaces; default a console notifier into nowhere. */
  notify?: { notifiers: string; routes: string };
  /**
   * The markets poll's `limit`: the rows one query may return. Default 10,000, the §8 scale's (one row per market
   * and then some); `'default'` leaves it out, as a user watching a few markets would: the product's default, 1,000.
   */
  marketsLimit?: number | 'default';
  /** More YAML at the top level (e.g. `delivery:`). */
  extra?: string;
}

const POLL_YAML = {
  markets: (cron: string, i: BenchConfigInput) =>
    `  - { name: markets, kind: metrics, cron: "${cron}"${i.marketsLimit === 'default' ? '' : `, limit: ${i.marketsLimit ?? 10_000}`} }`,
  positions: (cron: string) => `  - { name: positions, kind: positions, cron: "${cron}", params: { limit: 500 } }`,
  benchmarks: (cron: string) => `  - { name: benchmarks, kind: benchmarks, cron: "${cron}", networks: all, codes: [usd, eth], lookback: 7d }`,
} as const;

/** Never in a bench's lifetime: the bench triggers the poll. */
const FAR_CRON = '0 0 1 1 *';

/** YAML of a bench config: the simulator as source, a console notifier into nowhere, the HTTP listener on a free port. */
export function benchConfigYaml(i: BenchConfigInput): string {
  const q = (s: string) => JSON.stringify(s);
  const polls = (i.polls ?? ['markets']).map((p) => POLL_YAML[p](i.cron?.[p] ?? FAR_CRON, i)).join('\n');
  const rules = i.rules === 'starter' ? `  files: [rules/*.yaml]` : i.rules === 'seven' ? `  inline:${SEVEN_RULES}` : `  inline:\n${i.rules.inline}`;
  const notify = i.notify ?? { notifiers: '  out: { type: console, color: never }', routes: '  - { default: true, notify: [out] }' };
  return `
source:
  base_url: ${q(i.baseUrl)}
  catalog_url: ${q(i.catalogUrl)}
  api_key: ${q(i.apiKey)}
  timeout: 60s
  retries: 2
  backoff: 100ms
storage:
  path: ${q(i.dbPath)}
server:
  listen: 127.0.0.1:0
log:
  level: warn
polls:
${polls}
rules:
${rules}
notifiers:
${notify.notifiers}
routes:
${notify.routes}
${i.extra ?? ''}
`;
}

/** Loads a bench config as the daemon would (rule files resolved against the repository root). */
export function loadBenchConfig(i: BenchConfigInput): Config {
  return loadBenchYaml(benchConfigYaml(i));
}

/** Loads the YAML of a bench config (see {@link benchConfigYaml}) as the daemon would. */
export function loadBenchYaml(yaml: string): Config {
  return loadConfigSource(benchConfigSource(yaml));
}
