/**
 * Fault injection: a spec matches requests by path and method and shapes the next `times` of
 * them — an error status (with Retry-After), a delay, a truncated body, schema drift, a cursor
 * that repeats forever, or one broken row in the page.
 */

/** How a fault bends the response. */
export interface FaultSpec {
  /** Exact pathname; a string ending in `*` matches by prefix; a RegExp is tested on the pathname. Omitted: every path. */
  path?: string | RegExp;
  /** HTTP method (case-insensitive). Omitted: every method. */
  method?: string;
  /** Answer with this status instead of the real response (with the endpoint group's error body unless `body` is given). */
  status?: number;
  /** Seconds, sent as the Retry-After header. */
  retryAfter?: number;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Cut the JSON body in half: `true`/`'body'` sends a complete HTTP response with half a body; `'socket'` announces the full length and then drops the connection. */
  truncate?: boolean | 'body' | 'socket';
  /** Schema drift of every row: field names renamed (snake_case ↔ camelCase), numbers as objects, or unknown extra fields. */
  drift?: 'rename_field' | 'wrong_type' | 'extra_fields';
  /** The page's cursor never advances: next_cursor (or nextPage) repeats the request's own. Default `times` for this one: unlimited. */
  repeatCursor?: boolean;
  /** One row of the page is broken: `bad_value` (value_usd / utilization … = "abc") or `missing_id` (its id field removed). `true` means `bad_value`. */
  badRow?: boolean | 'bad_value' | 'missing_id';
  /** Alias of `repeatCursor`. */
  repeat_cursor?: boolean;
  /** Alias of `badRow`. */
  bad_row?: boolean | 'bad_value' | 'missing_id';
  /** Replace the body with this JSON value (status 200 unless `status` is given). */
  body?: unknown;
  /** How many matching requests this fault shapes. Default 1 (unlimited for repeatCursor). */
  times?: number;
}

/** A fault waiting to fire, with what is left of it. */
export interface ActiveFault {
  id: number;
  spec: FaultSpec;
  remaining: number;
  fired: number;
}

/** An error with a message safe to send back to a control-endpoint caller. */
export class FaultSpecError extends Error {}

const DRIFTS = ['rename_field', 'wrong_type', 'extra_fields'];

/** Checks and normalizes a spec as received over HTTP (JSON; `pathRegex` and snake_case keys accepted). */
export function faultSpecFromJson(raw: unknown): FaultSpec {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new FaultSpecError('fault spec must be a JSON object');
  const r = raw as Record<string, unknown>;
  const get = (camel: string, snake: string) => (r[camel] !== undefined ? r[camel] : r[snake]);
  const known = new Set(['path', 'pathRegex', 'path_regex', 'method', 'status', 'retryAfter', 'retry_after', 'delayMs', 'delay_ms', 'truncate', 'drift', 'repeatCursor', 'repeat_cursor', 'badRow', 'bad_row', 'body', 'times']);
  for (const k of Object.keys(r)) if (!known.has(k)) throw new FaultSpecError(`unknown fault key "${k}"`);
  const spec: FaultSpec = {};
  const num = (v: unknown, name: string) => {
    if (v === undefined) return undefined;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new FaultSpecError(`${name} must be a non-negative number`);
    return v;
  };
  const regex = get('pathRegex', 'path_regex');
  if (regex !== undefined) {
    if (typeof regex !== 'string') throw new FaultSpecError('pathRegex must be a string');
    try {
      spec.path = new RegExp(regex);
    } catch {
      throw new FaultSpecError('pathRegex is not a valid regular expression');
    }
  } else if (r.path !== undefined) {
    if (typeof r.path !== 'string') throw new FaultSpecError('path must be a string');
    spec.path = r.path;
  }
  if (r.method !== undefined) {
    if (typeof r.method !== 'string') throw new FaultSpecError('method must be a string');
    spec.method = r.method;
  }
  const status = num(r.status, 'status');
  if (status !== undefined) {
    if (!Number.isInteger(status) || status < 100 || status > 599) throw new FaultSpecError('status must be an HTTP status code');
    spec.status = status;
  }
  const retryAfter = num(get('retryAfter', 'retry_after'), 'retryAfter');
  if (retryAfter !== undefined) spec.retryAfter = retryAfter;
  const delayMs = num(get('delayMs', 'delay_ms'), 'delayMs');
  if (delayMs !== undefined) spec.delayMs = delayMs;
  const times = num(r.times, 'times');
  if (times !== undefined) spec.times = times;
  if (r.truncate !== undefined) {
    if (r.truncate !== true && r.truncate !== false && r.truncate !== 'body' && r.truncate !== 'socket') throw new FaultSpecError('truncate must be true, false, "body" or "socket"');
    spec.truncate = r.truncate;
  }
  if (r.drift !== undefined) {
    if (typeof r.drift !== 'string' || !DRIFTS.includes(r.drift)) throw new FaultSpecError(`drift must be one of ${DRIFTS.join(', ')}`);
    spec.drift = r.drift as FaultSpec['drift'];
  }
  const repeat = get('repeatCursor', 'repeat_cursor');
  if (repeat !== undefined) spec.repeatCursor = repeat === true;
  const bad = get('badRow', 'bad_row');
  if (bad !== undefined) {
    if (bad !== true && bad !== false && bad !== 'bad_value' && bad !== 'missing_id') throw new FaultSpecError('badRow must be true, "bad_value" or "missing_id"');
    spec.badRow = bad;
  }
  if (r.body !== undefined) spec.body = r.body;
  return spec;
}

