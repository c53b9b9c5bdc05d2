/**
 * `price_deviation`: the market's oracle price and the service's own price of the collateral (both in loan units)
 * differ by more than `max_deviation`, relative to the service price: |oracle − service| / service > max.
 * A missing or non-positive price cannot be compared: a data error.
 */
import { num } from '../coerce.js';
import { defineKind, notANumber, notMine } from '../define.js';
import { LEAN_OK } from '../rule-kind.js';

// Float noise: |1.01 − 1| / 1 is 0.0100000000000000089; a deviation meant to equal max_deviation is not above it.
const EPSILON = 1e-12;

/** The `price_deviation` rule kind. */
export const priceDeviation = defineKind({
  kind: 'price_deviation',
  description: 'a market’s oracle price differs from the service’s price by more than `max_deviation` (relative)',
  reads: ['market'],
  context: ['deviation', 'oracle_price', 'service_price'],
  needs: () => ['oracle_price', 'service_price'],
  fields: () => ['oracle_price_scaled', 'service_price'],
  params: { max_deviation: ({ positive }) => positive },
  evaluate({ rule, reading, lean }) {
    if (reading.kind !== 'market') return notMine('market', reading);
    const oracle = num(reading.fields.oracle_price_scaled);
    const service = num(reading.fields.service_price);
    if (oracle === null) return notANumber('oracle_price_scaled', reading.fields.oracle_price_scaled);
    if (service === null) return notANumber('service_price', reading.fields.service_price);
    if (service <= 0) return { status: 'data_error', reason: `service_price ${service} is not positive`, value: service };
    if (oracle < 0) return { status: 'data_error', reason: `oracle price ${oracle} is negative`, value: oracle };
    const deviation = Math.abs(oracle - service) / service;
    const breach = deviation > rule.max_deviation + EPSILON;
    if (!breach && lean) return LEAN_OK;
    return { status: breach ? 'breach' : 'ok', value: deviation, threshold: rule.max_deviation };
  },
  // Judged (ok or breach): both prices were numbers.
  explain: ({ reading }, v) => ({ deviation: v.value, oracle_price: num(reading.fields.oracle_price_scaled), service_price: num(reading.fields.service_price) }),
});
