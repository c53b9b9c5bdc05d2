/**
 * Lending markets: generated once from the seed (static attributes), with their metrics at any
 * time computed on demand (utilization, adaptive-curve borrow rate, prices, oracle updates).
 */
import { addressOf, hash32, pickWeighted, rand01, randRange, scaledInteger } from './random.js';
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

/** Generates `count` markets spread over `networks`, deterministically from `seed`. */
export function generateMarkets(seed: number, count: number, networks: readonly NetworkInfo[]): MarketStatic[] {
  const chainWeights = networks.map((n) => [n, NETWORK_WEIGHT[n.name] ?? 1] as const);
  const out: MarketStatic[] = new Array(count);
  for (let i = 0; i < count; i++) {
    const r = (k: string) => rand01(seed, 'market', i, k);
    // The first markets visit every network once, so small worlds still cover them all.
    const chain = i < networks.length ? (networks[i] as NetworkInfo) : pickWeighted(chainWeights, r('chain'));
    const [loanSym, collSym] = pickWeighted(MARKET_PAIRS, r('pair'));
    const loan = token(loanSym);
    const collateral = token(collSym);
    const address = addressOf(seed, 'market', i);
    const heartbeatSec = 4 + (hash32(seed, 'market', i, 'hb') % 9);
    out[i] = {
      index: i,
      marketId: `morpho-${chain.name}-${address}`,
      chain,
      address,
      oracle: addressOf(seed, 'oracle', i),
      loan,
      collateral,
      loanAddress: addressOf(seed, 'token', chain.name, loanSym),
      collateralAddress: addressOf(seed, 'token', chain.name, collSym),
      baseUtilization: randRange(0.5, 0.87, seed, 'market', i, 'u'),
      utilizationAmplitude: randRange(0.003, 0.015, seed, 'market', i, 'ua'),
      periodSec: Math.round(randRange(3600, 6 * 3600, seed, 'market', i, 'up')),
      phase: r('ph') * 2 * Math.PI,
      rateAtTarget: loan.family === 'usd' ? randRange(0.03, 0.07, seed, 'market', i, 'rt') : randRange(0.012, 0.03, seed, 'market', i, 'rt'),
      fee: [0, 0.05, 0.1][hash32(seed, 'market', i, 'fee') % 3] as number,
      supplyUsd: Math.exp(randRange(Math.log(1e5), Math.log(3e8), seed, 'market', i, 's')),
      heartbeatSec,
      heartbeatPhaseSec: hash32(seed, 'market', i, 'hbp') % heartbeatSec,
      oracleBias: randRange(-0.003, 0.003, seed, 'market', i, 'ob'),
      indexLagSec: 1 + (hash32(seed, 'market', i, 'lag') % 3),
    };
  }
  return out;
}

/** USD price of a token at Unix second `sec`: a slow deterministic wobble around its reference price. */
export function tokenUsd(seed: number, t: TokenInfo, sec: number): number {
  if (t.family === 'usd') return t.usd * (1 + 0.0005 * Math.sin(sec / 5400 + (hash32(seed, t.symbol) % 628) / 100));
  const familyPhase = (hash32(seed, t.family) % 628) / 100;
  const own = (hash32(seed, t.symbol) % 628) / 100;
  return t.usd * (1 + 0.02 * Math.sin(sec / 7200 + familyPhase) + 0.001 * Math.sin(sec / 900 + own));
}

const round = (x: number, digits: number) => Number(x.toFixed(digits));
const sig = (x: number, digits: number) => Number(x.toPrecision(digits));
const GENESIS_SEC = 1_438_269_973;

/** The oracle's last update (Unix seconds) at Unix second `sec`: the last heartbeat at or before it. */
export function oracleLastUpdate(m: MarketStatic, sec: number): number {
  return Math.floor((sec - m.heartbeatPhaseSec) / m.heartbeatSec) * m.heartbeatSec + m.heartbeatPhaseSec;
}

/** The canonical metrics record of market `m` as indexed at Unix second `createdSec`. */
export function metricsRecord(seed: number, m: MarketStatic, createdSec: number, o: MarketOverrides | undefined): MetricsRecord {
  const sec = createdSec - m.indexLagSec;
  const ambient = m.baseUtilization + m.utilizationAmplitude * Math.sin((2 * Math.PI * sec) / m.periodSec + m.phase);
  const utilization = round(o?.utilization ?? Math.min(ambient, 0.89), 6);
  const curveRate = adaptiveCurveRate(utilization, m.rateAtTarget);
  // A jump is at least 3 points, so even a low-rate ETH market moves past a "2 points and 50%" rule.
  const rate = o?.rateFactor ? Math.max(curveRate * o.rateFactor, curveRate + 0.03) : curveRate;
  const borrowApy = Math.expm1(rate);
  const supplyApy = borrowApy * utilization * (1 - m.fee);
  const loanUsd = tokenUsd(seed, m.loan, sec);
  const collUsd = tokenUsd(seed, m.collateral, sec);
  const servicePrice = sig(collUsd / loanUsd, 12);
  const oraclePrice = servicePrice * (1 + m.oracleBias) * (1 + (o?.deviation ?? 0));
  const supplyUsd = m.supplyUsd * (1 + 0.02 * Math.sin(sec / 10_800 + m.phase));
  const suppliedUnits = supplyUsd / loanUsd;
  const borrowedUnits = suppliedUnits * utilization;
  const oracleSec = o?.oracleFrozenAtSec !== undefined ? oracleLastUpdate(m, o.oracleFrozenAtSec) : oracleLastUpdate(m, sec);
  return {
    block: Math.floor((sec - GENESIS_SEC) / m.chain.blockSeconds),
    id: String(createdSec * 100_000 + (m.index % 100_000)),
    borrow_apy: round(borrowApy, 8),
    supply_apy: round(supplyApy, 8),
    utilization,
    service_price: servicePrice,
    oracle_price: scaledInteger(oraclePrice, 36 + m.loan.decimals - m.collateral.decimals),
    total_borrowed: scaledInteger(borrowedUnits, m.loan.decimals),
    total_borrowed_usd: round(borrowedUnits * loanUsd, 2),
    total_supplied: scaledInteger(suppliedUnits, m.loan.decimals),
    total_supplied_usd: round(supplyUsd, 2),
    market_id: m.marketId,
    created_at: new Date(createdSec * 1000).toISOString(),
    oracle_last_update: Math.min(oracleSec, sec),
    timestamp: sec,
    market: {
      collateral_asset: m.collateralAddress,
      collateral_asset_decimals: m.collateral.decimals,
      chain: m.chain.name,
      collateral_asset_symbol: m.collateral.symbol,
      loan_asset: m.loanAddress,
      loan_asset_decimals: m.loan.decimals,
      loan_asset_symbol: m.loan.symbol,
      market_address: m.address,
      oracle: m.oracle,
    },
  };
}

/** The oracle price of a record as collateral priced in loan-token units (undoing the Morpho scale). */
export function unscaledOraclePrice(r: MetricsRecord): number {
  return Number(r.oracle_price) / 10 ** (36 + r.market.loan_asset_decimals - r.market.collateral_asset_decimals);
}
