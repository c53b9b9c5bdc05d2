/**
 * The scenario registry: each scenario is a list of effects on the world, each active in a
 * window of scenario time (seconds after start, multiplied by the simulator's `timeScale`).
 * Adding a scenario is one entry in {@link scenarioList}; its timeline is derived from its effects.
 */

/** When an effect is active: scenario seconds [from, to), optionally repeating every `repeatEvery` seconds. */
export interface EffectWindow {
  from: number;
  /** End (exclusive); Infinity for "until the simulator stops". */
  to: number;
  repeatEvery?: number;
}

/** One thing a scenario does to the world. Market indices are taken modulo the market count. */
export type Effect = EffectWindow &
  (
    | { kind: 'utilization_spike'; markets: number[]; levels: number[] }
    | { kind: 'apy_jump'; markets: number[]; factor: number }
    | { kind: 'oracle_freeze'; markets: number[] }
    | { kind: 'price_deviation'; markets: number[]; deviation: number }
    | { kind: 'unverified_positions'; count: number; minUsd: number; maxUsd: number }
    | { kind: 'benchmark_stale'; network: string; daysBehind: number }
    | { kind: 'benchmark_incomplete'; network: string }
    | { kind: 'flaky'; every429: number; every500: number; retryAfter: number }
  );

/** One line of a scenario's timeline, in scenario seconds after start (before `timeScale`). */
export interface TimelineEntry {
  from: number;
  /** null when the effect lasts until the simulator stops. */
  to: number | null;
  repeatEvery: number | null;
  effect: Effect['kind'];
  what: string;
}

/** What `scenarios` lists: a name, a one-line description and what happens when. */
export interface ScenarioInfo {
  name: string;
  description: string;
  timeline: readonly TimelineEntry[];
}

/** A scenario definition: its description and its effects. */
export interface Scenario {
  name: string;
  description: string;
  effects: readonly Effect[];
}

const fmtMarkets = (m: number[]) => `market${m.length > 1 ? 's' : ''} #${m.join(', #')}`;

/** A person-readable sentence for one effect. */
export function describeEffect(e: Effect): string {
  switch (e.kind) {
    case 'utilization_spike':
      return `${fmtMarkets(e.markets)} utilization goes to ${e.levels.join('/')} (borrow APY climbs with it), then back`;
    case 'apy_jump':
      return `${fmtMarkets(e.markets)} borrow rate ×${e.factor} (at least +3 points): borrow APY jumps by > 2 points and > 50%, then back`;
    case 'oracle_freeze':
      return `${fmtMarkets(e.markets)} oracle_last_update stops advancing, then resumes`;
    case 'price_deviation':
      return `${fmtMarkets(e.markets)} oracle price ${(e.deviation * 100).toFixed(1)}% away from service_price, then back`;
    case 'unverified_positions':
      return `${e.count} positions with verified:false worth $${e.minUsd}–$${e.maxUsd} appear, then disappear`;
    case 'benchmark_stale':
      return `${e.network} benchmark indexing stops: newest day is ${e.daysBehind} days old and isStale, then recovers`;
    case 'benchmark_incomplete':
      return `${e.network} benchmark: today stays isComplete:false, then completes`;
    case 'flaky':
      return `every ${e.every429}th request → 429 (Retry-After: ${e.retryAfter}s), every ${e.every500}th → 500`;
  }
}

const HOUR = 3600;

