/**
 * The lending-market GraphQL endpoint: executes a `metrics` query against the world. Rows are a
 * time series — the market's current row (created_at = now, to the second) plus one row per
 * sample interval before it — produced newest first across all markets until `limit`.
 */
import { MARKET_FIELD_NAMES, marketField, METRICS_FIELD_NAMES, metricsField, type MarketState } from './markets.js';
import { mixValue, rowHash, type Formats } from './formats.js';
import { GraphQLError, parseQuery, type FieldNode, type ValueNode } from './graphql-parse.js';
import type { World } from './world.js';

/** The scalar fields of a metrics record. */
export const METRICS_FIELDS: ReadonlySet<string> = new Set(METRICS_FIELD_NAMES);
/** The fields of the nested market object. */
export const MARKET_FIELDS: ReadonlySet<string> = new Set(MARKET_FIELD_NAMES);

/** What a GraphQL execution needs besides the request. */
export interface GraphQLContext {
  world: World;
  nowMs: number;
  formats: Formats;
  /** Spacing of the historical rows, ms. */
  sampleIntervalMs: number;
  /** Most rows one response carries, whatever `limit` says. */
  maxRows: number;
}

/** An HTTP status and JSON body. */
export interface GraphQLResult {
  status: number;
  body: unknown;
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

function resolve(v: ValueNode, vars: Record<string, Json>, declared: Set<string>): Json {
  switch (v.kind) {
    case 'variable':
      if (!declared.has(v.name)) throw new GraphQLError(`Variable "$${v.name}" is not defined.`);
      return vars[v.name] ?? null;
    case 'int':
    case 'float':
    case 'string':
    case 'boolean':
      return v.value;
    case 'enum':
      return v.value;
    case 'null':
      return null;
    case 'list':
      return v.values.map((x) => resolve(x, vars, declared));
    case 'object':
      return Object.fromEntries(v.fields.map((f) => [f.name, resolve(f.value, vars, declared)]));
  }
}

/** Unix seconds of a filter value: YYYY-MM-DD (00:00 UTC), an ISO datetime, or a number (s or ms). */
function filterSeconds(v: Json, where: string): number {
  if (typeof v === 'number') return v > 1e11 ? v / 1000 : v;
  if (typeof v === 'string') {
    const t = /^\d{4}-\d{2}-\d{2}$/.test(v) ? Date.parse(v + 'T00:00:00Z') : Date.parse(v);
    if (Number.isFinite(t)) return t / 1000;
  }
  throw new GraphQLError(`invalid value for ${where}: ${JSON.stringify(v)} (expected a date YYYY-MM-DD or an ISO-8601 time)`);
}

interface Bounds {
  lo: number; // inclusive, integer seconds
  hi: number; // inclusive, integer seconds
}

function timeBounds(cmp: Json, field: string, b: Bounds): void {
  if (cmp === null || typeof cmp !== 'object' || Array.isArray(cmp)) throw new GraphQLError(`expected an object for "where.${field}"`);
  for (const [op, raw] of Object.entries(cmp)) {
    const s = filterSeconds(raw, `where.${field}.${op}`);
    if (op === '_gt') b.lo = Math.max(b.lo, Math.floor(s) + 1);
    else if (op === '_gte') b.lo = Math.max(b.lo, Math.ceil(s));
    else if (op === '_lt') b.hi = Math.min(b.hi, Math.ceil(s) - 1);
    else if (op === '_lte') b.hi = Math.min(b.hi, Math.floor(s));
    else if (op === '_eq') {
      b.lo = Math.max(b.lo, Math.ceil(s));
      b.hi = Math.min(b.hi, Math.floor(s));
    } else throw new GraphQLError(`field '${op}' not found in type: 'timestamptz_comparison_exp'`);
  }
}

interface Filter {
  created: Bounds;
  timestamp: Bounds;
  createdLowerGiven: boolean;
  markets: number[] | null;
}

function parseWhere(where: Json, world: World): Filter {
  const f: Filter = { created: { lo: -Infinity, hi: Infinity }, timestamp: { lo: -Infinity, hi: Infinity }, createdLowerGiven: false, markets: null };
  if (where === null) return f;
  if (typeof where !== 'object' || Array.isArray(where)) throw new GraphQLError('expected an object for argument "where"');
  for (const [key, cmp] of Object.entries(where)) {
    if (key === 'created_at') {
      timeBounds(cmp, key, f.created);
      f.createdLowerGiven = Number.isFinite(f.created.lo);
    } else if (key === 'timestamp') timeBounds(cmp, key, f.timestamp);
    else if (key === 'market_id') {
      if (cmp === null || typeof cmp !== 'object' || Array.isArray(cmp)) throw new GraphQLError('expected an object for "where.market_id"');
      for (const [op, v] of Object.entries(cmp)) {
        const ids = op === '_eq' ? [v] : op === '_in' && Array.isArray(v) ? v : null;
        if (!ids) throw new GraphQLError(`field '${op}' not found in type: 'String_comparison_exp'`);
        const found = ids.map((id) => (typeof id === 'string' ? world.marketIndexOf(id) : undefined)).filter((i): i is number => i !== undefined);
        f.markets = f.markets ? f.markets.filter((i) => found.includes(i)) : found;
      }
    } else throw new GraphQLError(`field '${key}' not found in type: 'metrics_bool_exp'`);
  }
  return f;
}

function checkSelection(fields: FieldNode[], allowed: ReadonlySet<string>, type: string): void {
  for (const f of fields) {
    if (f.name === '__typename') continue;
    if (f.name === 'market' && type === 'metrics') {
      if (!f.selections) throw new GraphQLError(`Field "market" of type "markets!" must have a selection of subfields.`);
      checkSelection(f.selections, MARKET_FIELDS, 'markets');
      continue;
    }
    if (!allowed.has(f.name)) throw new GraphQLError(`Cannot query field "${f.name}" on type "${type}".`);
    if (f.selections) throw new GraphQLError(`Field "${f.name}" must not have a selection since its type has no subfields.`);
    if (f.args.length) throw new GraphQLError(`Unknown argument "${f.args[0]?.name}" on field "${type}.${f.name}".`);
  }
}

function project(st: MarketState, fields: FieldNode[], ctx: GraphQLContext): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const h = ctx.formats === 'mixed' ? rowHash(ctx.world.seed, st.createdSec * 100_000 + st.m.index) : 0;
  for (const f of fields) {
    const key = f.alias ?? f.name;
    if (f.name === '__typename') out[key] = 'metrics';
    else if (f.name === 'market') {
      const m: Record<string, unknown> = {};
      const hm = h ^ 0x6d61726b;
      for (const g of f.selections ?? []) {
        const k = g.alias ?? g.name;
        const v = g.name === '__typename' ? 'markets' : marketField(st.m, g.name);
        m[k] = ctx.formats === 'mixed' ? mixValue(v, g.name, hm) : v;
      }
      out[key] = m;
    } else {
      const v = metricsField(st, f.name);
      out[key] = ctx.formats === 'mixed' ? mixValue(v, f.name, h) : v;
    }
  }
  return out;
}

