/** Historical benchmark days per network and reference currency (interface §2.4), computed on demand. */
import { addressOf, hash32, rand01, randRange } from './random.js';

/** Seconds in a day. */
export const DAY_SEC = 86_400;
/** For how long after 00:00 UTC today's day is still being indexed (isComplete false), seconds. */
export const INDEXING_SEC = 2 * 3600;

/** The reference currencies. */
export const BENCHMARK_CODES = ['usd', 'eth'] as const;
/** A reference currency. */
export type BenchmarkCode = (typeof BENCHMARK_CODES)[number];

const WINDOWS = [
  ['1day', 1],
  ['7day', 7],
  ['30day', 30],
] as const;
/** A benchmark window name. */
export type BenchmarkWindow = (typeof WINDOWS)[number][0];

/** One window's rate. */
export interface BenchmarkRate {
  base: number;
  reward: number;
  total: number;
}

/** One constituent vault of a window. */
export interface Constituent {
  vaultId: string;
  slug: string;
  tvlUsd: number;
  weight: number;
}

/** A benchmark day record, exactly as the catalog serves it (canonical form). */
export interface BenchmarkDay {
  apy: Record<BenchmarkWindow, BenchmarkRate | null>;
  /** 00:00 UTC of the day, Unix seconds. */
  timestamp: number;
  isComplete: boolean;
  isStale: boolean;
  constituents: Record<BenchmarkWindow, Constituent[]>;
}

/** How the world bends one network's benchmarks at the moment. */
export interface BenchmarkOverrides {
  /** Indexing stopped: the newest day is this many days before today. */
  daysBehind?: number;
  /** Today stays incomplete. */
  incomplete?: boolean;
}

const CURATORS = ['steakhouse', 'gauntlet', 're7', 'mev-capital', 'block-analitica', 'hyperithm', 'apostro', 'relend'];

/** How many days of history a network has before the simulator's start day. */
export function historyDays(network: string): number {
  return network === 'unichain' ? 20 : 400;
}

/** 00:00 UTC (Unix seconds) of the day containing Unix second `sec`. */
export function dayStart(sec: number): number {
  return Math.floor(sec / DAY_SEC) * DAY_SEC;
}

/** The range of days served for a network at Unix second `nowSec`: [first, newest] day starts. */
export function servedDays(network: string, startedSec: number, nowSec: number, o: BenchmarkOverrides | undefined): { first: number; newest: number } {
  const first = dayStart(startedSec) - historyDays(network) * DAY_SEC;
  const newest = dayStart(nowSec) - (o?.daysBehind ?? 0) * DAY_SEC;
  return { first, newest };
}

/** The benchmark day record of (network, code, day) as seen at Unix second `nowSec`. */
export function benchmarkDay(seed: number, network: string, code: BenchmarkCode, day: number, firstDay: number, nowSec: number, o: BenchmarkOverrides | undefined): BenchmarkDay {
  const level = code === 'usd' ? randRange(0.045, 0.065, seed, 'bm', network, code) : randRange(0.02, 0.035, seed, 'bm', network, code);
  const rewardLevel = randRange(0, 0.012, seed, 'bm', network, code, 'rw');
  const phase = rand01(seed, 'bm', network, code, 'ph') * 6.28;
  const age = (day - firstDay) / DAY_SEC + 1;
  const poolSize = 3 + (hash32(seed, 'bm', network, code, 'pool') % 6);
  const members: Constituent[] = [];
  let tvl = 0;
  for (let v = 0; v < poolSize; v++) {
    if (v > 0 && rand01(seed, 'bm', network, code, v, day) < 0.2) continue; // vaults are re-selected daily
    const base = Math.exp(randRange(Math.log(2e5), Math.log(2e8), seed, 'bm', network, code, v, 'tvl'));
    const tvlUsd = Math.round(base * (1 + 0.05 * Math.sin(day / (9 * DAY_SEC) + v)) * 100) / 100;
    tvl += tvlUsd;
    const curator = CURATORS[hash32(seed, 'bm', network, code, v, 'cur') % CURATORS.length] as string;
    members.push({ vaultId: addressOf(seed, 'vault', network, code, v), slug: `${curator}-${code}-${network}-${v}`, tvlUsd, weight: 0 });
  }
  for (const m of members) m.weight = Number((m.tvlUsd / tvl).toFixed(6));
  const apy = {} as Record<BenchmarkWindow, BenchmarkRate | null>;
  const constituents = {} as Record<BenchmarkWindow, Constituent[]>;
  for (const [name, days] of WINDOWS) {
    if (age < days) {
      apy[name] = null;
      constituents[name] = [];
      continue;
    }
    const noise = (randRange(-0.004, 0.004, seed, 'bm', network, code, day, name) * 7) / (days + 6);
    const base = Number(Math.max(0, level + 0.006 * Math.sin(day / (20 * DAY_SEC) + phase) + noise).toFixed(6));
    const reward = Number((rewardLevel * (0.8 + 0.4 * rand01(seed, 'bm', network, code, day, name, 'r'))).toFixed(6));
    apy[name] = { base, reward, total: Number((base + reward).toFixed(6)) };
    constituents[name] = members.map((m) => ({ ...m }));
  }
  const today = dayStart(nowSec);
  const indexing = day === today && (nowSec - today < INDEXING_SEC || o?.incomplete === true);
  return {
    apy,
    timestamp: day,
    isComplete: !indexing,
    isStale: nowSec - (day + DAY_SEC) > 2 * DAY_SEC,
    constituents,
  };
}