/** Every scenario, in listing order. */
export const scenarioList: readonly Scenario[] = [
  { name: 'calm', description: 'Nothing breaches: utilization under the 0.9 target, fresh oracles, verified large positions, fresh benchmarks.', effects: [] },
  {
    name: 'utilization_spike',
    description: 'Three markets go to 96–99% utilization for 10 minutes, every hour.',
    effects: [{ kind: 'utilization_spike', from: 30, to: 630, repeatEvery: HOUR, markets: [0, 1, 2], levels: [0.97, 0.985, 0.96] }],
  },
  {
    name: 'apy_jump',
    description: 'Two markets see their borrow APY triple for 10 minutes, every hour.',
    effects: [{ kind: 'apy_jump', from: 30, to: 630, repeatEvery: HOUR, markets: [3, 4], factor: 3 }],
  },
  {
    name: 'oracle_stale',
    description: "One market's oracle stops updating for 30 minutes, every hour.",
    effects: [{ kind: 'oracle_freeze', from: 30, to: 1830, repeatEvery: HOUR, markets: [5] }],
  },
  {
    name: 'unverified',
    description: 'Three large unverified positions appear for 15 minutes, every hour.',
    effects: [{ kind: 'unverified_positions', from: 30, to: 930, repeatEvery: HOUR, count: 3, minUsd: 25_000, maxUsd: 250_000 }],
  },
  {
    name: 'benchmark_stale',
    description: "linea's benchmark indexing stops (newest day 3 days old) and sonic's today stays incomplete, for 2 hours every 6.",
    effects: [
      { kind: 'benchmark_stale', from: 30, to: 2 * HOUR + 30, repeatEvery: 6 * HOUR, network: 'linea', daysBehind: 3 },
      { kind: 'benchmark_incomplete', from: 30, to: 2 * HOUR + 30, repeatEvery: 6 * HOUR, network: 'sonic' },
    ],
  },
  {
    name: 'price_deviation',
    description: "One market's oracle price sits 4% off the service price for 10 minutes, every hour.",
    effects: [{ kind: 'price_deviation', from: 30, to: 630, repeatEvery: HOUR, markets: [6], deviation: 0.04 }],
  },
  {
    name: 'flaky',
    description: 'Calm data, but the service answers 429 (Retry-After: 1) and 500 now and then.',
    effects: [{ kind: 'flaky', from: 0, to: Infinity, every429: 5, every500: 7, retryAfter: 1 }],
  },
  {
    name: 'incidents',
    description: 'Every rule kind fires several times a day, one incident at a time (30 min to 7 h each): a week of it gives a backtest plenty to show.',
    effects: [
      { kind: 'utilization_spike', from: HOUR, to: HOUR + 45 * 60, repeatEvery: 6 * HOUR, markets: [0, 1], levels: [0.97, 0.985] },
      { kind: 'apy_jump', from: 2 * HOUR, to: 2 * HOUR + 30 * 60, repeatEvery: 6 * HOUR, markets: [2], factor: 3.5 },
      { kind: 'oracle_freeze', from: 3 * HOUR, to: 3 * HOUR + 40 * 60, repeatEvery: 12 * HOUR, markets: [3] },
      { kind: 'price_deviation', from: 4 * HOUR, to: 4 * HOUR + 30 * 60, repeatEvery: 12 * HOUR, markets: [4], deviation: 0.04 },
      { kind: 'unverified_positions', from: 5 * HOUR, to: 6 * HOUR + 30 * 60, repeatEvery: 24 * HOUR, count: 3, minUsd: 25_000, maxUsd: 250_000 },
      { kind: 'benchmark_stale', from: 3 * HOUR, to: 10 * HOUR, repeatEvery: 48 * HOUR, network: 'linea', daysBehind: 3 },
      { kind: 'benchmark_incomplete', from: 3 * HOUR, to: 10 * HOUR, repeatEvery: 48 * HOUR, network: 'sonic' },
    ],
  },
  {
    name: 'demo',
    description: 'Every rule kind fires within ~20 s of start; all of it resolves by 55 s.',
    effects: [
      { kind: 'utilization_spike', from: 5, to: 35, markets: [0, 1], levels: [0.97, 0.985] },
      { kind: 'apy_jump', from: 8, to: 40, markets: [2], factor: 3.5 },
      { kind: 'oracle_freeze', from: 10, to: 45, markets: [3] },
      { kind: 'unverified_positions', from: 12, to: 50, count: 3, minUsd: 25_000, maxUsd: 250_000 },
      { kind: 'benchmark_stale', from: 15, to: 55, network: 'linea', daysBehind: 3 },
      { kind: 'benchmark_incomplete', from: 15, to: 55, network: 'sonic' },
      { kind: 'price_deviation', from: 18, to: 50, markets: [4], deviation: 0.04 },
    ],
  },
];

/** The timeline of a scenario, one entry per effect. */
export function timelineOf(s: Scenario): TimelineEntry[] {
  return s.effects.map((e) => ({
    from: e.from,
    to: Number.isFinite(e.to) ? e.to : null,
    repeatEvery: e.repeatEvery ?? null,
    effect: e.kind,
    what: describeEffect(e),
  }));
}

function buildRegistry(list: readonly Scenario[]): Map<string, Scenario> {
  const map = new Map<string, Scenario>();
  for (const s of list) {
    if (map.has(s.name)) throw new Error(`duplicate scenario name: ${s.name}`);
    map.set(s.name, s);
  }
  return map;
}

const registry = buildRegistry(scenarioList);

/** Name, description and timeline of every scenario. */
export const scenarios: readonly ScenarioInfo[] = scenarioList.map((s) => ({
  name: s.name,
  description: s.description,
  timeline: timelineOf(s),
}));

/** The scenario of a name; throws with the list of known names when there is none. */
export function getScenario(name: string): Scenario {
  const s = registry.get(name);
  if (!s) throw new Error(`unknown scenario "${name}"; known: ${[...registry.keys()].join(', ')}`);
  return s;
}

/**
 * The scenario-second at which the current occurrence of an effect's window started,
 * or null when the effect is not active at scenario time `tau` (seconds).
 */
export function activeSince(w: EffectWindow, tau: number): number | null {
  if (tau < w.from) return null;
  if (w.repeatEvery && w.repeatEvery > 0) {
    const cycle = Math.floor((tau - w.from) / w.repeatEvery);
    const start = w.from + cycle * w.repeatEvery;
    return tau < start + (w.to - w.from) ? start : null;
  }
  return tau < w.to ? w.from : null;
}
