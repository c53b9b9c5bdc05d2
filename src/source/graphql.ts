/** The GraphQL `metrics` query lookout sends, and the date filter it uses. */

/** Scalar fields of a metrics record (interface §2.2). */
const RECORD_FIELDS = [
  'id', 'block', 'market_id', 'borrow_apy', 'supply_apy', 'utilization', 'service_price', 'oracle_price',
  'total_borrowed', 'total_borrowed_usd', 'total_supplied', 'total_supplied_usd', 'created_at', 'oracle_last_update', 'timestamp',
];
/** Fields of the nested market object. */
const MARKET_FIELDS = [
  'chain', 'loan_asset', 'loan_asset_symbol', 'loan_asset_decimals', 'collateral_asset', 'collateral_asset_symbol',
  'collateral_asset_decimals', 'market_address', 'oracle',
];

/**
 * The query document. Arguments travel as variables, so no value is ever spliced into query text;
 * the variable types follow the Hasura convention the filter operators (`_gt`, `_eq`) come from.
 */
export const METRICS_QUERY = `query LookoutMetrics($limit: Int, $where: metrics_bool_exp) {
  metrics(limit: $limit, where: $where) {
    ${RECORD_FIELDS.join(' ')}
    market { ${MARKET_FIELDS.join(' ')} }
  }
}`;

/** The UTC date (YYYY-MM-DD) of a time in ms: the form the created_at filter takes. */
export function utcDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** One day: the filter takes dates, so it cannot ask for less. */
const DAY_MS = 86_400_000;

/** The created_at lower bound of a metrics poll: the date of now − max(lookback, 1 day). */
export function createdAfter(now: number, lookback: number): string {
  return utcDate(now - Math.max(lookback, DAY_MS));
}