/** A fault spec as JSON (RegExp paths as `pathRegex`), for the control endpoint's listing. */
export function faultSpecToJson(spec: FaultSpec): Record<string, unknown> {
  const { path, ...rest } = spec;
  return path instanceof RegExp ? { pathRegex: path.source, ...rest } : path === undefined ? rest : { path, ...rest };
}

function pathMatches(p: FaultSpec['path'], path: string): boolean {
  if (p === undefined) return true;
  if (p instanceof RegExp) {
    p.lastIndex = 0;
    return p.test(path);
  }
  return p.endsWith('*') ? path.startsWith(p.slice(0, -1)) : path === p;
}

/** Holds the faults to inject; the first added fault that matches a request shapes it. */
export class FaultController {
  private faults: ActiveFault[] = [];
  private nextId = 1;

  /** Adds a fault for the next `times` matching requests; returns its id. */
  add(input: FaultSpec): number {
    const { repeat_cursor, bad_row, ...rest } = input;
    const spec: FaultSpec = { ...rest };
    if (spec.repeatCursor === undefined && repeat_cursor !== undefined) spec.repeatCursor = repeat_cursor;
    if (spec.badRow === undefined && bad_row !== undefined) spec.badRow = bad_row;
    const times = spec.times ?? (spec.repeatCursor ? Infinity : 1);
    const id = this.nextId++;
    this.faults.push({ id, spec, remaining: times, fired: 0 });
    return id;
  }

  /** Removes one fault. */
  remove(id: number): boolean {
    const n = this.faults.length;
    this.faults = this.faults.filter((f) => f.id !== id);
    return this.faults.length !== n;
  }

  /** Removes every fault. */
  clear(): void {
    this.faults = [];
  }

  /** The faults still waiting to fire. */
  list(): ActiveFault[] {
    return this.faults.map((f) => ({ ...f }));
  }

  /** How many times fault `id` has fired (0 once removed or unknown). */
  fired(id: number): number {
    return this.faults.find((f) => f.id === id)?.fired ?? this.spent.get(id) ?? 0;
  }

  private readonly spent = new Map<number, number>();

  /** Takes the fault for a request, if any: counts it and drops it once used up. */
  take(method: string, path: string): ActiveFault | undefined {
    const f = this.faults.find((x) => x.remaining > 0 && pathMatches(x.spec.path, path) && (!x.spec.method || x.spec.method.toUpperCase() === method.toUpperCase()));
    if (!f) return undefined;
    f.remaining--;
    f.fired++;
    if (f.remaining <= 0) {
      this.faults = this.faults.filter((x) => x !== f);
      this.spent.set(f.id, f.fired);
    }
    return { ...f };
  }
}
