/**
 * `threshold`: any numeric field of a reading compared with a value: `field` is a dotted path into the reading's
 * fields (`value_usd`, `market.loan_asset_decimals`, `apy.7day.total`), `reading` picks the reading kind (market by
 * default). A missing or non-numeric field is a data error, never a breach. Numeric strings are read as numbers.
 */
import { num, getPath } from '../coerce.js';
import { defineKind, notANumber, notMine, type RuleProblem } from '../define.js';
import { LEAN_OK } from '../rule-kind.js';
import { aReading, didYouMean, fieldType, knownFields } from '../fields.js';
import { operatorIds, operators } from '../operators.js';

const readingKinds = ['market', 'position', 'asset', 'holding', 'performance', 'benchmark'] as const;

/** The `threshold` rule kind. */
export const threshold = defineKind({
  kind: 'threshold',
  description: 'any numeric `field` of a reading compared (`op`) with `value`',
  params: {
    reading: ({ z }) => z.enum(readingKinds).default('market'),
    field: ({ z }) => z.string().min(1, { error: 'name a field, e.g. borrow_apy or market.loan_asset_decimals' }),
    op: ({ z }) => z.enum(operatorIds),
    value: ({ z }) => z.number(),
  },
  reads: readingKinds,
  context: ['field', 'op'],
  needs: (rule) => [rule.field],
  worst: (rule): Record<string, 'min' | 'max'> => (rule.op.startsWith('>') ? { [rule.field]: 'max' } : rule.op.startsWith('<') ? { [rule.field]: 'min' } : {}),
  readingKinds: (rule) => [rule.reading],
  check(rule) {
    const out: RuleProblem[] = [];
    const t = fieldType(rule.reading, rule.field);
    if (t === undefined) {
      out.push({ path: ['field'], message: `field: unknown field '${rule.field}' of ${aReading(rule.reading)}${didYouMean(rule.field, Object.keys(knownFields[rule.reading] ?? {}))}` });
    } else if (t !== 'number' && t !== 'unknown') {
      out.push({ path: ['field'], message: `field: '${rule.field}' is a ${t}, not a number` });
    }
    return out;
  },
  evaluate({ rule, reading, lean }) {
    if (reading.kind !== rule.reading) return notMine(rule.reading, reading);
    const raw = getPath(reading.fields, rule.field);
    const v = num(raw);
    if (v === null) return notANumber(rule.field, raw);
    const breach = operators[rule.op].test(v, rule.value);
    if (!breach && lean) return LEAN_OK;
    return { status: breach ? 'breach' : 'ok', value: v, threshold: rule.value };
  },
  explain: ({ rule }) => ({ field: rule.field, op: rule.op }),
});
