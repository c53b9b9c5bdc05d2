/** Readings, alerts and scrape parsing shared by the metrics, HTTP and Prometheus tests. */
import type { Alert, PollOutcome, Reading } from '../src/model.js';

const MARKET_LABELS = ['market_id', 'chain', 'loan_asset', 'collateral_asset'];
const BENCHMARK_LABELS = ['network', 'code'];

/** A metric family: its name, type and label names (a histogram's `le` aside). */
export interface MetricFamily {
  name: string;
  type: 'gauge' | 'counter' | 'histogram';
  labels: readonly string[];
}

/**
 * Every metric family of SPEC §5 with its type and label names; where the SPEC names no labels, the poll's or the
 * benchmark's identity. The one table the registry test, the daemon tests and the demo test check scrapes against.
 */
export const SPEC_FAMILIES: readonly MetricFamily[] = [
  ...['utilization_ratio', 'borrow_apy_ratio', 'supply_apy_ratio', 'oracle_lag_seconds', 'oracle_price', 'total_supplied_usd', 'total_borrowed_usd'].map(
    (m): MetricFamily => ({ name: `lookout_market_${m}`, type: 'gauge', labels: MARKET_LABELS }),
  ),
  { name: 'lookout_positions', type: 'gauge', labels: ['chain', 'protocol', 'verified'] },
  { name: 'lookout_positions_value_usd', type: 'gauge', labels: ['chain', 'protocol', 'verified'] },
  { name: 'lookout_benchmark_apy_ratio', type: 'gauge', labels: ['network', 'code', 'window', 'component'] },
  { name: 'lookout_benchmark_latest_day_timestamp_seconds', type: 'gauge', labels: BENCHMARK_LABELS },
  { name: 'lookout_benchmark_stale', type: 'gauge', labels: BENCHMARK_LABELS },
  { name: 'lookout_benchmark_complete', type: 'gauge', labels: BENCHMARK_LABELS },
  { name: 'lookout_poll_duration_seconds', type: 'histogram', labels: ['poll'] },
  { name: 'lookout_poll_errors_total', type: 'counter', labels: ['poll', 'reason'] },
  { name: 'lookout_poll_last_success_timestamp_seconds', type: 'gauge', labels: ['poll'] },
  { name: 'lookout_source_up', type: 'gauge', labels: ['poll'] },
  { name: 'lookout_rows_rejected_total', type: 'counter', labels: ['poll', 'reason'] },
  { name: 'lookout_fields_rejected_total', type: 'counter', labels: ['poll', 'field', 'reason'] },
  { name: 'lookout_alerts', type: 'gauge', labels: ['rule', 'severity', 'state'] },
  { name: 'lookout_notifications_total', type: 'counter', labels: ['notifier', 'outcome'] },
  { name: 'lookout_outbox_pending', type: 'gauge', labels: [] },
  { name: 'lookout_rule_evaluation_duration_seconds', type: 'histogram', labels: [] },
];

/** The per-market families of SPEC §5. */
export const MARKET_FAMILIES: readonly string[] = SPEC_FAMILIES.filter((f) => f.name.startsWith('lookout_market_')).map((f) => f.name);

/** Fixed "now" of the fixtures: 2025-01-15T12:00:00Z. */
export const NOW = Date.UTC(2025, 0, 15, 12);

/** A market reading with sensible fields; `fields` overrides any of them. */
export function market(id: string, fields: Record<string, unknown> = {}, labels: Record<string, string> = {}): Reading {
  return {
    kind: 'market',
    entity: id,
    at: NOW,
    labels: { market_id: id, chain: 'ethereum', loan_asset: 'USDC', collateral_asset: 'WETH', protocol: 'morpho', ...labels },
    fields: {
      market_id: id,
      id: null,
      block: 21_000_000,
      utilization: 0.42,
      borrow_apy: 0.051,
      supply_apy: 0.034,
      oracle_price: '3300000000000000000000000000',
      oracle_price_scaled: 3300.5,
      service_price: 3301,
      total_borrowed: '420000000000',
      total_supplied: '1000000000000',
      total_borrowed_usd: 420_000,
      total_supplied_usd: 1_000_000,
      created_at: NOW - 60_000,
      oracle_last_update: NOW - 90_000,
      timestamp: NOW - 60_000,
      market: {
        chain: 'ethereum',
        loan_asset: '0xa0b8',
        loan_asset_symbol: labels.loan_asset ?? 'USDC',
        loan_asset_decimals: 6,
        collateral_asset: '0xc02a',
        collateral_asset_symbol: labels.collateral_asset ?? 'WETH',
        collateral_asset_decimals: 18,
        market_address: null,
        oracle: null,
      },
      ...fields,
    },
  };
}

