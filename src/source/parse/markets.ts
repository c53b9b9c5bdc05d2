/**
 * `metrics` rows → one `market` reading per market: the row with the newest `timestamp` (else
 * `created_at`). Only that row is read — older rows are history the reading does not use. A row is
 * rejected only without a usable `market_id`; every other field is read on its own (SPEC §6), and one
 * that cannot be read is unknown for this reading and a field rejection.
 */
import type { MarketFields, MarketInfo, Reading, Rejection } from '../../model.js';
import { leanAmount } from '../read/amounts.js';
import { RowReader, isObject, unreadableOf } from '../read/fields.js';
import { leanInteger, leanNumber, leanString } from '../read/numbers.js';
import { leanOraclePrice, type OraclePrice, type OraclePriceMode } from '../read/oracle.js';
import { READ_VALUE, ReadSlot } from '../read/result.js';
import { leanTime, toEpochMs } from '../read/times.js';
import { FormCounts, type SeenForms } from '../read/seen.js';
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
  /**
   * How many of the rows, from the first, `known` has already learned from ({@link marketsWithoutDecimals} over
   * them, as the metrics poll runs it before asking about markets without decimals): not learned from again. What
   * `known` ends up holding is the same either way — a member's value is the last readable one of the rows in order.
   */
  learned?: number;
}

const INFO_STRINGS = ['chain', 'loan_asset', 'loan_asset_symbol', 'collateral_asset', 'collateral_asset_symbol', 'market_address', 'oracle'] as const;
const INFO_INTEGERS = ['loan_asset_decimals', 'collateral_asset_decimals'] as const;

/** The slot of the reads outside a row's own (a row's market_id, what it tells of its market). */
const SLOT = new ReadSlot();

/** A row's usable market_id, else undefined. */
function marketIdOf(row: Record<string, unknown>): string | undefined {
  return leanString(row.market_id, SLOT) === READ_VALUE ? (SLOT.value as string) : undefined;
}

/** A member's text when it reads and differs from what was known (`had`), else undefined. */
function newString(v: unknown, had: string | null | undefined): string | undefined {
  return leanString(v, SLOT) === READ_VALUE && SLOT.value !== had ? (SLOT.value as string) : undefined;
}

/** A member's integer when it reads and differs from what was known (`had`), else undefined. */
function newInteger(v: unknown, had: number | null | undefined): number | undefined {
  return leanInteger(v, SLOT) === READ_VALUE && SLOT.value !== had ? (SLOT.value as number) : undefined;
}

/**
 * The readable members of a raw row's nested market object, merged over what was known. Each member by its own
 * name, not by a loop over the names: a load by a name that changes from one turn to the next (`m[k]`) is a generic
 * lookup, and this runs for every row of every poll (~37 ms a markets poll that way, most of it those lookups).
 */
function learnMarket(r: Record<string, unknown>, known: MarketInfo | undefined): MarketInfo | undefined {
  if (!isObject(r.market)) return known;
  const m = r.market;
  const chain = newString(m.chain, known?.chain);
  const loanAsset = newString(m.loan_asset, known?.loan_asset);
  const loanSymbol = newString(m.loan_asset_symbol, known?.loan_asset_symbol);
  const collateralAsset = newString(m.collateral_asset, known?.collateral_asset);
  const collateralSymbol = newString(m.collateral_asset_symbol, known?.collateral_asset_symbol);
  const marketAddress = newString(m.market_address, known?.market_address);
  const oracle = newString(m.oracle, known?.oracle);
  const loanDecimals = newInteger(m.loan_asset_decimals, known?.loan_asset_decimals);
  const collateralDecimals = newInteger(m.collateral_asset_decimals, known?.collateral_asset_decimals);
  // What was known, when the row told nothing new (every poll, for every market): the daemon keeps this map, and a
  // copy per market and poll, with the poll's own strings, was 4 MB at SPEC §8 scale for the old generation to collect.
  if (
    chain === undefined &&
    loanAsset === undefined &&
    loanSymbol === undefined &&
    collateralAsset === undefined &&
    collateralSymbol === undefined &&
    marketAddress === undefined &&
    oracle === undefined &&
    loanDecimals === undefined &&
    collateralDecimals === undefined
  ) {
    return known ?? emptyInfo();
  }
  // The members the row told, over what was known (one literal: its type says when a member is left out).
  const was = known ?? emptyInfo();
  return {
    chain: chain ?? was.chain,
    loan_asset: loanAsset ?? was.loan_asset,
    loan_asset_symbol: loanSymbol ?? was.loan_asset_symbol,
    loan_asset_decimals: loanDecimals ?? was.loan_asset_decimals,
    collateral_asset: collateralAsset ?? was.collateral_asset,
    collateral_asset_symbol: collateralSymbol ?? was.collateral_asset_symbol,
    collateral_asset_decimals: collateralDecimals ?? was.collateral_asset_decimals,
    market_address: marketAddress ?? was.market_address,
    oracle: oracle ?? was.oracle,
  };
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
  // By index, here and in the generators below: a generator's for...of makes an iterator result per row.
  for (let k = 0; k < rows.length; k++) {
    const row = rows[k];
    if (++n % ROWS_PER_STEP === 0) yield;
    if (!isObject(row)) continue;
    const id = marketIdOf(row);
    if (id === undefined) continue;
    ids.add(id);
    const info = learnMarket(row, known.get(id));
    if (info) known.set(id, info);
  }
  return [...ids].filter((id) => {
    const k = known.get(id);
    return !k || k.loan_asset_decimals === null || k.collateral_asset_decimals === null;
  });
}

