/**
 * The shapes every part of lookout shares: normalized readings from the data service,
 * poll outcomes, and alerts. Times are Unix milliseconds everywhere inside lookout.
 */

/** What kind of thing a reading describes; each poll kind produces one of these. */
export type ReadingKind = 'market' | 'position' | 'asset' | 'holding' | 'performance' | 'benchmark';

/** Alert severities, in rising order. */
export const SEVERITIES = ['info', 'warning', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** Rule name (and kind) of the built-in alert on a poll that keeps failing; its entity is the poll's name. */
export const SOURCE_DOWN = 'source_down';
/** Rule name (and kind) of the always-firing alert that proves the pipeline works end to end. */
export const WATCHDOG = 'watchdog';

/**
 * One normalized observation of one entity at one time.
 * `entity` is stable across polls (market_id; a position's id or wallet/chain/protocol/asset;
 * `network/code` for benchmarks) and, with the rule name, makes an alert's identity.
 */
export interface Reading {
  kind: ReadingKind;
  entity: string;
  /** Time of the data itself (the record's timestamp, else created_at, else the poll time), ms. */
  at: number;
  /** Labels of the entity, used by `select`, alert labels and metrics (market_id, chain, loan_asset, ...). */
  labels: Record<string, string>;
  /** The normalized record: see {@link MarketFields}, {@link PositionFields}, {@link BenchmarkFields}. */
  fields: Record<string, unknown>;
  /** Fields the service sent but lookout could not read (field → reason): unknown this time, not absent (SPEC §6). */
  unreadable?: Record<string, string>;
  /**
   * Set on a reading read back from bucketed history (older than `storage.raw_retention`): `fields` are the bucket's last
   * reading, and `min`/`max` the extremes of each numeric field over the bucket's `n` readings (a rule judges the worst).
   */
  bucket?: { start: number; n: number; min: Record<string, unknown>; max: Record<string, unknown> };
}

/** Nested market object of a metrics record. */
export interface MarketInfo {
  chain: string | null;
  loan_asset: string | null;
  loan_asset_symbol: string | null;
  loan_asset_decimals: number | null;
  collateral_asset: string | null;
  collateral_asset_symbol: string | null;
  collateral_asset_decimals: number | null;
  market_address: string | null;
  oracle: string | null;
}

/** Fields of a `market` reading (one lending market's current metrics row). */
export interface MarketFields {
  market_id: string;
  id: string | null;
  block: number | null;
  /** Fraction: 0.95 = 95%. */
  utilization: number | null;
  borrow_apy: number | null;
  supply_apy: number | null;
  /** Raw Morpho-style oracle price as an exact decimal integer string (may exceed 2^53). */
  oracle_price: string | null;
  /** oracle_price / (1e36 × 10^(loan_decimals − collateral_decimals)): collateral priced in loan units. */
  oracle_price_scaled: number | null;
  /** The service's own price of the collateral in loan units, comparable with oracle_price_scaled. */
  service_price: number | null;
  /** Token amounts in base units, exact decimal integer strings. */
  total_borrowed: string | null;
  total_supplied: string | null;
  total_borrowed_usd: number | null;
  total_supplied_usd: number | null;
  created_at: number | null;
  oracle_last_update: number | null;
  timestamp: number | null;
  market: MarketInfo;
}

/** Fields of a `position` reading. Unknown extra fields of the service are kept as they came. */
export interface PositionFields {
  id: string | null;
  wallet: string | null;
  chain: string | null;
  protocol: string | null;
  asset: string | null;
  value_usd: number | null;
  nav_usd: number | null;
  pnl_usd: number | null;
  verified: boolean | null;
  [extra: string]: unknown;
}

/** One window's rate of a benchmark day. */
export interface BenchmarkRate {
  base: number | null;
  reward: number | null;
  total: number | null;
}

/** Fields of a `benchmark` reading: the newest day of one network and code, plus a summary of the days seen. */
export interface BenchmarkFields {
  network: string;
  code: string;
  /** Newest day's timestamp (00:00 UTC), ms. */
  day: number;
  /** Null when the service sent no readable flag: unknown, never false. */
  isComplete: boolean | null;
  isStale: boolean | null;
  apy: Record<'1day' | '7day' | '30day', BenchmarkRate | null>;
  /** Number of constituents per window on the newest day. */
  constituents: Record<'1day' | '7day' | '30day', number>;
  /** How many days the lookback returned. */
  days: number;
}

/**
 * A row the service sent that could not be attributed (skipped), or — with `field` set — one field of
 * a row that could not be read (the field is unknown for that reading, the row is kept). Counted and
 * logged, never fatal.
 */
export interface Rejection {
  /** Short stable reason, used as a metric label: `invalid_field`, `missing_id`, `not_a_number`, ... */
  reason: string;
  entity?: string;
  detail: string;
  /** The field that could not be read; absent for a whole-row rejection. */
  field?: string;
  /** A fingerprint of what the service sent for the field, so the log says it once until it changes. */
  sent?: string;
}

/** What one run of one poll produced. A failed run (`ok: false`) must change no alert. */
export interface PollOutcome {
  poll: string;
  kind: string;
  ok: boolean;
  readings: readonly Reading[];
  rejected: Rejection[];
  /** Why the run failed (no secret in it). */
  error?: string;
  /** Stable failure class for metrics: `http_401`, `http_5xx`, `timeout`, `network`, `graphql`, `page_cap`, ... */
  errorReason?: string;
  started_at: number;
  finished_at: number;
}

/** States of an alert's lifecycle. */
export type AlertState = 'inactive' | 'pending' | 'firing' | 'resolved';

/** The persisted state of one (rule, entity) pair. */
export interface Alert {
  /** Stable id of (rule name, entity): hex digest. */
  fingerprint: string;
  rule: string;
  /** Rule kind (`utilization_above`, ..., `source_down`, `watchdog`). */
  kind: string;
  entity: string;
  state: AlertState;
  /** Changed state more than flap_threshold times within flap_window: notify once, then quiet until it settles. */
  flapping: boolean;
  severity: Severity;
  /** rule, alertname, severity, the entity's labels and the rule's labels. */
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** The value that was judged (crossed, or current). */
  value: number | null;
  threshold: number | null;
  previous_value: number | null;
  /** Most extreme value while pending/firing. */
  peak: number | null;
  /** Time of the data behind the latest evaluation, ms; and block where known. */
  data_at: number | null;
  block: number | null;
  pending_since: number | null;
  firing_since: number | null;
  resolved_at: number | null;
  last_eval_at: number;
  last_notified_at: number | null;
  /** Consecutive successful polls the entity was missing from. */
  absent_polls: number;
  /** Times of recent state changes, for flap detection. */
  changes: number[];
}

/** A state change worth recording; `firing`, `resolved` and `flapping` are the ones that notify. */
export interface AlertEvent {
  type: 'pending' | 'firing' | 'resolved' | 'flapping' | 'settled' | 'cancelled';
  at: number;
  alert: Alert;
}
