/**
 * The GraphQL schema of the lending-market endpoint, written from the interface (§2.2, §4): the `metrics`
 * root field with Hasura-style `where` / `order_by` / `limit` / `offset`, and the nested `market` object.
 * The reference implementation (graphql-js) parses and validates every request against it, so a client's
 * unknown field, wrong argument type or bad variable comes back as the GraphQL error a real server gives.
 *
 * The value scalars (`numeric`, `bigint`, `timestamptz`) pass any JSON through: the interface does not
 * show the types, and the simulator's encodings vary them (see encoding.ts).
 */
import { buildSchema, type GraphQLSchema } from 'graphql';

/** SDL of the schema; `filters` lists the `where` members the simulator implements (and no others). */
export const METRICS_SDL = /* GraphQL */ `
schema { query: query_root }

"Numbers, written as the service's encoding says (a JSON number or a numeric string)."
scalar numeric
"Integers that may pass 2^53 (token amounts, Morpho-scaled prices)."
scalar bigint
"A time: ISO-8601, Unix seconds or milliseconds."
scalar timestamptz

type query_root {
  "Lending-market metrics: a time series, several rows per market."
  metrics(limit: Int, offset: Int, where: metrics_bool_exp, order_by: [metrics_order_by!]): [metrics!]!
}

type metrics {
  block: bigint
  id: String
  borrow_apy: numeric
  supply_apy: numeric
  utilization: numeric
  service_price: numeric
  oracle_price: bigint
  total_borrowed: bigint
  total_borrowed_usd: numeric
  total_supplied: bigint
  total_supplied_usd: numeric
  market_id: String!
  created_at: timestamptz
  oracle_last_update: timestamptz
  timestamp: timestamptz
  market: markets
}

type markets {
  collateral_asset: String
  collateral_asset_decimals: Int
  chain: String
  collateral_asset_symbol: String
  loan_asset: String
  loan_asset_decimals: Int
  loan_asset_symbol: String
  market_address: String
  oracle: String
}

input metrics_bool_exp {
  market_id: String_comparison_exp
  created_at: timestamptz_comparison_exp
  timestamp: timestamptz_comparison_exp
}

input String_comparison_exp {
  _eq: String
  _in: [String!]
}

input timestamptz_comparison_exp {
  _eq: timestamptz
  _gt: timestamptz
  _gte: timestamptz
  _lt: timestamptz
  _lte: timestamptz
}

enum order_by { asc asc_nulls_first asc_nulls_last desc desc_nulls_first desc_nulls_last }

input metrics_order_by {
  created_at: order_by
  timestamp: order_by
  market_id: order_by
}
`;

let built: GraphQLSchema | undefined;

/** The schema (built once). */
export function metricsSchema(): GraphQLSchema {
  return (built ??= buildSchema(METRICS_SDL));
}