function nonNegativeInt(v: Json, name: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw new GraphQLError(`argument "${name}" expects a non-negative Int, got ${JSON.stringify(v)}`);
  return v;
}

function runMetrics(field: FieldNode, vars: Record<string, Json>, declared: Set<string>, ctx: GraphQLContext): unknown[] {
  let limit = ctx.maxRows;
  let offset = 0;
  let filter = parseWhere(null, ctx.world);
  for (const a of field.args) {
    const v = resolve(a.value, vars, declared);
    if (a.name === 'limit') limit = v === null ? limit : Math.min(nonNegativeInt(v, 'limit'), ctx.maxRows);
    else if (a.name === 'offset') offset = v === null ? 0 : nonNegativeInt(v, 'offset');
    else if (a.name === 'where') filter = parseWhere(v, ctx.world);
    else if (a.name !== 'order_by') throw new GraphQLError(`Unknown argument "${a.name}" on field "query_root.metrics".`);
  }
  if (!field.selections) throw new GraphQLError('Field "metrics" of type "[metrics!]!" must have a selection of subfields.');
  checkSelection(field.selections, METRICS_FIELDS, 'metrics');

  const step = Math.max(1, Math.round(ctx.sampleIntervalMs / 1000));
  const nowSec = Math.floor(ctx.nowMs / 1000);
  // A timestamp filter bounds created_at too (created_at = timestamp + 1..3 s), which keeps the slot walk short.
  const hi = Math.min(nowSec, filter.created.hi, filter.timestamp.hi + 3);
  const lo = Math.max(filter.createdLowerGiven ? filter.created.lo : nowSec - step, filter.timestamp.lo + 1);
  const markets = filter.markets ?? null;
  const count = markets ? markets.length : ctx.world.markets.length;
  if (count === 0) return [];
  const rows: unknown[] = [];
  let skipped = 0;
  // Slots newest first: now itself, then every multiple of the sample interval below it.
  let slot = hi === nowSec ? nowSec : Math.floor(hi / step) * step;
  while (slot >= lo && rows.length < limit) {
    for (let j = 0; j < count && rows.length < limit; j++) {
      const i = markets ? (markets[j] as number) : j;
      const ts = slot - (ctx.world.markets[i]?.indexLagSec ?? 0);
      if (ts < filter.timestamp.lo || ts > filter.timestamp.hi) continue;
      if (skipped < offset) {
        skipped++;
        continue;
      }
      rows.push(project(ctx.world.marketState(i, slot), field.selections, ctx));
    }
    slot = slot === nowSec && nowSec % step !== 0 ? Math.floor(nowSec / step) * step : slot - step;
  }
  return rows;
}

