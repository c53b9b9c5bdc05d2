/**
 * The simulated truth: markets, positions, holdings and benchmark days as a pure function of
 * (seed, scenario, time since start). Static attributes are generated once; values at a time
 * are computed on demand, so 10,000 markets and 50,000 positions cost little.
 */
import { benchmarkDay, DAY_SEC, servedDays, type BenchmarkCode, type BenchmarkDay, type BenchmarkOverrides } from './benchmarks.js';
import { generateMarkets, marketState, metricsRecord, type MarketOverrides, type MarketState, type MarketStatic, type MetricsRecord } from './markets.js';
import { indexedSource, type RowSource } from './paging.js';
import {
  assetKinds,
  assetRow,
  extraPosition,
  generateHoldings,
  generatePositions,
  holdingRow,
  KEY_BASE,
  positionRow,
  walletCount,
  type AssetRow,
  type HoldingRow,
  type HoldingStatic,
  type PositionRow,
  type PositionStatic,
} from './positions.js';
import { addressOf } from './random.js';
import { networkInfo, type NetworkInfo } from './reference.js';
import { activeSince, type Effect, type Scenario } from './scenarios.js';

/** Named snapshot filters of the positions-type endpoints. */
export const SNAPSHOT_MODES = ['all', 'daily_only', 'interaction_only', 'harmonized_only'] as const;
/** A snapshot filter. */
export type SnapshotMode = (typeof SNAPSHOT_MODES)[number];

/** What a World is built from. */
export interface WorldOptions {
  seed: number;
  markets: number;
  positions: number;
  networks: readonly string[];
  scenario: Scenario;
  /** ms */
  startedAt: number;
  /** Scenario seconds last `timeScale` real seconds each. */
  timeScale: number;
}

/** A filter of the positions-type lists. */
export interface ListFilter {
  chain?: string | null;
  mode?: SnapshotMode;
}

type Of<K extends Effect['kind']> = Extract<Effect, { kind: K }>;

/** The generated world; read it at any time (ms). */
export class World {
  readonly seed: number;
  readonly scenario: Scenario;
  readonly startedAt: number;
  readonly timeScale: number;
  readonly networks: readonly NetworkInfo[];
  readonly markets: readonly MarketStatic[];
  readonly positions: readonly PositionStatic[];
  readonly holdings: readonly HoldingStatic[];
  readonly wallets: readonly string[];
  private readonly marketIndex = new Map<string, number>();
  private readonly marketEffects = new Map<number, Effect[]>();
  private readonly assetStart: Int32Array;
  private readonly filters = new Map<string, Int32Array>();

  constructor(o: WorldOptions) {
    this.seed = o.seed;
    this.scenario = o.scenario;
    this.startedAt = o.startedAt;
    this.timeScale = o.timeScale;
    this.networks = o.networks.map(networkInfo);
    this.markets = generateMarkets(o.seed, o.markets, this.networks);
    this.markets.forEach((m) => this.marketIndex.set(m.marketId, m.index));
    this.wallets = Array.from({ length: walletCount(o.positions) }, (_, w) => addressOf(o.seed, 'wallet', w));
    this.positions = generatePositions(o.seed, o.positions, this.networks, this.wallets);
    this.holdings = generateHoldings(o.seed, o.positions, this.networks, this.wallets);
    this.assetStart = new Int32Array(o.positions + 1);
    for (let p = 0; p < o.positions; p++) this.assetStart[p + 1] = (this.assetStart[p] as number) + assetKinds(this.positions[p] as PositionStatic).length;
    if (o.markets > 0) {
      for (const e of o.scenario.effects) {
        if (!('markets' in e)) continue;
        for (const raw of e.markets) {
          const i = raw % o.markets;
          const list = this.marketEffects.get(i) ?? [];
          list.push(e);
          this.marketEffects.set(i, list);
        }
      }
    }
  }

  /** Scenario seconds elapsed at `nowMs` (real seconds since start ÷ timeScale). */
  scenarioSeconds(nowMs: number): number {
    return (nowMs - this.startedAt) / 1000 / this.timeScale;
  }

  /** The real time (ms) of a scenario second. */
  realTimeOf(scenarioSec: number): number {
    return this.startedAt + scenarioSec * 1000 * this.timeScale;
  }

  /** Effects of a kind active at `nowMs`, each with the scenario second its current window began. */
  activeEffects<K extends Effect['kind']>(kind: K, nowMs: number): { effect: Of<K>; since: number }[] {
    const tau = this.scenarioSeconds(nowMs);
    const out: { effect: Of<K>; since: number }[] = [];
    for (const e of this.scenario.effects) {
      if (e.kind !== kind) continue;
      const since = activeSince(e, tau);
      if (since !== null) out.push({ effect: e as Of<K>, since });
    }
    return out;
  }

