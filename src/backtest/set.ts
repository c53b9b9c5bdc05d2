/** `--set rule.param=value`: a copy of the rules with changed parameters, checked like the config checks them. */
import { parseDuration } from '../config/duration.js';
import { LookoutError } from '../errors.js';
import { setOwn } from '../own.js';
import { getRuleKind } from '../rules/registry.js';
import { paramShape } from '../rules/param-kit.js';
import { ruleCommonShape, type RuleBase } from '../rules/schema.js';
import type { z } from 'zod';

/** A backtest option that cannot be applied (unknown rule, a value of the wrong kind, a parameter the kind refuses). */
export class BacktestError extends LookoutError {
  constructor(message: string) {
    super('E_BACKTEST', message);
  }
}

const NUMBER = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/;

/** Parses `rule.param=value` strings into a map of 'rule.param' → value text. */
export function parseSetArgs(args: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const a of args) {
    const eq = a.indexOf('=');
    const k = eq > 0 ? a.slice(0, eq).trim() : '';
    if (!k.includes('.') || k.endsWith('.')) throw new BacktestError(`--set ${a}: write it as rule.param=value, e.g. usdc-utilization-high.threshold=0.97`);
    out[k] = a.slice(eq + 1).trim();
  }
  return out;
}

/** Whether the parameter is written as a duration (its schema turns '1m' into a number of ms). */
function isDuration(schema: z.ZodType | undefined): boolean {
  if (!schema) return false;
  const r = schema.safeParse('1m');
  return r.success && r.data === 60_000;
}

/** Converts a value given as text to the type the parameter has (numbers; durations like 15m to ms; booleans). */
function coerce(text: string, current: unknown, where: string, duration: boolean): unknown {
  if (duration) {
    const ms = parseDuration(text);
    if (ms === undefined) throw new BacktestError(`${where}: '${text}' is not a duration (write it like 30s, 15m, 2h)`);
    return ms;
  }
  if (typeof current === 'number') {
    if (NUMBER.test(text)) return Number(text);
    const ms = parseDuration(text);
    if (ms !== undefined) return ms;
    throw new BacktestError(`${where}: '${text}' is not a number or a duration`);
  }
  if (typeof current === 'boolean') {
    if (text === 'true' || text === 'false') return text === 'true';
    throw new BacktestError(`${where}: '${text}' is not true or false`);
  }
  if (typeof current === 'string') return text;
  if (current !== undefined) throw new BacktestError(`${where}: only numbers, durations, booleans and strings can be set`);
  if (NUMBER.test(text)) return Number(text);
  const ms = parseDuration(text);
  if (ms !== undefined) return ms;
  if (text === 'true' || text === 'false') return text === 'true';
  return text;
}

/** The rules with the changes applied (the originals untouched); throws {@link BacktestError} naming the problem. */
export function applySet(rules: readonly RuleBase[], set: Record<string, unknown>): RuleBase[] {
  const out = rules.map((r) => ({ ...r }));
  for (const [k, v] of Object.entries(set)) {
    const dot = k.lastIndexOf('.');
    const name = k.slice(0, dot);
    const param = k.slice(dot + 1);
    const rule = out.find((r) => r.name === name);
    if (!rule) throw new BacktestError(`--set ${k}: no rule named '${name}'${out.length ? ` (rules: ${out.map((r) => r.name).join(', ')})` : ''}`);
    if (param === 'name' || param === 'kind') throw new BacktestError(`--set ${k}: the ${param} of a rule cannot be changed`);
    const kind = getRuleKind(rule.kind);
    // Own members only: `toString` or `__proto__` is no rule's parameter, whatever every object inherits.
    const set = Object.hasOwn(rule, param) && rule[param] !== undefined;
    if (kind && !set && !Object.hasOwn(kind.params, param) && !['for', 'keep_firing_for', 'absent_for', 'flap_threshold', 'flap_window', 'max_reading_age', 'severity', 'enabled'].includes(param)) {
      throw new BacktestError(`--set ${k}: '${param}' is not a parameter of ${rule.kind} rules (${Object.keys(kind.params).join(', ')})`);
    }
    const own = (shape: Record<string, unknown> | undefined) => (shape && Object.hasOwn(shape, param) ? shape[param] : undefined);
    const schema = (own(kind && paramShape(kind.params)) ?? own(ruleCommonShape)) as z.ZodType | undefined;
    setOwn(rule, param, typeof v === 'string' ? coerce(v, own(rule), `--set ${k}`, isDuration(schema)) : v);
    for (const p of kind?.check?.(rule as Record<string, unknown>) ?? []) {
      throw new BacktestError(`--set ${k}: ${p.message}`);
    }
  }
  return out;
}
