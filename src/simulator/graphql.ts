/**
 * The lending-market GraphQL endpoint. Requests are parsed and validated by the reference implementation
 * (graphql-js) against the schema written from the interface (graphql-schema.ts): syntax errors, unknown
 * fields, wrong argument types and bad variables come back as GraphQL errors (HTTP 200, `errors`, no
 * `data`), as a real server answers. The `metrics` field then runs against the world: a time series — each
 * market's current row (created_at = now, to the second) plus one row per sample interval before it —
 * newest first across all markets until `limit`, each row written in the simulator's encoding.
 */
import {
  execute,
  getArgumentValues,
  getDirectiveValues,
  getOperationAST,
  getVariableValues,
  GraphQLError,
  GraphQLIncludeDirective,
  GraphQLObjectType,
  GraphQLSkipDirective,
  Kind,
  parse,
  validate,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { choose, encodeValue, isCanonical, mix, rowHash, type Encoding, type RecordHints } from './encoding.js';
import { metricsSchema } from './graphql-schema.js';
import { marketField, metricsField, type MarketState } from './markets.js';
import type { World } from './world.js';

/** What a GraphQL execution needs besides the request. */
export interface GraphQLContext {
  world: World;
  nowMs: number;
  encoding: Encoding;
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

type Vars = Record<string, unknown>;

/** What to write for one selected field: its response key, its name, and the plan of its subfields. */
interface Planned {
  key: string;
  name: string;
  node: FieldNode;
  sub: Planned[] | null;
}

function included(node: { directives?: readonly unknown[] } & Parameters<typeof getDirectiveValues>[1], vars: Vars): boolean {
  if (getDirectiveValues(GraphQLSkipDirective, node, vars)?.if === true) return false;
  return getDirectiveValues(GraphQLIncludeDirective, node, vars)?.if !== false;
}

/** The fields of a selection set, fragments and @skip/@include applied, merged by response key (in order). */
function collect(set: SelectionSetNode, fragments: Map<string, FragmentDefinitionNode>, vars: Vars, into = new Map<string, FieldNode[]>(), seen = new Set<string>()): Map<string, FieldNode[]> {
  for (const sel of set.selections) {
    if (!included(sel, vars)) continue;
    if (sel.kind === Kind.FIELD) {
      const key = sel.alias?.value ?? sel.name.value;
      const list = into.get(key);
      if (list) list.push(sel);
      else into.set(key, [sel]);
    } else if (sel.kind === Kind.INLINE_FRAGMENT) collect(sel.selectionSet, fragments, vars, into, seen);
    else {
      const name = sel.name.value;
      const frag = fragments.get(name);
      if (!frag || seen.has(name)) continue;
      seen.add(name);
      collect(frag.selectionSet, fragments, vars, into, seen);
    }
  }
  return into;
}

/** The plan of a field's subfields (selections of every node merged). */
function plan(nodes: readonly FieldNode[], fragments: Map<string, FragmentDefinitionNode>, vars: Vars): Planned[] {
  const merged = new Map<string, FieldNode[]>();
  for (const n of nodes) if (n.selectionSet) collect(n.selectionSet, fragments, vars, merged);
  return [...merged].map(([key, ns]) => {
    const node = ns[0] as FieldNode;
    return { key, name: node.name.value, node, sub: ns.some((x) => x.selectionSet) ? plan(ns, fragments, vars) : null };
  });
}

/** A request-level error (HTTP 200, `errors`). */
const fail = (message: string) => new GraphQLError(message);

/** Unix seconds of a filter value: YYYY-MM-DD (00:00 UTC), an ISO datetime, or a number (s or ms). */
function filterSeconds(v: unknown, where: string): number {
  if (typeof v === 'number' && Number.isFinite(v)) return v > 1e11 ? v / 1000 : v;
  if (typeof v === 'string') {
    const t = /^\d{4}-\d{2}-\d{2}$/.test(v) ? Date.parse(v + 'T00:00:00Z') : Date.parse(v);
    if (Number.isFinite(t)) return t / 1000;
  }
  throw fail(`invalid value for ${where}: ${JSON.stringify(v)} (expected a date YYYY-MM-DD or an ISO-8601 time)`);
}

interface Bounds {
  lo: number; // inclusive, integer seconds
  hi: number; // inclusive, integer seconds
}

function timeBounds(cmp: Record<string, unknown>, field: string, b: Bounds): void {
  for (const [op, raw] of Object.entries(cmp)) {
    if (raw === null) continue;
    const s = filterSeconds(raw, `where.${field}.${op}`);
    if (op === '_gt') b.lo = Math.max(b.lo, Math.floor(s) + 1);
    else if (op === '_gte') b.lo = Math.max(b.lo, Math.ceil(s));
    else if (op === '_lt') b.hi = Math.min(b.hi, Math.ceil(s) - 1);
    else if (op === '_lte') b.hi = Math.min(b.hi, Math.floor(s));
    else {
      b.lo = Math.max(b.lo, Math.ceil(s));
      b.hi = Math.min(b.hi, Math.floor(s));
    }
  }
}

interface Filter {
  created: Bounds;
  timestamp: Bounds;
  createdLowerGiven: boolean;
  markets: number[] | null;
}

/** The `where` argument, already coerced by graphql-js to the schema's input types. */
function parseWhere(where: Record<string, Record<string, unknown> | null> | undefined | null, world: World): Filter {
  const f: Filter = { created: { lo: -Infinity, hi: Infinity }, timestamp: { lo: -Infinity, hi: Infinity }, createdLowerGiven: false, markets: null };
  if (!where) return f;
  if (where.created_at) {
    timeBounds(where.created_at, 'created_at', f.created);
    f.createdLowerGiven = Number.isFinite(f.created.lo);
  }
  if (where.timestamp) timeBounds(where.timestamp, 'timestamp', f.timestamp);
  const m = where.market_id;
  if (m) {
    for (const [op, v] of Object.entries(m)) {
      if (v === null) continue;
      const ids = op === '_eq' ? [v] : (v as unknown[]);
      const found = ids.map((id) => world.marketIndexOf(id as string)).filter((i): i is number => i !== undefined);
      f.markets = f.markets ? f.markets.filter((i) => found.includes(i)) : found;
    }
  }
  return f;
}

const TIME_FIELDS: ReadonlySet<string> = new Set(['created_at', 'oracle_last_update', 'timestamp']);

/** One metrics row: the planned fields of a market state, written in the encoding. */
function project(st: MarketState, fields: readonly Planned[], ctx: GraphQLContext): Record<string, unknown> {
  const e = ctx.encoding;
  const canonical = isCanonical(e);
  const h = canonical ? 0 : rowHash(e.seed, st.createdSec * 100_000 + st.m.index);
  const hints: RecordHints = {
    times: TIME_FIELDS,
    amounts: { total_borrowed: st.m.loan.decimals, total_supplied: st.m.loan.decimals },
    oracle: { field: 'oracle_price', shift: 36 + st.m.loan.decimals - st.m.collateral.decimals },
  };
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    if (f.name === '__typename') out[f.key] = 'metrics';
    else if (f.name === 'market') {
      if (!canonical && choose(e, 'market', h, 'market') === 'absent') {
        out[f.key] = null;
        continue;
      }
      const m: Record<string, unknown> = {};
      const hm = mix(h, 'market');
      for (const g of f.sub ?? []) {
        const v = g.name === '__typename' ? 'markets' : marketField(st.m, g.name);
        m[g.key] = canonical || g.name === '__typename' ? v : encodeValue(v, g.name, e, hm, {}, 'graphql');
      }
      out[f.key] = m;
    } else {
      const v = metricsField(st, f.name);
      out[f.key] = canonical ? v ?? null : encodeValue(v, f.name, e, h, hints, 'graphql');
    }
  }
  return out;
}

function runMetrics(nodes: readonly FieldNode[], fields: readonly Planned[], vars: Vars, ctx: GraphQLContext): unknown[] {
  const queryType = metricsSchema().getQueryType() as GraphQLObjectType;
  const args = getArgumentValues(queryType.getFields().metrics!, nodes[0] as FieldNode, vars) as {
    limit?: number | null;
    offset?: number | null;
    where?: Record<string, Record<string, unknown> | null> | null;
  };
  if (args.limit != null && args.limit < 0) throw fail(`argument "limit" must not be negative, got ${args.limit}`);
  if (args.offset != null && args.offset < 0) throw fail(`argument "offset" must not be negative, got ${args.offset}`);
  const limit = args.limit == null ? ctx.maxRows : Math.min(args.limit, ctx.maxRows);
  const offset = args.offset ?? 0;
  const filter = parseWhere(args.where, ctx.world);

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
      rows.push(project(ctx.world.marketState(i, slot), fields, ctx));
    }
    slot = slot === nowSec && nowSec % step !== 0 ? Math.floor(nowSec / step) * step : slot - step;
  }
  return rows;
}