/** A position reading. */
export function position(id: string, chain: string, protocol: string, verified: boolean, valueUsd: number | null): Reading {
  return {
    kind: 'position',
    entity: id,
    at: NOW,
    labels: { chain, protocol, verified: String(verified), wallet: '0xw' },
    fields: { id, wallet: '0xw', chain, protocol, asset: 'USDC', value_usd: valueUsd, nav_usd: null, pnl_usd: null, verified },
  };
}

/** A benchmark reading of one network and code. */
export function benchmark(network: string, code: string, opts: { stale?: boolean; total7?: number | null } = {}): Reading {
  const day = Date.UTC(2025, 0, 15);
  const rate = (base: number, reward: number) => ({ base, reward, total: base + reward });
  return {
    kind: 'benchmark',
    entity: `${network}/${code}`,
    at: day,
    labels: { network, code },
    fields: {
      network,
      code,
      day,
      isComplete: true,
      isStale: opts.stale ?? false,
      apy: {
        '1day': rate(0.03, 0.01),
        '7day': opts.total7 === null ? null : { base: 0.029, reward: 0.011, total: opts.total7 ?? 0.04 },
        '30day': rate(0.028, 0.012),
      },
      constituents: { '1day': 5, '7day': 5, '30day': 4 },
      days: 30,
    },
  };
}

/** A poll outcome. */
export function outcome(poll: string, ok: boolean, extra: Partial<PollOutcome> = {}): PollOutcome {
  return {
    poll,
    kind: 'markets',
    ok,
    readings: [],
    rejected: [],
    started_at: NOW - 1500,
    finished_at: NOW,
    ...(ok ? {} : { error: 'GET /metrics: 503 — service unavailable', errorReason: 'http_5xx' }),
    ...extra,
  };
}

/** An alert of `rule` on `entity`. */
export function alert(rule: string, entity: string, state: Alert['state'], extra: Partial<Alert> = {}): Alert {
  return {
    fingerprint: `${rule}:${entity}`.padEnd(16, '0').slice(0, 16),
    rule,
    kind: 'utilization_above',
    entity,
    state,
    flapping: false,
    severity: 'critical',
    labels: { rule, alertname: rule, severity: extra.severity ?? 'critical', market_id: entity },
    annotations: { summary: `utilization of ${entity} above 90%` },
    value: 0.97,
    threshold: 0.9,
    previous_value: 0.88,
    peak: 0.97,
    data_at: NOW - 60_000,
    block: 21_000_000,
    pending_since: NOW - 600_000,
    firing_since: state === 'firing' ? NOW - 300_000 : null,
    resolved_at: null,
    last_eval_at: NOW,
    last_notified_at: state === 'firing' ? NOW - 290_000 : null,
    absent_polls: 0,
    changes: [],
    ...extra,
  };
}

/** One parsed sample line of the text format. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the sample lines of a Prometheus text exposition (enough for these tests). */
export function parseScrape(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (!m) throw new Error(`unparsable line: ${line}`);
    const labels: Record<string, string> = {};
    const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
    for (let l = re.exec(m[2] ?? ''); l; l = re.exec(m[2] ?? '')) {
      labels[l[1]!] = l[2]!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
    }
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

/** Samples of one metric name. */
export function samples(text: string, name: string): Sample[] {
  return parseScrape(text).filter((s) => s.name === name);
}

/** Metric family names declared by `# TYPE` lines. */
export function families(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) out.set(m[1]!, m[2]!);
  return out;
}