  /** The index of a market_id, or undefined. */
  marketIndexOf(marketId: string): number | undefined {
    return this.marketIndex.get(marketId);
  }

  /** What the scenario does to market `index` at `nowMs`. */
  marketOverrides(index: number, nowMs: number): MarketOverrides | undefined {
    const effects = this.marketEffects.get(index);
    if (!effects) return undefined;
    const tau = this.scenarioSeconds(nowMs);
    const o: MarketOverrides = {};
    for (const e of effects) {
      const since = activeSince(e, tau);
      if (since === null || !('markets' in e)) continue;
      const k = e.markets.findIndex((raw) => raw % this.markets.length === index);
      if (e.kind === 'utilization_spike') o.utilization = e.levels[k % e.levels.length] as number;
      else if (e.kind === 'apy_jump') o.rateFactor = e.factor;
      else if (e.kind === 'oracle_freeze') o.oracleFrozenAtSec = Math.floor(this.realTimeOf(since) / 1000);
      else if (e.kind === 'price_deviation') o.deviation = e.deviation;
    }
    return o;
  }

  /** The numeric state of market `index` as indexed at Unix second `createdSec`. */
  marketState(index: number, createdSec: number): MarketState {
    return marketState(this.seed, this.markets[index] as MarketStatic, createdSec, this.marketOverrides(index, createdSec * 1000));
  }

  /** The canonical metrics record of market `index` as indexed at Unix second `createdSec`. */
  metrics(index: number, createdSec: number): MetricsRecord {
    return metricsRecord(this.marketState(index, createdSec));
  }

  /** Every market's current metrics record at `nowMs` (for tests). */
  metricsAt(nowMs: number): MetricsRecord[] {
    const sec = Math.floor(nowMs / 1000);
    return this.markets.map((m) => this.metrics(m.index, sec));
  }

  /** The Unix second at which a snapshot mode values rows, at `nowMs`. */
  snapshotSec(mode: SnapshotMode, nowMs: number): number {
    const sec = Math.floor(nowMs / 1000);
    if (mode === 'daily_only') return Math.floor(sec / DAY_SEC) * DAY_SEC;
    if (mode === 'harmonized_only') return Math.floor(sec / 3600) * 3600;
    return sec;
  }

  private indexFilter(list: 'pos' | 'asset' | 'hold', f: ListFilter): Int32Array | null {
    const chain = f.chain ?? null;
    const interaction = f.mode === 'interaction_only';
    if (chain === null && !interaction) return null;
    const cacheKey = `${list}|${chain}|${interaction}`;
    let idx = this.filters.get(cacheKey);
    if (idx) return idx;
    const out: number[] = [];
    const keep = (x: { chain: string; interaction: boolean }) => (chain === null || x.chain === chain) && (!interaction || x.interaction);
    if (list === 'hold') this.holdings.forEach((h, i) => keep(h) && out.push(i));
    else
      this.positions.forEach((p, i) => {
        if (!keep(p)) return;
        if (list === 'pos') out.push(i);
        else for (let j = this.assetStart[i] as number; j < (this.assetStart[i + 1] as number); j++) out.push(j);
      });
    idx = Int32Array.from(out);
    this.filters.set(cacheKey, idx);
    return idx;
  }

  /** The large unverified positions a scenario has made appear at Unix second `sec`. */
  extraPositions(sec: number, f: ListFilter = {}): PositionStatic[] {
    const out: PositionStatic[] = [];
    let k = 0;
    for (const { effect } of this.activeEffects('unverified_positions', sec * 1000)) {
      for (let c = 0; c < effect.count; c++, k++) {
        const p = extraPosition(this.seed, k, this.positions.length + k, this.networks, this.wallets, effect.minUsd, effect.maxUsd);
        if (!f.chain || p.chain === f.chain) out.push(p);
      }
    }
    return out;
  }

  /** The positions list at `nowMs` under a filter, ordered by cursor key. */
  positionsSource(nowMs: number, f: ListFilter = {}): RowSource<PositionRow> {
    const sec = this.snapshotSec(f.mode ?? 'all', nowMs);
    const extra = this.extraPositions(sec, f).map((p) => ({ key: KEY_BASE + p.index * 1000, row: () => positionRow(this.seed, p, sec) }));
    return indexedSource(
      this.indexFilter('pos', f),
      this.positions.length,
      (i) => KEY_BASE + i * 1000,
      (i) => positionRow(this.seed, this.positions[i] as PositionStatic, sec),
      extra,
    );
  }

