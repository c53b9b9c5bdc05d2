/**
 * Lending markets: generated once from the seed (static attributes), with their metrics at any
 * time computed on demand (utilization, adaptive-curve borrow rate, prices, oracle updates).
 */
import { addressOf, between, hash32, pickWeighted, scaledInteger, streamOf } from './random.js';
import { MARKET_PAIRS, NETWORK_WEIGHT, token, type NetworkInfo, type TokenInfo } from './reference.js';

/** The static, seeded attributes of one market. */
export interface MarketStatic {
  index: number;
  /** protocol-chain-address, e.g. `morpho-base-0x…`. */
  marketId: string;
  chain: NetworkInfo;
  address: string;
  oracle: string;
  loan: TokenInfo;
  collateral: TokenInfo;
  loanAddress: string;
  collateralAddress: string;
  baseUtilization: number;
  utilizationAmplitude: number;
  periodSec: number;
  phase: number;
  /** Borrow rate (APR, continuous) at the 0.9 target utilization. */
  rateAtTarget: number;
  fee: number;
  supplyUsd: number;
  /** Oracle heartbeat and its offset, whole seconds. */
  heartbeatSec: number;
  heartbeatPhaseSec: number;
  /** Small standing difference between the oracle and the service price (fraction). */
  oracleBias: number;
  /** Seconds between the block time (`timestamp`) and the indexing time (`created_at`). */
  indexLagSec: number;
}

/** What a scenario is doing to one market at one moment. */
export interface MarketOverrides {
  utilization?: number;
  rateFactor?: number;
  /** Oracle time frozen at this Unix second. */
  oracleFrozenAtSec?: number;
  deviation?: number;
}

/** The full, canonical metrics record of one market at one time (interface §2.2). */
export interface MetricsRecord {
  block: number;
  id: string;
  borrow_apy: number;
  supply_apy: number;
  utilization: number;
  service_price: number;
  oracle_price: string;
  total_borrowed: string;
  total_borrowed_usd: number;
  total_supplied: string;
  total_supplied_usd: number;
  market_id: string;
  /** ISO-8601 in canonical form. */
  created_at: string;
  /** Unix seconds in canonical form. */
  oracle_last_update: number;
  /** Unix seconds in canonical form. */
  timestamp: number;
  market: {
    collateral_asset: string;
    collateral_asset_decimals: number;
    chain: string;
    collateral_asset_symbol: string;
    loan_asset: string;
    loan_asset_decimals: number;
    loan_asset_symbol: string;
    market_address: string;
    oracle: string;
  };
}

/** The target utilization of the adaptive-curve IRM. */
export const TARGET_UTILIZATION = 0.9;
const CURVE_STEEPNESS = 4;

/** Morpho's adaptive-curve borrow rate (APR) at utilization `u`, given the rate at target. */
export function adaptiveCurveRate(u: number, rateAtTarget: number): number {
  const err = u > TARGET_UTILIZATION ? (u - TARGET_UTILIZATION) / (1 - TARGET_UTILIZATION) : (u - TARGET_UTILIZATION) / TARGET_UTILIZATION;
  const curve = err < 0 ? (1 - 1 / CURVE_STEEPNESS) * err + 1 : (CURVE_STEEPNESS - 1) * err + 1;
  return rateAtTarget * curve;
}

const tokenAddresses = new Map<string, string>();
/** The address of a token on a chain (memoized: a handful of tokens per chain). */
export function tokenAddress(seed: number, chain: string, symbol: string): string {
  const key = `${seed}/${chain}/${symbol}`;
  let a = tokenAddresses.get(key);
  if (a === undefined) tokenAddresses.set(key, (a = addressOf(seed, 'token', chain, symbol)));
  return a;
}

