/** Fixed reference data of the simulated service: networks, tokens, protocols. */
import { hash32 } from './random.js';

/** The network names of the interface document's recorded listing, in its order. */
export const DEFAULT_NETWORKS: readonly string[] = [
  'arbitrum',
  'base',
  'gnosis',
  'linea',
  'mainnet',
  'mantle',
  'optimism',
  'sonic',
  'unichain',
];

const CHAIN_IDS: Record<string, number> = {
  arbitrum: 42161,
  base: 8453,
  gnosis: 100,
  linea: 59144,
  mainnet: 1,
  mantle: 5000,
  optimism: 10,
  sonic: 146,
  unichain: 130,
};

const BLOCK_SECONDS: Record<string, number> = {
  arbitrum: 0.25,
  base: 2,
  gnosis: 5,
  linea: 2,
  mainnet: 12,
  mantle: 2,
  optimism: 2,
  sonic: 1,
  unichain: 1,
};

/** A catalog network record (interface §2.3) plus the block time used to derive block numbers. */
export interface NetworkInfo {
  name: string;
  chainId: number;
  networkCaip: string;
  blockSeconds: number;
}

/** The network record of a name; names outside the recorded listing get a stable made-up chain id. */
export function networkInfo(name: string): NetworkInfo {
  const chainId = CHAIN_IDS[name] ?? 900_000 + (hash32(7, name) % 99_999);
  return { name, chainId, networkCaip: `eip155:${chainId}`, blockSeconds: BLOCK_SECONDS[name] ?? 2 };
}

/** A token the simulated world knows: symbol, decimals, a reference USD price, and whether it is ETH-like. */
export interface TokenInfo {
  symbol: string;
  decimals: number;
  usd: number;
  family: 'usd' | 'eth' | 'btc';
}

/** Every token the simulator uses. */
export const TOKENS: Record<string, TokenInfo> = {
  USDC: { symbol: 'USDC', decimals: 6, usd: 1, family: 'usd' },
  USDT: { symbol: 'USDT', decimals: 6, usd: 1, family: 'usd' },
  DAI: { symbol: 'DAI', decimals: 18, usd: 1, family: 'usd' },
  WETH: { symbol: 'WETH', decimals: 18, usd: 3000, family: 'eth' },
  wstETH: { symbol: 'wstETH', decimals: 18, usd: 3600, family: 'eth' },
  weETH: { symbol: 'weETH', decimals: 18, usd: 3150, family: 'eth' },
  cbBTC: { symbol: 'cbBTC', decimals: 8, usd: 95_000, family: 'btc' },
  WBTC: { symbol: 'WBTC', decimals: 8, usd: 95_000, family: 'btc' },
};

/** The token of a symbol (every symbol used by the generator is in {@link TOKENS}). */
export function token(symbol: string): TokenInfo {
  const t = TOKENS[symbol];
  if (!t) throw new Error(`unknown token ${symbol}`);
  return t;
}

/** Lending pairs as [loan, collateral, weight]: what a Morpho deployment typically lists. */
export const MARKET_PAIRS: readonly (readonly [readonly [string, string], number])[] = [
  [['USDC', 'WETH'], 6],
  [['USDC', 'wstETH'], 5],
  [['USDC', 'cbBTC'], 5],
  [['USDC', 'WBTC'], 4],
  [['USDC', 'weETH'], 2],
  [['USDT', 'WETH'], 3],
  [['USDT', 'WBTC'], 2],
  [['USDT', 'wstETH'], 2],
  [['DAI', 'wstETH'], 1],
  [['DAI', 'WETH'], 1],
  [['WETH', 'wstETH'], 4],
  [['WETH', 'weETH'], 3],
  [['WETH', 'cbBTC'], 1],
];

/** Protocols that positions are spread over, with weights. */
export const PROTOCOLS: readonly (readonly [string, number])[] = [
  ['morpho', 6],
  ['aave-v3', 5],
  ['spark', 2],
  ['compound-v3', 2],
  ['euler', 1],
  ['fluid', 1],
  ['pendle', 1],
  ['uniswap-v3', 1],
];

/** Symbols positions and holdings are denominated in. */
export const POSITION_ASSETS: readonly string[] = ['USDC', 'USDT', 'DAI', 'WETH', 'wstETH', 'weETH', 'cbBTC', 'WBTC'];

/** Weights by which markets and positions are spread over networks (unknown names weigh 1). */
export const NETWORK_WEIGHT: Record<string, number> = {
  mainnet: 8,
  base: 6,
  arbitrum: 3,
  optimism: 2,
  unichain: 2,
  linea: 1,
  gnosis: 1,
  mantle: 1,
  sonic: 1,
};
