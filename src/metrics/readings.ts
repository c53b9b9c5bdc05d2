/**
 * Turns a successful poll's readings into gauge samples: one series per market field, positions
 * aggregated by (chain, protocol, verified), one series per benchmark window and component.
 */
import type { Gauge } from 'prom-client';
import type { Reading } from '../model.js';
import { labelKey, seriesKey, type Labels, type SeriesBatch } from './series.js';
import type { MarketRow } from './market-table.js';

/** Label value used when a reading lacks a label (an empty value would read as "no label"). */
export const UNKNOWN = 'unknown';

/** The gauges fed from readings. */
export interface ReadingGauges {
  positions: Gauge<string>;
  positionsValue: Gauge<string>;
  benchmarkApy: Gauge<string>;
  benchmarkDay: Gauge<string>;
  benchmarkStale: Gauge<string>;
  benchmarkComplete: Gauge<string>;
}

/** Label names of the position aggregates, in order. */
export const POSITION_LABELS = ['chain', 'protocol', 'verified'] as const;
/** Benchmark windows and rate components, as exported in `window` and `component`. */
export const BENCHMARK_WINDOWS = ['1day', '7day', '30day'] as const;
export const BENCHMARK_COMPONENTS = ['base', 'reward', 'total'] as const;

/** One (chain, protocol, verified) group of positions. */
export interface PositionGroup {
  labels: Labels;
  count: number;
  valueUsd: number;
  /** False while every position of the group had a null value_usd: no value sample then. */
  hasValue: boolean;
}

function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/** A finite number, else NaN (a market family's value for a null field). */
function numOrNaN(v: unknown): number {
  return num(v) ?? Number.NaN;
}

function str(v: unknown): string | null {
  if (typeof v === 'string' && v !== '') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return null;
}

function label(r: Reading, name: string, fallback?: unknown): string {
  return str(r.labels[name]) ?? str(fallback) ?? UNKNOWN;
}

// prom-client keeps the name on the instance but leaves it out of its typings.
const gaugeName = (gauge: Gauge<string>): string => (gauge as unknown as { name: string }).name;

function put(batch: SeriesBatch, gauge: Gauge<string>, key: string, labels: Labels, value: number | null): void {
  if (value === null) return;
  batch.set(seriesKey(gaugeName(gauge), key), { gauge, labels, value });
}

/** The row of one market reading: one value per market family, NaN for a null field. */
export function marketRow(r: Reading, now: number): MarketRow {
  const f = r.fields;
  const market = (f.market ?? {}) as Record<string, unknown>;
  const lastUpdate = num(f.oracle_last_update);
  // One array a market, its values written as they are read (not an array of nulls mapped into a second one).
  const values = [
    numOrNaN(f.utilization),
    numOrNaN(f.borrow_apy),
    numOrNaN(f.supply_apy),
    lastUpdate === null ? Number.NaN : (now - lastUpdate) / 1000,
    numOrNaN(f.oracle_price_scaled),
    numOrNaN(f.total_supplied_usd),
    numOrNaN(f.total_borrowed_usd),
  ];
  return {
    labels: {
      market_id: r.entity,
      chain: label(r, 'chain', market.chain),
      loan_asset: label(r, 'loan_asset', market.loan_asset_symbol),
      collateral_asset: label(r, 'collateral_asset', market.collateral_asset_symbol),
    },
    values,
  };
}

/**
 * A poll's position groups by chain, then protocol, then verified: a position's group found without a labels object
 * and a key text made for it (50,000 of each a positions poll). One per {@link addPosition}'s `groups`.
 */
export type PositionGroupIndex = Map<string, Map<string, Map<string, PositionGroup>>>;

/** Adds one position reading to its (chain, protocol, verified) group; `index` finds the groups already in `groups`. */
export function addPosition(groups: Map<string, PositionGroup>, r: Reading, index: PositionGroupIndex): void {
  const f = r.fields;
  const chain = label(r, 'chain', f.chain);
  const protocol = label(r, 'protocol', f.protocol);
  const verified = label(r, 'verified', typeof f.verified === 'boolean' ? String(f.verified) : undefined);
  let byProtocol = index.get(chain);
  if (!byProtocol) index.set(chain, (byProtocol = new Map()));
  let byVerified = byProtocol.get(protocol);
  if (!byVerified) byProtocol.set(protocol, (byVerified = new Map()));
  let g = byVerified.get(verified);
  if (!g) {
    const key = labelKey([chain, protocol, verified]);
    g = groups.get(key);
    if (!g) {
      g = { labels: { chain, protocol, verified }, count: 0, valueUsd: 0, hasValue: false };
      groups.set(key, g);
    }
    byVerified.set(verified, g);
  }
  g.count += 1;
  const v = num(f.value_usd);
  if (v !== null) {
    g.valueUsd += v;
    g.hasValue = true;
  }
}

/** Sums the groups of several polls and turns them into samples. */
export function positionBatch(g: ReadingGauges, perPoll: Iterable<Map<string, PositionGroup>>): SeriesBatch {
  const total = new Map<string, PositionGroup>();
  for (const groups of perPoll) {
    for (const [key, p] of groups) {
      const t = total.get(key);
      if (!t) total.set(key, { ...p });
      else {
        t.count += p.count;
        t.valueUsd += p.valueUsd;
        t.hasValue ||= p.hasValue;
      }
    }
  }
  const batch: SeriesBatch = new Map();
  for (const [key, p] of total) {
    put(batch, g.positions, key, p.labels, p.count);
    put(batch, g.positionsValue, key, p.labels, p.hasValue ? p.valueUsd : null);
  }
  return batch;
}

/** Adds the samples of one benchmark reading (the newest day of one network and code). */
export function addBenchmark(batch: SeriesBatch, g: ReadingGauges, r: Reading): void {
  const f = r.fields;
  const [entityNetwork, entityCode] = r.entity.split('/');
  const labels: Labels = { network: label(r, 'network', f.network ?? entityNetwork), code: label(r, 'code', f.code ?? entityCode) };
  const key = labelKey([labels.network!, labels.code!]);
  const day = num(f.day);
  put(batch, g.benchmarkDay, key, labels, day === null ? null : day / 1000);
  put(batch, g.benchmarkStale, key, labels, typeof f.isStale === 'boolean' ? Number(f.isStale) : null);
  put(batch, g.benchmarkComplete, key, labels, typeof f.isComplete === 'boolean' ? Number(f.isComplete) : null);
  const apy = (f.apy ?? {}) as Record<string, Record<string, unknown> | null | undefined>;
  for (const window of BENCHMARK_WINDOWS) {
    const rate = apy[window];
    if (!rate) continue;
    for (const component of BENCHMARK_COMPONENTS) {
      const wl: Labels = { ...labels, window, component };
      put(batch, g.benchmarkApy, labelKey([key, window, component]), wl, num(rate[component]));
    }
  }
}