/** Generates `count` markets spread over `networks`, deterministically from `seed`. */
export function generateMarkets(seed: number, count: number, networks: readonly NetworkInfo[]): MarketStatic[] {
  const chainWeights = networks.map((n) => [n, NETWORK_WEIGHT[n.name] ?? 1] as const);
  const out: MarketStatic[] = new Array(count);
  for (let i = 0; i < count; i++) {
    // One stream per market, drawn in a fixed order: cheap and independent of how many markets exist.
    const r = streamOf(seed, 'market', i);
    const chainDraw = r();
    // The first markets visit every network once, so small worlds still cover them all.
    const chain = i < networks.length ? (networks[i] as NetworkInfo) : pickWeighted(chainWeights, chainDraw);
    const [loanSym, collSym] = pickWeighted(MARKET_PAIRS, r());
    const loan = token(loanSym);
    const collateral = token(collSym);
    const address = addressOf(seed, 'market', i);
    const heartbeatSec = 4 + Math.floor(r() * 9);
    out[i] = {
      index: i,
      marketId: `morpho-${chain.name}-${address}`,
      chain,
      address,
      oracle: addressOf(seed, 'oracle', i),
      loan,
      collateral,
      loanAddress: tokenAddress(seed, chain.name, loanSym),
      collateralAddress: tokenAddress(seed, chain.name, collSym),
      baseUtilization: between(0.5, 0.87, r()),
      utilizationAmplitude: between(0.003, 0.015, r()),
      periodSec: Math.round(between(3600, 6 * 3600, r())),
      phase: r() * 2 * Math.PI,
      rateAtTarget: loan.family === 'usd' ? between(0.03, 0.07, r()) : between(0.012, 0.03, r()),
      fee: [0, 0.05, 0.1][Math.floor(r() * 3)] as number,
      supplyUsd: Math.exp(between(Math.log(1e5), Math.log(3e8), r())),
      heartbeatSec,
      heartbeatPhaseSec: Math.floor(r() * heartbeatSec),
      oracleBias: between(-0.003, 0.003, r()),
      indexLagSec: 1 + Math.floor(r() * 3),
    };
  }
  return out;
}

const phases = new Map<string, number>();
function phaseOf(seed: number, name: string): number {
  const key = `${seed}|${name}`;
  let p = phases.get(key);
  if (p === undefined) phases.set(key, (p = (hash32(seed, name) % 628) / 100));
  return p;
}

/** USD price of a token at Unix second `sec`: a slow deterministic wobble around its reference price. */
export function tokenUsd(seed: number, t: TokenInfo, sec: number): number {
  if (t.family === 'usd') return t.usd * (1 + 0.0005 * Math.sin(sec / 5400 + phaseOf(seed, t.symbol)));
  const familyPhase = phaseOf(seed, t.family);
  const own = phaseOf(seed, t.symbol);
  return t.usd * (1 + 0.02 * Math.sin(sec / 7200 + familyPhase) + 0.001 * Math.sin(sec / 900 + own));
}

const POW10 = [1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9];
const round = (x: number, digits: number) => Math.round(x * (POW10[digits] as number)) / (POW10[digits] as number);
const sig = (x: number, digits: number) => Number(x.toPrecision(digits));
const GENESIS_SEC = 1_438_269_973;

/** The oracle's last update (Unix seconds) at Unix second `sec`: the last heartbeat at or before it. */
export function oracleLastUpdate(m: MarketStatic, sec: number): number {
  return Math.floor((sec - m.heartbeatPhaseSec) / m.heartbeatSec) * m.heartbeatSec + m.heartbeatPhaseSec;
}

/** The numeric state of one market at one time, from which any metrics field is written. */
export interface MarketState {
  m: MarketStatic;
  createdSec: number;
  sec: number;
  utilization: number;
  borrowApy: number;
  supplyApy: number;
  servicePrice: number;
  oraclePrice: number;
  suppliedUnits: number;
  borrowedUnits: number;
  loanUsd: number;
  supplyUsd: number;
  oracleSec: number;
}

/** The state of market `m` as indexed at Unix second `createdSec`, under a scenario's overrides. */
export function marketState(seed: number, m: MarketStatic, createdSec: number, o: MarketOverrides | undefined): MarketState {
  const sec = createdSec - m.indexLagSec;
  const ambient = m.baseUtilization + m.utilizationAmplitude * Math.sin((2 * Math.PI * sec) / m.periodSec + m.phase);
  const utilization = round(o?.utilization ?? Math.min(ambient, 0.89), 6);
  const curveRate = adaptiveCurveRate(utilization, m.rateAtTarget);
  // A jump is at least 3 points, so even a low-rate ETH market moves past a "2 points and 50%" rule.
  const rate = o?.rateFactor ? Math.max(curveRate * o.rateFactor, curveRate + 0.03) : curveRate;
  const borrowApy = Math.expm1(rate);
  const loanUsd = tokenUsd(seed, m.loan, sec);
  const servicePrice = sig(tokenUsd(seed, m.collateral, sec) / loanUsd, 12);
  const supplyUsd = m.supplyUsd * (1 + 0.02 * Math.sin(sec / 10_800 + m.phase));
  const suppliedUnits = supplyUsd / loanUsd;
  const oracleSec = o?.oracleFrozenAtSec !== undefined ? oracleLastUpdate(m, o.oracleFrozenAtSec) : oracleLastUpdate(m, sec);
  return {
    m,
    createdSec,
    sec,
    utilization,
    borrowApy: round(borrowApy, 8),
    supplyApy: round(borrowApy * utilization * (1 - m.fee), 8),
    servicePrice,
    oraclePrice: servicePrice * (1 + m.oracleBias) * (1 + (o?.deviation ?? 0)),
    suppliedUnits,
    borrowedUnits: suppliedUnits * utilization,
    loanUsd,
    supplyUsd,
    oracleSec: Math.min(oracleSec, sec),
  };
}

