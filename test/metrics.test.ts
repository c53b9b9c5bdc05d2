import { describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { createMetrics } from '../src/metrics/index.js';
import { NOW, SPEC_FAMILIES, alert, benchmark, families, market, outcome, position, samples } from './metrics-fixtures.js';

const fresh = () => createMetrics({ processMetrics: false });

/** The SPEC §5 gauges and counters, and lookout's own extra counters, with their type and labels (histograms: below). */
const SPEC_METRICS: [string, string, readonly string[]][] = [
  ...SPEC_FAMILIES.filter((f) => f.type !== 'histogram').map((f): [string, string, readonly string[]] => [f.name, f.type, f.labels]),
  ['lookout_data_errors_total', 'counter', ['rule', 'reason']],
  ['lookout_poll_skipped_total', 'counter', ['poll']],
  ['lookout_store_errors_total', 'counter', ['operation', 'reason']],
  ['lookout_store_writable', 'gauge', []],
];

function fullyFed() {
  const m = fresh();
  m.observePoll(outcome('markets', true), 1.5);
  m.observePoll(outcome('markets', false), 0.2);
  m.observePoll(outcome('markets', true, { rejected: [{ reason: 'invalid_field', detail: 'x' }] }), 0.2);
  m.setReadings('markets', [market('m1'), market('m2', { utilization: 0.97 })], NOW);
  m.setReadings('positions', [position('p1', 'ethereum', 'aave', true, 10), position('p2', 'ethereum', 'aave', false, 5)], NOW);
  m.setReadings('benchmarks', [benchmark('ethereum', 'USDC')], NOW);
  m.setAlerts([alert('util_high', 'm2', 'firing')]);
  m.observeEvaluation(0.01);
  m.notification('slack', 'sent');
  m.dataError('util_high', 'utilization_out_of_range');
  m.pollSkipped('markets');
  m.observePoll(outcome('markets', true, { rejected: [{ reason: 'not_a_price', entity: 'm1', field: 'oracle_price', detail: 'x' }] }), 1);
  m.storeError('poll', 'full');
  m.setStoreWritable(false);
  return m;
}

describe('metrics registry', () => {
  it.each(SPEC_METRICS)('%s is a %s with labels %j', async (name, type, labels) => {
    const text = await fullyFed().scrape();
    expect(families(text).get(name)).toBe(type);
    expect(text).toMatch(new RegExp(`^# HELP ${name} \\S`, 'm'));
    const found = samples(text, name);
    expect(found.length).toBeGreaterThan(0);
    for (const s of found) expect(Object.keys(s.labels).sort()).toEqual([...labels].sort());
  });

  it.each(SPEC_FAMILIES.filter((f) => f.type === 'histogram').map((f) => [f.name]))('%s is a histogram', async (name) => {
    const text = await fullyFed().scrape();
    expect(families(text).get(name)).toBe('histogram');
    expect(samples(text, `${name}_count`).length).toBeGreaterThan(0);
  });

  it('uses its own registry and includes the process metrics', async () => {
    const a = createMetrics();
    const b = createMetrics();
    expect(a.registry).not.toBe(b.registry);
    expect(families(await a.scrape()).get('process_cpu_user_seconds_total')).toBe('counter');
    const given = new Registry();
    expect(createMetrics({ registry: given, processMetrics: false }).registry).toBe(given);
  });

  it('exports market fields in base units', async () => {
    const m = fresh();
    m.setReadings('markets', [market('m1')], NOW);
    const text = await m.scrape();
    const one = (name: string) => samples(text, name)[0];
    expect(one('lookout_market_utilization_ratio')).toEqual({
      name: 'lookout_market_utilization_ratio',
      labels: { market_id: 'm1', chain: 'ethereum', loan_asset: 'USDC', collateral_asset: 'WETH' },
      value: 0.42,
    });
    expect(one('lookout_market_oracle_lag_seconds')?.value).toBe(90);
    expect(one('lookout_market_oracle_price')?.value).toBe(3300.5);
    expect(one('lookout_market_total_supplied_usd')?.value).toBe(1_000_000);
    expect(one('lookout_market_borrow_apy_ratio')?.value).toBe(0.051);
  });

  it('gives no sample for a null field, and removes one that turned null', async () => {
    const m = fresh();
    m.setReadings('markets', [market('m1')], NOW);
    expect(samples(await m.scrape(), 'lookout_market_oracle_lag_seconds')).toHaveLength(1);
    m.setReadings('markets', [market('m1', { oracle_last_update: null, utilization: null })], NOW);
    const text = await m.scrape();
    expect(samples(text, 'lookout_market_oracle_lag_seconds')).toHaveLength(0);
    expect(samples(text, 'lookout_market_utilization_ratio')).toHaveLength(0);
    expect(samples(text, 'lookout_market_supply_apy_ratio')).toHaveLength(1);
  });

  it('aggregates positions by chain, protocol and verified, never per position', async () => {
    const m = fresh();
    m.setReadings(
      'positions',
      [
        position('p1', 'ethereum', 'aave', true, 100),
        position('p2', 'ethereum', 'aave', true, 50.5),
        position('p3', 'ethereum', 'aave', false, null),
        position('p4', 'base', 'morpho', false, 7),
      ],
      NOW,
    );
    const text = await m.scrape();
    const byKey = (name: string) =>
      Object.fromEntries(samples(text, name).map((s) => [`${s.labels.chain}/${s.labels.protocol}/${s.labels.verified}`, s.value]));
    expect(byKey('lookout_positions')).toEqual({ 'ethereum/aave/true': 2, 'ethereum/aave/false': 1, 'base/morpho/false': 1 });
    // the unverified ethereum/aave group has only a null value: no value sample rather than 0
    expect(byKey('lookout_positions_value_usd')).toEqual({ 'ethereum/aave/true': 150.5, 'base/morpho/false': 7 });
  });

  it('sums the position groups of several polls', async () => {
    const m = fresh();
    m.setReadings('pos-a', [position('p1', 'ethereum', 'aave', true, 10)], NOW);
    m.setReadings('pos-b', [position('p2', 'ethereum', 'aave', true, 5)], NOW);
    expect(samples(await m.scrape(), 'lookout_positions_value_usd')[0]?.value).toBe(15);
    m.setReadings('pos-b', [], NOW);
    expect(samples(await m.scrape(), 'lookout_positions_value_usd')[0]?.value).toBe(10);
  });

  it('exports benchmarks per window and component; a null window has no samples', async () => {
    const m = fresh();
    m.setReadings('benchmarks', [benchmark('ethereum', 'USDC', { stale: true, total7: null })], NOW);
    const text = await m.scrape();
    const apy = samples(text, 'lookout_benchmark_apy_ratio');
    expect(apy).toHaveLength(6);
    expect(apy.find((s) => s.labels.window === '1day' && s.labels.component === 'total')?.value).toBeCloseTo(0.04);
    expect(apy.some((s) => s.labels.window === '7day')).toBe(false);
    expect(samples(text, 'lookout_benchmark_stale')[0]?.value).toBe(1);
    expect(samples(text, 'lookout_benchmark_complete')[0]?.value).toBe(1);
    expect(samples(text, 'lookout_benchmark_latest_day_timestamp_seconds')[0]?.value).toBe(Date.UTC(2025, 0, 15) / 1000);
  });

  it('tracks source_up, errors, last success and rejected rows per poll', async () => {
    const m = fresh();
    const up = async () => samples(await m.scrape(), 'lookout_source_up')[0]?.value;
    m.observePoll(outcome('p', true), 1);
    expect(await up()).toBe(1);
    m.observePoll(outcome('p', false), 1);
    expect(await up()).toBe(0);
    m.observePoll(outcome('p', false, { errorReason: 'timeout' }), 1);
    expect(await up()).toBe(0);
    m.observePoll(
      outcome('p', true, {
        finished_at: NOW + 60_000,
        rejected: [
          { reason: 'invalid_field', detail: 'a' },
          { reason: 'invalid_field', detail: 'b' },
          { reason: 'missing_id', detail: 'c' },
          { reason: 'not_a_price', entity: 'm', field: 'oracle_price', detail: 'd' },
          { reason: 'not_a_price', entity: 'm2', field: 'oracle_price', detail: 'd' },
        ],
      }),
      1,
    );
    const text = await m.scrape();
    expect(await up()).toBe(1);
    expect(samples(text, 'lookout_poll_last_success_timestamp_seconds')[0]?.value).toBe((NOW + 60_000) / 1000);
    const errors = Object.fromEntries(samples(text, 'lookout_poll_errors_total').map((s) => [s.labels.reason, s.value]));
    expect(errors).toEqual({ http_5xx: 1, timeout: 1 });
    const rejected = Object.fromEntries(samples(text, 'lookout_rows_rejected_total').map((s) => [s.labels.reason, s.value]));
    expect(rejected).toEqual({ invalid_field: 2, missing_id: 1 });
    const fields = samples(text, 'lookout_fields_rejected_total').map((s) => [s.labels.field, s.labels.reason, s.value]);
    expect(fields).toEqual([['oracle_price', 'not_a_price', 2]]);
    expect(samples(text, 'lookout_poll_duration_seconds_count')[0]?.value).toBe(4);
  });

  it('forgetPoll drops every series of a poll', async () => {
    const m = fresh();
    m.observePoll(outcome('gone', false), 1);
    m.observePoll(outcome('gone', true, { rejected: [{ reason: 'invalid_field', detail: '' }, { reason: 'x', field: 'f', detail: '' }] }), 1);
    m.setReadings('gone', [market('m1'), position('p', 'ethereum', 'aave', true, 1)], NOW);
    m.pollSkipped('gone');
    m.observePoll(outcome('kept', true), 1);
    m.forgetPoll('gone');
    const text = await m.scrape();
    const polls = new Set(
      ['lookout_source_up', 'lookout_poll_errors_total', 'lookout_rows_rejected_total', 'lookout_fields_rejected_total', 'lookout_poll_duration_seconds_count', 'lookout_poll_skipped_total']
        .flatMap((n) => samples(text, n))
        .map((s) => s.labels.poll),
    );
    expect([...polls]).toEqual(['kept']);
    expect(samples(text, 'lookout_market_utilization_ratio')).toHaveLength(0);
    expect(samples(text, 'lookout_positions')).toHaveLength(0);
  });

  it('mirrors alerts like ALERTS: counts per rule, severity and state; combos that went away read 0', async () => {
    const m = fresh();
    m.setAlerts([
      alert('util_high', 'm1', 'firing'),
      alert('util_high', 'm2', 'firing'),
      alert('util_high', 'm3', 'pending'),
      alert('oracle_lag', 'm1', 'firing', { severity: 'warning' }),
      alert('util_high', 'm4', 'resolved'),
      alert('util_high', 'm5', 'inactive'),
    ]);
    const read = async () =>
      Object.fromEntries(samples(await m.scrape(), 'lookout_alerts').map((s) => [`${s.labels.rule}/${s.labels.severity}/${s.labels.state}`, s.value]));
    expect(await read()).toEqual({ 'util_high/critical/firing': 2, 'util_high/critical/pending': 1, 'oracle_lag/warning/firing': 1 });
    m.setAlerts([alert('util_high', 'm3', 'firing')]);
    expect(await read()).toEqual({ 'util_high/critical/firing': 1, 'util_high/critical/pending': 0, 'oracle_lag/warning/firing': 0 });
  });

  it('counts notifications, data errors, outbox and evaluations', async () => {
    const m = fresh();
    m.notification('slack', 'sent');
    m.notification('slack', 'sent');
    m.notification('email', 'failed');
    m.setOutboxPending(7);
    m.dataError('util_high', 'utilization_out_of_range');
    m.observeEvaluation(0.002);
    const text = await m.scrape();
    const n = Object.fromEntries(samples(text, 'lookout_notifications_total').map((s) => [`${s.labels.notifier}/${s.labels.outcome}`, s.value]));
    expect(n).toEqual({ 'slack/sent': 2, 'email/failed': 1 });
    expect(samples(text, 'lookout_outbox_pending')[0]?.value).toBe(7);
    expect(samples(text, 'lookout_data_errors_total')[0]).toMatchObject({ labels: { rule: 'util_high' }, value: 1 });
    expect(samples(text, 'lookout_rule_evaluation_duration_seconds_count')[0]?.value).toBe(1);
  });

  it('a data error is counted by its kind, not by the value it quotes (bounded series, no service text)', async () => {
    const m = fresh();
    for (const u of ['1.2', '1.5', '-0.3']) m.dataError('util', `utilization ${u} outside [0, 1]`);
    m.dataError('apy', 'borrow_apy not a number: <script>');
    m.dataError('apy', 'borrow_apy not a number: high');
    m.dataError('lag', `oracle_last_update ${new Date(NOW).toISOString()} is in the future`);
    m.dataError('dev', 'oracle_price unreadable (needs_decimals)');
    const got = Object.fromEntries(samples(await m.scrape(), 'lookout_data_errors_total').map((s) => [`${s.labels.rule}|${s.labels.reason}`, s.value]));
    expect(got).toEqual({
      'util|utilization N outside [N, N]': 3,
      'apy|borrow_apy not a number': 2,
      'lag|oracle_last_update N is in the future': 1,
      'dev|oracle_price unreadable (needs_decimals)': 1,
    });
  });

  it('escapes untrusted label values in the exposition', async () => {
    const m = fresh();
    m.setReadings('markets', [market('m1', {}, { loan_asset: 'a"b\\c\nd', collateral_asset: '<script>' })], NOW);
    const s = samples(await m.scrape(), 'lookout_market_utilization_ratio')[0];
    expect(s?.labels.loan_asset).toBe('a"b\\c\nd');
    expect(s?.labels.collateral_asset).toBe('<script>');
  });

  it('exports lookout_build_info when given a version', async () => {
    const m = createMetrics({ processMetrics: false, version: '1.2.3' });
    expect(samples(await m.scrape(), 'lookout_build_info')).toEqual([{ name: 'lookout_build_info', labels: { version: '1.2.3' }, value: 1 }]);
  });
});

describe('fast scrape path', () => {
  it('renders exactly what registry.metrics() renders', async () => {
    const m = fullyFed();
    m.setReadings('markets', [market('m1', {}, { loan_asset: 'a"b\\c\nd' }), market('m2', { oracle_last_update: null })], NOW);
    expect(await m.scrape()).toBe(await m.registry.metrics());
    // the cached market text must follow the next poll
    m.setReadings('markets', [market('m2', { utilization: 0.5 })], NOW);
    const text = await m.scrape();
    expect(text).toBe(await m.registry.metrics());
    expect(samples(text, 'lookout_market_utilization_ratio').map((s) => [s.labels.market_id, s.value])).toEqual([['m2', 0.5]]);
  });
});
