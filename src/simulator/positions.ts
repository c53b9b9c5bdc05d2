/**
 * Positions, the assets inside them, and wallet holdings: static attributes generated once from
 * the seed, rows valued on demand at a given time. Each row has a numeric key (a millisecond
 * timestamp) that orders it and serves as the pagination cursor.
 */
import { between, hash32, hexOf, pick, pickWeighted, rand01, randRange, scaledInteger, streamOf } from './random.js';
import { NETWORK_WEIGHT, POSITION_ASSETS, PROTOCOLS, token, type NetworkInfo } from './reference.js';
import { tokenAddress, tokenUsd } from './markets.js';

/** Base of every row key (ms): rows are "opened" one second apart from here. */
export const KEY_BASE = 1_600_000_000_000;

/** The static attributes of one position. */
export interface PositionStatic {
  index: number;
  wallet: string;
  chain: string;
  protocol: string;
  asset: string;
  baseUsd: number;
  debtFrac: number;
  pnlFrac: number;
  apy: number;
  verified: boolean;
  /** Whether the position had an interaction recently (the `interaction_only` snapshot subset). */
  interaction: boolean;
  reward: boolean;
  phase: number;
}

/** A positions row (interface §2.1 plus id, wallet, chain, collateral, debt and APY). */
export interface PositionRow {
  id: string;
  wallet: string;
  chain: string;
  protocol: string;
  asset: string;
  value_usd: number;
  nav_usd: number;
  pnl_usd: number;
  collateral_usd: number;
  debt_usd: number;
  apy: number;
  verified: boolean;
}

/** An assets row: one token inside a position. */
export interface AssetRow {
  position_id: string;
  wallet: string;
  chain: string;
  protocol: string;
  symbol: string;
  token_address: string;
  type: 'collateral' | 'debt' | 'reward';
  balance: string;
  decimals: number;
  price_usd: number;
  value_usd: number;
}

/** A holdings row: a token balance held directly by a wallet. */
export interface HoldingRow {
  wallet: string;
  chain: string;
  symbol: string;
  token_address: string;
  balance: string;
  decimals: number;
  price_usd: number;
  value_usd: number;
}

/** The number of wallets positions and holdings are spread over. */
export function walletCount(positions: number): number {
  return Math.max(3, Math.ceil(positions / 8));
}

/** Generates `count` positions deterministically from `seed`. */
export function generatePositions(seed: number, count: number, networks: readonly NetworkInfo[], wallets: readonly string[]): PositionStatic[] {
  const chainWeights = networks.map((n) => [n.name, NETWORK_WEIGHT[n.name] ?? 1] as const);
  const out: PositionStatic[] = new Array(count);
  for (let i = 0; i < count; i++) {
    const r = streamOf(seed, 'pos', i);
    const verified = r() >= 0.03;
    const usdDraw = r();
    // Unverified positions of the calm world stay small, so only a scenario breaches a 10k rule.
    const baseUsd = verified ? Math.exp(between(Math.log(50), Math.log(5e6), usdDraw)) : between(20, 5000, usdDraw);
    const hasDebt = r() < 0.6;
    const debtDraw = r();
    out[i] = {
      index: i,
      wallet: wallets[Math.floor(r() * wallets.length)] as string,
      chain: pickWeighted(chainWeights, r()),
      protocol: pickWeighted(PROTOCOLS, r()),
      asset: pick(POSITION_ASSETS, r()),
      baseUsd,
      debtFrac: hasDebt ? between(0.1, 0.75, debtDraw) : 0,
      pnlFrac: between(-0.08, 0.15, r()),
      apy: between(0.005, 0.12, r()),
      verified,
      interaction: r() < 0.35,
      reward: r() < 0.3,
      phase: r() * 2 * Math.PI,
    };
  }
  return out;
}

/** A large unverified position that a scenario makes appear; `k` numbers it among the extras. */
export function extraPosition(seed: number, k: number, index: number, networks: readonly NetworkInfo[], wallets: readonly string[], minUsd: number, maxUsd: number): PositionStatic {
  return {
    index,
    wallet: wallets[hash32(seed, 'extra', k, 'w') % wallets.length] as string,
    chain: (networks[k % networks.length] as NetworkInfo).name,
    protocol: pickWeighted(PROTOCOLS, rand01(seed, 'extra', k, 'proto')),
    asset: pick(POSITION_ASSETS, rand01(seed, 'extra', k, 'asset')),
    baseUsd: randRange(minUsd, maxUsd, seed, 'extra', k, 'usd'),
    debtFrac: 0,
    pnlFrac: 0,
    apy: 0.04,
    verified: false,
    interaction: true,
    reward: false,
    phase: 0,
  };
}

const cents = (x: number) => Math.round(x * 100) / 100;

/** The id of position `index`. */
export function positionId(seed: number, index: number): string {
  return 'pos_' + hexOf(16, seed, 'pos-id', index);
}

/** Gross value of a position at Unix second `sec`: moves with its asset's price and a small wobble. */
function grossUsd(seed: number, p: PositionStatic, sec: number): number {
  const t = token(p.asset);
  return p.baseUsd * (tokenUsd(seed, t, sec) / t.usd) * (1 + 0.003 * Math.sin(sec / 3600 + p.phase));
}