/** One top-level field of the metrics record, written from a state (canonical form). */
export function metricsField(s: MarketState, field: string): unknown {
  const m = s.m;
  switch (field) {
    case 'block':
      return Math.floor((s.sec - GENESIS_SEC) / m.chain.blockSeconds);
    case 'id':
      return String(s.createdSec * 100_000 + (m.index % 100_000));
    case 'borrow_apy':
      return s.borrowApy;
    case 'supply_apy':
      return s.supplyApy;
    case 'utilization':
      return s.utilization;
    case 'service_price':
      return s.servicePrice;
    case 'oracle_price':
      return scaledInteger(s.oraclePrice, 36 + m.loan.decimals - m.collateral.decimals);
    case 'total_borrowed':
      return scaledInteger(s.borrowedUnits, m.loan.decimals);
    case 'total_borrowed_usd':
      return round(s.borrowedUnits * s.loanUsd, 2);
    case 'total_supplied':
      return scaledInteger(s.suppliedUnits, m.loan.decimals);
    case 'total_supplied_usd':
      return round(s.supplyUsd, 2);
    case 'market_id':
      return m.marketId;
    case 'created_at':
      return new Date(s.createdSec * 1000).toISOString();
    case 'oracle_last_update':
      return s.oracleSec;
    case 'timestamp':
      return s.sec;
    default:
      return undefined;
  }
}

/** One field of the nested market object. */
export function marketField(m: MarketStatic, field: string): unknown {
  switch (field) {
    case 'collateral_asset':
      return m.collateralAddress;
    case 'collateral_asset_decimals':
      return m.collateral.decimals;
    case 'chain':
      return m.chain.name;
    case 'collateral_asset_symbol':
      return m.collateral.symbol;
    case 'loan_asset':
      return m.loanAddress;
    case 'loan_asset_decimals':
      return m.loan.decimals;
    case 'loan_asset_symbol':
      return m.loan.symbol;
    case 'market_address':
      return m.address;
    case 'oracle':
      return m.oracle;
    default:
      return undefined;
  }
}

/** The top-level fields of a metrics record, in the interface's order. */
export const METRICS_FIELD_NAMES = [
  'block', 'id', 'borrow_apy', 'supply_apy', 'utilization', 'service_price', 'oracle_price', 'total_borrowed', 'total_borrowed_usd',
  'total_supplied', 'total_supplied_usd', 'market_id', 'created_at', 'oracle_last_update', 'timestamp',
] as const;
/** The fields of the nested market object, in the interface's order. */
export const MARKET_FIELD_NAMES = [
  'collateral_asset', 'collateral_asset_decimals', 'chain', 'collateral_asset_symbol', 'loan_asset', 'loan_asset_decimals',
  'loan_asset_symbol', 'market_address', 'oracle',
] as const;

/** The full canonical metrics record of a state (interface §2.2). */
export function metricsRecord(s: MarketState): MetricsRecord {
  const out: Record<string, unknown> = {};
  for (const f of METRICS_FIELD_NAMES) out[f] = metricsField(s, f);
  out.market = Object.fromEntries(MARKET_FIELD_NAMES.map((f) => [f, marketField(s.m, f)]));
  return out as unknown as MetricsRecord;
}

/** The oracle price of a record as collateral priced in loan-token units (undoing the Morpho scale). */
export function unscaledOraclePrice(r: MetricsRecord): number {
  return Number(r.oracle_price) / 10 ** (36 + r.market.loan_asset_decimals - r.market.collateral_asset_decimals);
}