function emptyInfo(): MarketInfo {
  return { chain: null, loan_asset: null, loan_asset_symbol: null, loan_asset_decimals: null, collateral_asset: null, collateral_asset_symbol: null, collateral_asset_decimals: null, market_address: null, oracle: null };
}

/**
 * A row's market object with its unknown members filled from what is known of the market: `m` itself when it has
 * none unknown (the usual row: no copy, no list of names per row), else `m` filled in place (it is the row's own,
 * just read).
 */
function fillFrom(m: MarketInfo, known: MarketInfo | undefined): MarketInfo {
  if (!known) return m;
  if (m.chain === null) m.chain = known.chain;
  if (m.loan_asset === null) m.loan_asset = known.loan_asset;
  if (m.loan_asset_symbol === null) m.loan_asset_symbol = known.loan_asset_symbol;
  if (m.loan_asset_decimals === null) m.loan_asset_decimals = known.loan_asset_decimals;
  if (m.collateral_asset === null) m.collateral_asset = known.collateral_asset;
  if (m.collateral_asset_symbol === null) m.collateral_asset_symbol = known.collateral_asset_symbol;
  if (m.collateral_asset_decimals === null) m.collateral_asset_decimals = known.collateral_asset_decimals;
  if (m.market_address === null) m.market_address = known.market_address;
  if (m.oracle === null) m.oracle = known.oracle;
  return m;
}

/** Sort time of a raw row (timestamp, else created_at); +Infinity when present but unreadable, so a bad newest row is never skipped. */
function rawTime(r: Record<string, unknown>): number {
  const v = r.timestamp ?? r.created_at;
  if (v === undefined || v === null || v === '') return -Infinity;
  return toEpochMs(v) ?? Infinity;
}

