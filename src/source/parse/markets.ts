/**
 * `metrics` rows → one `market` reading per market: the row with the newest `timestamp` (else
 * `created_at`). Only that row is read — older rows are history the reading does not use. A row is
 * rejected only without a usable `market_id`; every other field is read on its own (SPEC §6), and one
 * that cannot be read is unknown for this reading and a field rejection.
 */
import type { MarketFields, MarketInfo, Reading, Rejection } from '../../model.js';
import { readAmount } from '../read/amounts.js';
import { FieldReader, isObject, unreadableOf } from '../read/fields.js';
import { readInteger, readNumber, readString } from '../read/numbers.js';
import { readOraclePrice, type OraclePriceMode } from '../read/oracle.js';
import { readTime, toEpochMs } from '../read/times.js';
import { mergeSeen, type SeenForms } from '../read/seen.js';
import { ROWS_PER_STEP, runSync, type Steps } from '../../yielding.js';

/** How parsing is told what the service's encodings cannot say. */
export interface MarketParseOptions {
  /** `source.oracle_price`. */
  oraclePrice?: OraclePriceMode;
  /**
   * What is known of each market so far (its nested `market` object: tokens, decimals, chain never change).
   * Fills in a row that came without its `market` object, or with a member unreadable, so its labels stay
   * the same (the same alert, not a new one without `chain`) and its scaled oracle price and token-unit
   * amounts still read. Updated here from every row that carries the object.
   */
  known?: Map<string, MarketInfo>;
}

const INFO_STRINGS = ['chain', 'loan_asset', 'loan_asset_symbol', 'collateral_asset', 'collateral_asset_symbol', 'market_address', 'oracle'] as const;
const INFO_INTEGERS = ['loan_asset_decimals', 'collateral_asset_decimals'] as const;

/** The readable members of a raw row's nested market object, merged over what was known. */
function learnMarket(r: Record<string, unknown>, known: MarketInfo | undefined): MarketInfo | undefined {
  if (!isObject(r.market)) return known;
  const m = r.market;
  const out: MarketInfo = { ...(known ?? emptyInfo()) };
  let changed = known === undefined;
  for (const k of INFO_STRINGS) {
    const v = readString(m[k]);
    if (v.ok && v.value !== null && v.value !== out[k]) {
      out[k] = v.value;
      changed = true;
    }
  }
  for (const k of INFO_INTEGERS) {
    const v = readInteger(m[k]);
    if (v.ok && v.value !== null && v.value !== out[k]) {
      out[k] = v.value;
      changed = true;
    }
  }
  // What was known, when the row told nothing new (every poll, for every market): the daemon keeps this map, and a
  // copy per market and poll, with the poll's own strings, was 4 MB at SPEC §8 scale for the old generation to collect.
  return changed ? out : known;
}

/**
 * Learns what `rows` tell of their markets into `known`, and returns the markets whose token decimals are still
 * unknown after them (no row of theirs, now or before, carried them): their scaled prices and token-unit amounts
 * cannot be read until something does.
 */
export function marketsWithoutDecimals(rows: readonly unknown[], known: Map<string, MarketInfo>): string[] {
  return runSync(marketsWithoutDecimalsSteps(rows, known));
}

/** {@link marketsWithoutDecimals} in steps that may pause between rows. */
export function* marketsWithoutDecimalsSteps(rows: readonly unknown[], known: Map<string, MarketInfo>): Steps<string[]> {
  const ids = new Set<string>();
  let n = 0;
  for (const row of rows) {
    if (++n % ROWS_PER_STEP === 0) yield;
    if (!isObject(row)) continue;
    const id = readString(row.market_id);
    if (!id.ok || id.value === null) continue;
    ids.add(id.value);
    const info = learnMarket(row, known.get(id.value));
    if (info) known.set(id.value, info);
  }
  return [...ids].filter((id) => {
    const k = known.get(id);
    return !k || k.loan_asset_decimals === null || k.collateral_asset_decimals === null;
  });
}

function emptyInfo(): MarketInfo {
  return { chain: null, loan_asset: null, loan_asset_symbol: null, loan_asset_decimals: null, collateral_asset: null, collateral_asset_symbol: null, collateral_asset_decimals: null, market_address: null, oracle: null };
}

/** A row's market object with its unknown members filled from what is known of the market. */
function fillFrom(m: MarketInfo, known: MarketInfo | undefined): MarketInfo {
  if (!known) return m;
  const out = { ...m } as Record<keyof MarketInfo, unknown>;
  for (const k of Object.keys(known) as (keyof MarketInfo)[]) if (out[k] === null) out[k] = known[k];
  return out as MarketInfo;
}

/** Sort time of a raw row (timestamp, else created_at); +Infinity when present but unreadable, so a bad newest row is never skipped. */
function rawTime(r: Record<string, unknown>): number {
  const v = r.timestamp ?? r.created_at;
  if (v === undefined || v === null || v === '') return -Infinity;
  return toEpochMs(v) ?? Infinity;
}

/** The first hyphen-separated part of a market_id (`morpho-base-0x…` → `morpho`). */
export function protocolOf(marketId: string): string {
  return marketId.split('-')[0] ?? marketId;
}

