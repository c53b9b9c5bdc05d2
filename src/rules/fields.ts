/**
 * What a rule may name, per reading kind: the fields of the normalized readings (src/model.ts) and their labels.
 * Used to refuse a typo in `select`, a template or a `threshold` field at load time rather than render a blank at 3 a.m.
 * Reading kinds not listed here (asset, holding, performance) are not checked: their fields are not specified.
 */
import type { ReadingKind } from '../model.js';

/** The type of a known field: what `threshold` may compare and what `select` may match. */
export type FieldType = 'number' | 'string' | 'boolean' | 'object';

const MARKET_INFO: Record<string, FieldType> = {
  chain: 'string',
  loan_asset: 'string',
  loan_asset_symbol: 'string',
  loan_asset_decimals: 'number',
  collateral_asset: 'string',
  collateral_asset_symbol: 'string',
  collateral_asset_decimals: 'number',
  market_address: 'string',
  oracle: 'string',
};

const MARKET: Record<string, FieldType> = {
  market_id: 'string',
  id: 'string',
  block: 'number',
  utilization: 'number',
  borrow_apy: 'number',
  supply_apy: 'number',
  // An exact decimal integer string (may exceed 2^53): numeric when coerced, though imprecise.
  oracle_price: 'number',
  oracle_price_scaled: 'number',
  service_price: 'number',
  total_borrowed: 'number',
  total_supplied: 'number',
  total_borrowed_usd: 'number',
  total_supplied_usd: 'number',
  created_at: 'number',
  oracle_last_update: 'number',
  timestamp: 'number',
  market: 'object',
  ...Object.fromEntries(Object.entries(MARKET_INFO).map(([k, t]) => [`market.${k}`, t])),
};

const POSITION: Record<string, FieldType> = {
  id: 'string',
  wallet: 'string',
  chain: 'string',
  protocol: 'string',
  asset: 'string',
  value_usd: 'number',
  nav_usd: 'number',
  pnl_usd: 'number',
  verified: 'boolean',
  // Not in the interface's table (§2.1) but in its description of the endpoint ("net value, collateral, debt, yield
  // metrics"), and kept as sent: a risk desk alerts on a position's debt.
  collateral_usd: 'number',
  debt_usd: 'number',
  apy: 'number',
  // Read when the service sends them (the simulator does not).
  timestamp: 'number',
  updated_at: 'number',
  created_at: 'number',
};

const WINDOWS = ['1day', '7day', '30day'] as const;
const BENCHMARK: Record<string, FieldType> = {
  network: 'string',
  code: 'string',
  day: 'number',
  isComplete: 'boolean',
  isStale: 'boolean',
  days: 'number',
  apy: 'object',
  constituents: 'object',
  ...Object.fromEntries(WINDOWS.map((w) => [`apy.${w}`, 'object' as const])),
  ...Object.fromEntries(WINDOWS.flatMap((w) => ['base', 'reward', 'total'].map((c) => [`apy.${w}.${c}`, 'number' as const]))),
  ...Object.fromEntries(WINDOWS.map((w) => [`constituents.${w}`, 'number' as const])),
};

/** Known fields (dotted paths into `reading.fields`) per reading kind; absent kinds are unchecked. */
export const knownFields: Partial<Record<ReadingKind, Readonly<Record<string, FieldType>>>> = {
  market: MARKET,
  position: POSITION,
  benchmark: BENCHMARK,
};

/** Known label names per reading kind (what the client puts in `reading.labels`). */
export const knownLabels: Partial<Record<ReadingKind, readonly string[]>> = {
  market: ['market_id', 'chain', 'loan_asset', 'collateral_asset', 'loan_asset_symbol', 'collateral_asset_symbol', 'protocol'],
  position: ['chain', 'protocol', 'asset', 'wallet', 'position_id', 'verified'],
  benchmark: ['network', 'code'],
};

/** The type of `path` in readings of `kind`: a FieldType, 'unknown' when the kind is unchecked, or undefined when it is not a field. */
export function fieldType(kind: ReadingKind, path: string): FieldType | 'unknown' | undefined {
  const fields = knownFields[kind];
  if (!fields) return 'unknown';
  return fields[path];
}

/** Whether `name` is a label of readings of `kind` (always true for unchecked kinds). */
export function isKnownLabel(kind: ReadingKind, name: string): boolean {
  const labels = knownLabels[kind];
  return !labels || labels.includes(name);
}

/** The closest of `candidates` to `name` (a small edit distance, else one holding every word of it), for "did you mean" hints. */
export function closest(name: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  for (const c of candidates) {
    const d = editDistance(name.toLowerCase(), c.toLowerCase());
    if (d < bestD) {
      best = c;
      bestD = d;
    }
  }
  if (bestD <= (name.length <= 4 ? 1 : Math.max(2, Math.floor(name.length / 4)))) return best;
  // `loan_symbol` → `loan_asset_symbol`: every word of the name appears in the candidate; the shortest wins.
  const words = name.toLowerCase().split(/[._]/).filter(Boolean);
  let byWords: string | undefined;
  for (const c of candidates) {
    const cw = c.toLowerCase().split(/[._]/);
    if (words.length > 0 && words.every((w) => cw.includes(w)) && (!byWords || c.length < byWords.length)) byWords = c;
  }
  return byWords;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length]!;
}

/** " (did you mean 'x'?)" or ''. */
export function didYouMean(name: string, candidates: Iterable<string>): string {
  const c = closest(name, candidates);
  return c && c !== name ? ` (did you mean '${c}'?)` : '';
}

/** `a market reading`, `an asset reading`: the kind with its article, for messages. */
export function aReading(kind: string): string {
  return `${/^[aeiou]/i.test(kind) ? 'an' : 'a'} ${kind} reading`;
}