/** Executes a GraphQL request body ({query, variables?, operationName?}) and returns status and body. */
export function executeGraphQL(body: unknown, ctx: GraphQLContext): GraphQLResult {
  if (body === null || typeof body !== 'object' || typeof (body as { query?: unknown }).query !== 'string') {
    return { status: 400, body: { errors: [{ message: 'Must provide query string.' }] } };
  }
  const { query, variables } = body as { query: string; variables?: unknown };
  if (variables !== undefined && variables !== null && (typeof variables !== 'object' || Array.isArray(variables))) {
    return { status: 400, body: { errors: [{ message: 'Variables must be provided as an Object.' }] } };
  }
  try {
    const op = parseQuery(query);
    const vars: Record<string, Json> = { ...((variables as Record<string, Json> | null | undefined) ?? {}) };
    const declared = new Set<string>();
    for (const d of op.variables) {
      declared.add(d.name);
      if (vars[d.name] === undefined && d.defaultValue) vars[d.name] = resolve(d.defaultValue, {}, declared);
      if ((vars[d.name] === undefined || vars[d.name] === null) && d.type.endsWith('!')) {
        throw new GraphQLError(`Variable "$${d.name}" of required type "${d.type}" was not provided.`);
      }
    }
    const data: Record<string, unknown> = {};
    for (const f of op.selections) {
      const key = f.alias ?? f.name;
      if (f.name === '__typename') data[key] = 'query_root';
      else if (f.name === 'metrics') data[key] = runMetrics(f, vars, declared, ctx);
      else throw new GraphQLError(`Cannot query field "${f.name}" on type "query_root".`);
    }
    return { status: 200, body: { data } };
  } catch (err) {
    if (err instanceof GraphQLError) return { status: 200, body: { errors: [{ message: err.message }] } };
    throw err;
  }
}