  /** Every positions row at `nowMs` under a filter (for tests). */
  positionsAt(nowMs: number, f: ListFilter = {}): PositionRow[] {
    const src = this.positionsSource(nowMs, f);
    return Array.from({ length: src.length }, (_, j) => src.row(j));
  }

  private assetRef(j: number): [number, number] {
    let lo = 0;
    let hi = this.positions.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if ((this.assetStart[mid] as number) <= j) lo = mid;
      else hi = mid - 1;
    }
    return [lo, j - (this.assetStart[lo] as number)];
  }

  /** The assets list at `nowMs` under a filter, ordered by cursor key. */
  assetsSource(nowMs: number, f: ListFilter = {}): RowSource<AssetRow> {
    const sec = this.snapshotSec(f.mode ?? 'all', nowMs);
    const extra = this.extraPositions(sec, f).map((p) => ({ key: KEY_BASE + p.index * 1000, row: () => assetRow(this.seed, p, 0, sec) }));
    return indexedSource(
      this.indexFilter('asset', f),
      this.assetStart[this.positions.length] as number,
      (j) => {
        const [p, k] = this.assetRef(j);
        return KEY_BASE + p * 1000 + k;
      },
      (j) => {
        const [p, k] = this.assetRef(j);
        return assetRow(this.seed, this.positions[p] as PositionStatic, k, sec);
      },
      extra,
    );
  }

  /** The holdings list at `nowMs` under a filter, ordered by cursor key. */
  holdingsSource(nowMs: number, f: ListFilter = {}): RowSource<HoldingRow> {
    const sec = this.snapshotSec(f.mode ?? 'all', nowMs);
    return indexedSource(
      this.indexFilter('hold', f),
      this.holdings.length,
      (h) => KEY_BASE + h * 1000,
      (h) => holdingRow(this.seed, this.holdings[h] as HoldingStatic, sec),
    );
  }

  /** What the scenario does to a network's benchmarks at `nowMs`. */
  benchmarkOverrides(network: string, nowMs: number): BenchmarkOverrides | undefined {
    let o: BenchmarkOverrides | undefined;
    const target = (name: string) => (this.networks.some((n) => n.name === name) ? name : this.networks[this.networks.length - 1]?.name);
    for (const { effect } of this.activeEffects('benchmark_stale', nowMs)) if (target(effect.network) === network) o = { ...o, daysBehind: effect.daysBehind };
    for (const { effect } of this.activeEffects('benchmark_incomplete', nowMs)) if (target(effect.network) === network) o = { ...o, incomplete: true };
    return o;
  }

  /** Whether a network is in the catalog. */
  hasNetwork(name: string): boolean {
    return this.networks.some((n) => n.name === name);
  }

  /** The served day starts (Unix seconds, oldest first) of a network at `nowMs`, within [fromSec, toSec]. */
  benchmarkDayStarts(network: string, nowMs: number, fromSec = -Infinity, toSec = Infinity): { first: number; count: number; firstHistoryDay: number } {
    const nowSec = Math.floor(nowMs / 1000);
    const { first, newest } = servedDays(network, Math.floor(this.startedAt / 1000), nowSec, this.benchmarkOverrides(network, nowMs));
    const lo = Math.max(first, Math.ceil(fromSec / DAY_SEC) * DAY_SEC);
    const hi = Math.min(newest, Math.floor(toSec / DAY_SEC) * DAY_SEC);
    return { first: lo, count: hi < lo ? 0 : (hi - lo) / DAY_SEC + 1, firstHistoryDay: first };
  }

  /** One benchmark day (`day` a day start, Unix seconds) as seen at `nowMs`. */
  benchmarkDay(network: string, code: BenchmarkCode, day: number, firstHistoryDay: number, nowMs: number): BenchmarkDay {
    return benchmarkDay(this.seed, network, code, day, firstHistoryDay, Math.floor(nowMs / 1000), this.benchmarkOverrides(network, nowMs));
  }

  /** Every served benchmark day of (network, code) at `nowMs`, oldest first (for tests). */
  benchmarkDays(network: string, code: BenchmarkCode, nowMs: number): BenchmarkDay[] {
    const { first, count, firstHistoryDay } = this.benchmarkDayStarts(network, nowMs);
    return Array.from({ length: count }, (_, k) => this.benchmarkDay(network, code, first + k * DAY_SEC, firstHistoryDay, nowMs));
  }
}