/** The positions row of `p` valued at Unix second `sec`. */
export function positionRow(seed: number, p: PositionStatic, sec: number): PositionRow {
  const gross = grossUsd(seed, p, sec);
  const debt = gross * p.debtFrac;
  const nav = gross - debt;
  return {
    id: positionId(seed, p.index),
    wallet: p.wallet,
    chain: p.chain,
    protocol: p.protocol,
    asset: p.asset,
    value_usd: cents(gross),
    nav_usd: cents(nav),
    pnl_usd: cents(nav * p.pnlFrac),
    collateral_usd: cents(gross),
    debt_usd: cents(debt),
    apy: Number(p.apy.toFixed(6)),
    verified: p.verified,
  };
}

/** How many assets rows position `p` has: its collateral, its debt if any, its reward if any. */
export function assetKinds(p: PositionStatic): AssetRow['type'][] {
  const kinds: AssetRow['type'][] = ['collateral'];
  if (p.debtFrac > 0) kinds.push('debt');
  if (p.reward) kinds.push('reward');
  return kinds;
}

/** The `k`-th assets row of position `p` at Unix second `sec`. */
export function assetRow(seed: number, p: PositionStatic, k: number, sec: number): AssetRow {
  const type = assetKinds(p)[k] ?? 'collateral';
  const gross = grossUsd(seed, p, sec);
  const symbol = type === 'collateral' ? p.asset : type === 'debt' ? (p.asset === 'USDC' ? 'WETH' : 'USDC') : 'MORPHO';
  const t = symbol === 'MORPHO' ? { symbol, decimals: 18, usd: 2, family: 'usd' as const } : token(symbol);
  const price = symbol === 'MORPHO' ? 2 * (1 + 0.05 * Math.sin(sec / 7200)) : tokenUsd(seed, t, sec);
  const value = type === 'collateral' ? gross : type === 'debt' ? gross * p.debtFrac : gross * p.apy * 0.05;
  return {
    position_id: positionId(seed, p.index),
    wallet: p.wallet,
    chain: p.chain,
    protocol: p.protocol,
    symbol,
    token_address: tokenAddress(seed, p.chain, symbol),
    type,
    balance: scaledInteger(value / price, t.decimals),
    decimals: t.decimals,
    price_usd: Number(price.toPrecision(10)),
    value_usd: cents(value),
  };
}

/** The static attributes of holding `h`. */
export interface HoldingStatic {
  wallet: string;
  chain: string;
  symbol: string;
  baseUnits: number;
  interaction: boolean;
}

/**
 * Generates `count` holdings deterministically from `seed`, one per (wallet, chain, token): a wallet has one balance of
 * a token on a chain, and the rows carry no id, so a repeat would be an indistinguishable duplicate. A drawn combination
 * already taken is drawn again, then the first free one is taken (the same wallet's first, then the next wallets').
 */
export function generateHoldings(seed: number, count: number, networks: readonly NetworkInfo[], wallets: readonly string[]): HoldingStatic[] {
  const chainWeights = networks.map((n) => [n.name, NETWORK_WEIGHT[n.name] ?? 1] as const);
  const taken = new Set<string>();
  const keyOf = (wallet: string, chain: string, symbol: string) => `${wallet}\u0000${chain}\u0000${symbol}`;
  const out: HoldingStatic[] = new Array(count);
  for (let h = 0; h < count; h++) {
    const r = streamOf(seed, 'hold', h);
    let symbol = pick(POSITION_ASSETS, r());
    const usd = Math.exp(between(Math.log(10), Math.log(2e6), r()));
    let chain = pickWeighted(chainWeights, r());
    const interaction = r() < 0.35;
    let wallet = wallets[h % wallets.length] as string;
    for (let tries = 0; tries < 16 && taken.has(keyOf(wallet, chain, symbol)); tries++) {
      chain = pickWeighted(chainWeights, r());
      symbol = pick(POSITION_ASSETS, r());
    }
    if (taken.has(keyOf(wallet, chain, symbol))) {
      const free = firstFreeHolding(taken, keyOf, h, wallets, networks, r());
      if (free) [wallet, chain, symbol] = free;
    }
    taken.add(keyOf(wallet, chain, symbol));
    out[h] = { wallet, chain, symbol, baseUnits: usd / token(symbol).usd, interaction };
  }
  return out;
}

/** The first (wallet, chain, token) not taken, from holding `h`'s wallet on; undefined when every one is (more holdings than combinations). */
function firstFreeHolding(
  taken: ReadonlySet<string>,
  keyOf: (wallet: string, chain: string, symbol: string) => string,
  h: number,
  wallets: readonly string[],
  networks: readonly NetworkInfo[],
  u: number,
): [string, string, string] | undefined {
  const offset = Math.floor(u * POSITION_ASSETS.length);
  for (let w = 0; w < wallets.length; w++) {
    const wallet = wallets[(h + w) % wallets.length] as string;
    for (const n of networks) {
      for (let k = 0; k < POSITION_ASSETS.length; k++) {
        const symbol = POSITION_ASSETS[(offset + k) % POSITION_ASSETS.length] as string;
        if (!taken.has(keyOf(wallet, n.name, symbol))) return [wallet, n.name, symbol];
      }
    }
  }
  return undefined;
}

/** The holdings row of `h` valued at Unix second `sec`. */
export function holdingRow(seed: number, h: HoldingStatic, sec: number): HoldingRow {
  const t = token(h.symbol);
  const price = tokenUsd(seed, t, sec);
  return {
    wallet: h.wallet,
    chain: h.chain,
    symbol: h.symbol,
    token_address: tokenAddress(seed, h.chain, h.symbol),
    balance: scaledInteger(h.baseUnits, t.decimals),
    decimals: t.decimals,
    price_usd: Number(price.toPrecision(10)),
    value_usd: cents(h.baseUnits * price),
  };
}