const errorsOf = (errs: readonly GraphQLError[]) => ({ status: 200, body: { errors: errs.map((e) => e.toJSON()) } });

/** Executes a GraphQL request body ({query, variables?, operationName?}) and returns status and body. */
export function executeGraphQL(body: unknown, ctx: GraphQLContext): GraphQLResult {
  if (body === null || typeof body !== 'object' || typeof (body as { query?: unknown }).query !== 'string') {
    return { status: 400, body: { errors: [{ message: 'Must provide query string.' }] } };
  }
  const { query, variables, operationName } = body as { query: string; variables?: unknown; operationName?: unknown };
  if (variables !== undefined && variables !== null && (typeof variables !== 'object' || Array.isArray(variables))) {
    return { status: 400, body: { errors: [{ message: 'Variables must be provided as an Object.' }] } };
  }
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') {
    return { status: 400, body: { errors: [{ message: 'Operation name must be a string.' }] } };
  }
  const schema = metricsSchema();
  let doc: DocumentNode;
  try {
    doc = parse(query);
  } catch (err) {
    if (err instanceof GraphQLError) return errorsOf([err]);
    throw err;
  }
  const invalid = validate(schema, doc);
  if (invalid.length) return errorsOf(invalid);
  const op = getOperationAST(doc, (operationName as string | null | undefined) ?? null);
  if (!op) return errorsOf([fail(operationName ? `Unknown operation named "${operationName}".` : 'Must provide operation name if query contains multiple operations.')]);
  if (op.operation !== 'query') return errorsOf([fail(`Schema is not configured to execute ${op.operation} operation.`)]);
  const coerced = getVariableValues(schema, op.variableDefinitions ?? [], (variables as Vars | null | undefined) ?? {});
  if (coerced.errors) return errorsOf(coerced.errors);
  const vars = coerced.coerced;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of doc.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);

  const root = collect(op.selectionSet, fragments, vars);
  // Introspection (__schema, __type) is answered by graphql-js itself.
  if ([...root.values()].some((ns) => ns[0]!.name.value.startsWith('__') && ns[0]!.name.value !== '__typename')) {
    const result = execute({ schema, document: doc, variableValues: vars, operationName: op.name?.value ?? null }) as { data?: unknown; errors?: readonly GraphQLError[] };
    return { status: 200, body: result.errors ? { errors: result.errors.map((e) => e.toJSON()), data: result.data ?? null } : { data: result.data } };
  }
  try {
    const data: Record<string, unknown> = {};
    for (const [key, nodes] of root) {
      const name = (nodes[0] as FieldNode).name.value;
      data[key] = name === '__typename' ? 'query_root' : runMetrics(nodes, plan(nodes, fragments, vars), vars, ctx);
    }
    return { status: 200, body: { data } };
  } catch (err) {
    if (err instanceof GraphQLError) return errorsOf([err]);
    throw err;
  }
}