/** The first hyphen-separated part of a market_id (`morpho-base-0x…` → `morpho`). */
export function protocolOf(marketId: string): string {
  const dash = marketId.indexOf('-'); // not split: an array and every part of every market's id, 10,000 a poll
  return dash < 0 ? marketId : marketId.slice(0, dash);
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

/** The field names of the nested `market` object's members, made once (not a new `market.x` text per read). */
const INFO_FIELD = Object.fromEntries([...INFO_STRINGS, ...INFO_INTEGERS].map((k) => [k, `market.${k}`])) as Record<keyof MarketInfo, string>;

/** Reads the nested `market` object (absent → every member unknown); each member by its own name (see {@link learnMarket}). */
function readMarketInfo(raw: unknown, fr: RowReader): MarketInfo {
  const m = isObject(raw) ? raw : {};
  return {
    chain: fr.read(INFO_FIELD.chain, m.chain, leanString) as string | null,
    loan_asset: fr.read(INFO_FIELD.loan_asset, m.loan_asset, leanString) as string | null,
    loan_asset_symbol: fr.read(INFO_FIELD.loan_asset_symbol, m.loan_asset_symbol, leanString) as string | null,
    loan_asset_decimals: fr.read(INFO_FIELD.loan_asset_decimals, m.loan_asset_decimals, leanInteger) as number | null,
    collateral_asset: fr.read(INFO_FIELD.collateral_asset, m.collateral_asset, leanString) as string | null,
    collateral_asset_symbol: fr.read(INFO_FIELD.collateral_asset_symbol, m.collateral_asset_symbol, leanString) as string | null,
    collateral_asset_decimals: fr.read(INFO_FIELD.collateral_asset_decimals, m.collateral_asset_decimals, leanInteger) as number | null,
    market_address: fr.read(INFO_FIELD.market_address, m.market_address, leanString) as string | null,
    oracle: fr.read(INFO_FIELD.oracle, m.oracle, leanString) as string | null,
  };
}

/** Reads one attributed metrics row field by field, with `fr` started on the row's market (its rejections there). */
function parseMetricsRow(marketId: string, r: Record<string, unknown>, fr: RowReader, opts: MarketParseOptions): MarketFields {
  const market = fillFrom(readMarketInfo(r.market, fr), opts.known?.get(marketId));
  const loanDec = market.loan_asset_decimals;
  const collDec = market.collateral_asset_decimals;
  const oracle = fr.took('oracle_price', r.oracle_price, leanOraclePrice(r.oracle_price, fr.slot, opts.oraclePrice ?? 'auto', loanDec, collDec)) as OraclePrice | null;
  const num = (k: string) => fr.read(k, r[k], leanNumber) as number | null;
  const time = (k: string) => fr.read(k, r[k], leanTime) as number | null;
  return {
    market_id: marketId,
    id: fr.read('id', r.id, leanString) as string | null,
    block: fr.read('block', r.block, leanInteger) as number | null,
    utilization: num('utilization'),
    borrow_apy: num('borrow_apy'),
    supply_apy: num('supply_apy'),
    oracle_price: oracle?.raw ?? null,
    oracle_price_scaled: oracle?.unit ?? null,
    service_price: num('service_price'),
    total_borrowed: fr.took('total_borrowed', r.total_borrowed, leanAmount(r.total_borrowed, fr.slot, loanDec)) as string | null,
    total_supplied: fr.took('total_supplied', r.total_supplied, leanAmount(r.total_supplied, fr.slot, loanDec)) as string | null,
    total_borrowed_usd: num('total_borrowed_usd'),
    total_supplied_usd: num('total_supplied_usd'),
    created_at: time('created_at'),
    oracle_last_update: time('oracle_last_update'),
    timestamp: time('timestamp'),
    market,
  };
}

/** Turns the rows of one or more metrics queries into market readings (newest row per market), rejections and the forms seen. */
export function marketReadings(rows: readonly unknown[], pollTime: number, opts: MarketParseOptions = {}): MarketsResult {
  return runSync(marketReadingsSteps(rows, pollTime, opts));
}

type MarketsResult = { readings: Reading[]; rejected: Rejection[]; seen: SeenForms };

/** {@link marketReadings} in steps that may pause between rows (a markets poll reads 10,000 of them). */
export function* marketReadingsSteps(rows: readonly unknown[], pollTime: number, opts: MarketParseOptions = {}): Steps<MarketsResult> {
  let n = 0;
  // Each market's newest row, found by its id; `order` holds the same objects in the order markets came (the map's
  // order), walked by index below (an iterator over the map makes an object per step in a generator).
  const newest = new Map<string, { entity: string; row: Record<string, unknown>; t: number }>();
  const order: Array<{ entity: string; row: Record<string, unknown>; t: number }> = [];
  const rejected: Rejection[] = [];
  for (let k = 0; k < rows.length; k++) {
    const row = rows[k];
    if (++n % ROWS_PER_STEP === 0) yield;
    const id = isObject(row) ? marketIdOf(row) : undefined;
    if (!isObject(row) || id === undefined) {
      rejected.push({ reason: 'missing_id', detail: 'metrics row without a usable market_id' });
      continue;
    }
    if (opts.known && n > (opts.learned ?? 0) && isObject(row.market)) {
      const info = learnMarket(row, opts.known.get(id));
      if (info) opts.known.set(id, info);
    }
    const t = rawTime(row);
    const had = newest.get(id);
    if (!had) {
      const first = { entity: id, row, t };
      newest.set(id, first);
      order.push(first);
    } else if (t > had.t) {
      had.row = row;
      had.t = t;
    }
  }
  const readings: Reading[] = [];
  const forms = new FormCounts();
  const fr = new RowReader(forms);
  for (let k = 0; k < order.length; k++) {
    const { entity, row } = order[k]!;
    if (++n % ROWS_PER_STEP === 0) yield;
    fr.start(entity);
    const f = parseMetricsRow(entity, row, fr, opts);
    fr.keep();
    for (const r of fr.rejected) rejected.push(r);
    // A row whose times cannot be read falls back to the poll's time; the field rejection flags it.
    const reading: Reading = { kind: 'market', entity, at: f.timestamp ?? f.created_at ?? pollTime, labels: marketLabels(f), fields: f as unknown as Reading['fields'] };
    if (fr.rejected.length > 0) Object.assign(reading, unreadableOf(fr.rejected));
    readings.push(reading);
  }
  return { readings, rejected, seen: forms.toSeenForms() };
}
