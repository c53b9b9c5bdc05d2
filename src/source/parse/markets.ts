/**
 * `metrics` rows → one `market` reading per market: the row with the newest `timestamp` (else
 * `created_at`). Only that row is validated — older rows are history the reading does not use — and
 * when it fails, the market gets a rejection and no reading (neither breaching nor absent this time).
 */
import { z } from 'zod';
import type { MarketFields, MarketInfo, Reading, Rejection } from '../../model.js';
import { bigIntString, describeIssue, int, num, scaleOraclePrice, str, time, toEpochMs } from '../values.js';

const marketInfoSchema = z.object({
  chain: str,
  loan_asset: str,
  loan_asset_symbol: str,
  loan_asset_decimals: int,
  collateral_asset: str,
  collateral_asset_symbol: str,
  collateral_asset_decimals: int,
  market_address: str,
  oracle: str,
});

const EMPTY_MARKET: MarketInfo = {
  chain: null,
  loan_asset: null,
  loan_asset_symbol: null,
  loan_asset_decimals: null,
  collateral_asset: null,
  collateral_asset_symbol: null,
  collateral_asset_decimals: null,
  market_address: null,
  oracle: null,
};

const metricsRowSchema = z.object({
  market_id: z.string({ error: 'market_id is required (a string)' }).min(1, 'market_id is empty'),
  id: str,
  block: int,
  utilization: num,
  borrow_apy: num,
  supply_apy: num,
  oracle_price: bigIntString,
  service_price: num,
  total_borrowed: bigIntString,
  total_supplied: bigIntString,
  total_borrowed_usd: num,
  total_supplied_usd: num,
  created_at: time,
  oracle_last_update: time,
  timestamp: time,
  market: z.union([z.null(), z.undefined(), marketInfoSchema]),
});

/** Sort time of a raw row (timestamp, else created_at); +Infinity when present but unreadable, so a bad newest row is never skipped. */
function rawTime(row: unknown): number {
  if (!row || typeof row !== 'object') return Infinity;
  const r = row as Record<string, unknown>;
  const v = r.timestamp ?? r.created_at;
  if (v === undefined || v === null) return -Infinity;
  return toEpochMs(v) ?? Infinity;
}

/** The first hyphen-separated part of a market_id (`morpho-base-0x…` → `morpho`). */
export function protocolOf(marketId: string): string {
  return marketId.split('-')[0] ?? marketId;
}

/** Labels of a market reading; a label whose value is unknown is left out. */
function marketLabels(f: MarketFields): Record<string, string> {
  const m = f.market;
  const all: Record<string, string | null> = {
    market_id: f.market_id,
    chain: m.chain,
    protocol: protocolOf(f.market_id),
    loan_asset: m.loan_asset_symbol,
    collateral_asset: m.collateral_asset_symbol,
    loan_asset_symbol: m.loan_asset_symbol,
    collateral_asset_symbol: m.collateral_asset_symbol,
  };
  return Object.fromEntries(Object.entries(all).filter((e): e is [string, string] => e[1] !== null));
}

/** Validates one metrics row into market fields, or says why not. */
export function parseMetricsRow(row: unknown): { ok: true; fields: MarketFields } | { ok: false; detail: string } {
  const parsed = metricsRowSchema.safeParse(row);
  if (!parsed.success) return { ok: false, detail: describeIssue(parsed.error) };
  const r = parsed.data;
  const market: MarketInfo = r.market ? { ...EMPTY_MARKET, ...r.market } : { ...EMPTY_MARKET };
  const fields: MarketFields = {
    market_id: r.market_id,
    id: r.id,
    block: r.block,
    utilization: r.utilization,
    borrow_apy: r.borrow_apy,
    supply_apy: r.supply_apy,
    oracle_price: r.oracle_price,
    oracle_price_scaled: scaleOraclePrice(r.oracle_price, market.loan_asset_decimals, market.collateral_asset_decimals),
    service_price: r.service_price,
    total_borrowed: r.total_borrowed,
    total_supplied: r.total_supplied,
    total_borrowed_usd: r.total_borrowed_usd,
    total_supplied_usd: r.total_supplied_usd,
    created_at: r.created_at,
    oracle_last_update: r.oracle_last_update,
    timestamp: r.timestamp,
    market,
  };
  return { ok: true, fields };
}

/** Turns the rows of one or more metrics queries into market readings (newest row per market) and rejections. */
export function marketReadings(rows: readonly unknown[], pollTime: number): { readings: Reading[]; rejected: Rejection[] } {
  const newest = new Map<string, { row: unknown; t: number }>();
  const rejected: Rejection[] = [];
  for (const row of rows) {
    const id = row && typeof row === 'object' ? (row as Record<string, unknown>).market_id : undefined;
    if (typeof id !== 'string' || id === '') {
      rejected.push({ reason: 'missing_id', detail: 'metrics row without a market_id' });
      continue;
    }
    const t = rawTime(row);
    const seen = newest.get(id);
    if (!seen || t > seen.t) newest.set(id, { row, t });
  }
  const readings: Reading[] = [];
  for (const [entity, { row }] of newest) {
    const parsed = parseMetricsRow(row);
    if (!parsed.ok) {
      rejected.push({ reason: 'invalid_field', entity, detail: parsed.detail });
      continue;
    }
    const f = parsed.fields;
    readings.push({ kind: 'market', entity, at: f.timestamp ?? f.created_at ?? pollTime, labels: marketLabels(f), fields: { ...f } });
  }
  return { readings, rejected };
}