/** Labels of a market reading; a label whose value is unknown is left out. */
function marketLabels(f: MarketFields): Record<string, string> {
  const m = f.market;
  const out: Record<string, string> = { market_id: f.market_id };
  if (m.chain !== null) out.chain = m.chain;
  out.protocol = protocolOf(f.market_id);
  if (m.loan_asset_symbol !== null) out.loan_asset = m.loan_asset_symbol;
  if (m.collateral_asset_symbol !== null) out.collateral_asset = m.collateral_asset_symbol;
  if (m.loan_asset_symbol !== null) out.loan_asset_symbol = m.loan_asset_symbol;
  if (m.collateral_asset_symbol !== null) out.collateral_asset_symbol = m.collateral_asset_symbol;
  return out;
}

/** Reads the nested `market` object (absent → every member unknown). */
function readMarketInfo(raw: unknown, fr: FieldReader): MarketInfo {
  const m = isObject(raw) ? raw : {};
  const s = (k: string) => fr.read(`market.${k}`, readString, m[k]);
  const i = (k: string) => fr.read(`market.${k}`, readInteger, m[k]);
  return {
    chain: s('chain'),
    loan_asset: s('loan_asset'),
    loan_asset_symbol: s('loan_asset_symbol'),
    loan_asset_decimals: i('loan_asset_decimals'),
    collateral_asset: s('collateral_asset'),
    collateral_asset_symbol: s('collateral_asset_symbol'),
    collateral_asset_decimals: i('collateral_asset_decimals'),
    market_address: s('market_address'),
    oracle: s('oracle'),
  };
}

/** Reads one attributed metrics row field by field. */
export function parseMetricsRow(
  marketId: string,
  r: Record<string, unknown>,
  opts: MarketParseOptions = {},
): { fields: MarketFields; rejected: Rejection[]; seen: string[] } {
  const fr = new FieldReader(r, marketId);
  const market = fillFrom(readMarketInfo(r.market, fr), opts.known?.get(marketId));
  const loanDec = market.loan_asset_decimals;
  const collDec = market.collateral_asset_decimals;
  const oracle = fr.read('oracle_price', (v) => readOraclePrice(v, opts.oraclePrice ?? 'auto', loanDec, collDec));
  const fields: MarketFields = {
    market_id: marketId,
    id: fr.read('id', readString),
    block: fr.read('block', readInteger),
    utilization: fr.read('utilization', readNumber),
    borrow_apy: fr.read('borrow_apy', readNumber),
    supply_apy: fr.read('supply_apy', readNumber),
    oracle_price: oracle?.raw ?? null,
    oracle_price_scaled: oracle?.unit ?? null,
    service_price: fr.read('service_price', readNumber),
    total_borrowed: fr.read('total_borrowed', (v) => readAmount(v, loanDec)),
    total_supplied: fr.read('total_supplied', (v) => readAmount(v, loanDec)),
    total_borrowed_usd: fr.read('total_borrowed_usd', readNumber),
    total_supplied_usd: fr.read('total_supplied_usd', readNumber),
    created_at: fr.read('created_at', readTime),
    oracle_last_update: fr.read('oracle_last_update', readTime),
    timestamp: fr.read('timestamp', readTime),
    market,
  };
  return { fields, rejected: fr.rejected, seen: fr.seen };
}

/** Turns the rows of one or more metrics queries into market readings (newest row per market), rejections and the forms seen. */
export function marketReadings(rows: readonly unknown[], pollTime: number, opts: MarketParseOptions = {}): MarketsResult {
  return runSync(marketReadingsSteps(rows, pollTime, opts));
}

type MarketsResult = { readings: Reading[]; rejected: Rejection[]; seen: SeenForms };

/** {@link marketReadings} in steps that may pause between rows (a markets poll reads 10,000 of them). */
export function* marketReadingsSteps(rows: readonly unknown[], pollTime: number, opts: MarketParseOptions = {}): Steps<MarketsResult> {
  let n = 0;
  const newest = new Map<string, { row: Record<string, unknown>; t: number }>();
  const rejected: Rejection[] = [];
  const seen: SeenForms = {};
  for (const row of rows) {
    if (++n % ROWS_PER_STEP === 0) yield;
    const id = isObject(row) ? readString(row.market_id) : undefined;
    if (!isObject(row) || !id?.ok || id.value === null) {
      rejected.push({ reason: 'missing_id', detail: 'metrics row without a usable market_id' });
      continue;
    }
    if (opts.known && isObject(row.market)) {
      const info = learnMarket(row, opts.known.get(id.value));
      if (info) opts.known.set(id.value, info);
    }
    const t = rawTime(row);
    const had = newest.get(id.value);
    if (!had || t > had.t) newest.set(id.value, { row, t });
  }
  const readings: Reading[] = [];
  for (const [entity, { row }] of newest) {
    if (++n % ROWS_PER_STEP === 0) yield;
    const parsed = parseMetricsRow(entity, row, opts);
    rejected.push(...parsed.rejected);
    mergeSeen(seen, parsed.seen);
    const f = parsed.fields;
    // A row whose times cannot be read falls back to the poll's time; the field rejection flags it.
    readings.push({ kind: 'market', entity, at: f.timestamp ?? f.created_at ?? pollTime, labels: marketLabels(f), fields: { ...f }, ...unreadableOf(parsed.rejected) });
  }
  return { readings, rejected, seen };
}
