/**
 * `apy_jump`: a market's borrow (or supply) APY moved by at least `min_change` (absolute: 0.02 = 2 points) and/or
 * `min_change_rel` (relative to the old value: 0.5 = +50%) in `direction` against its value `window` ago — the newest
 * stored reading at or before now − window. With no reading that old yet the rule waits. `require: all` needs every
 * given change to be met (the starter rule's "up 2 points AND 50%"); `any` (default) needs one.
 * From an old value of 0 any rise is an infinite relative change (change_rel shows n/a).
 */
import { num } from '../coerce.js';
import { defineKind, notANumber, notMine, type RuleProblem } from '../define.js';
import { LEAN_OK } from '../rule-kind.js';

// Float noise: 0.03 − 0.01 is 0.01999…; a change meant to equal min_change must count as reaching it.
const EPSILON = 1e-12;

/** A change as seen in `direction`: up as it is, down negated, both by size. */
const signed = (direction: 'up' | 'down' | 'both', x: number): number => (direction === 'up' ? x : direction === 'down' ? -x : Math.abs(x));

/** A change relative to the old value; from 0 any change is an infinite one. */
const relative = (change: number, prev: number): number => (prev !== 0 ? change / Math.abs(prev) : change === 0 ? 0 : change > 0 ? Infinity : -Infinity);

/** The `apy_jump` rule kind. */
export const apyJump = defineKind({
  kind: 'apy_jump',
  description: 'a market’s borrow/supply APY moved by `min_change` (absolute) and/or `min_change_rel` (relative) within `window`',
  params: {
    field: ({ z }) => z.enum(['borrow_apy', 'supply_apy']).default('borrow_apy'),
    window: ({ positiveDuration }) => positiveDuration,
    min_change: ({ positive }) => positive.optional(),
    min_change_rel: ({ positive }) => positive.optional(),
    direction: ({ z }) => z.enum(['up', 'down', 'both']).default('up'),
    require: ({ z }) => z.enum(['any', 'all']).default('any'),
  },
  reads: ['market'],
  context: ['change', 'change_rel', 'field', 'window', 'direction', 'apy'],
  needs: (rule) => [rule.field],
  worst: (rule): Record<string, 'min' | 'max'> => (rule.direction === 'up' ? { [rule.field]: 'max' } : rule.direction === 'down' ? { [rule.field]: 'min' } : {}),
  check(rule) {
    const out: RuleProblem[] = [];
    if (rule.min_change === undefined && rule.min_change_rel === undefined) {
      out.push({ path: [], message: 'apy_jump needs min_change (absolute, 0.02 = 2 points) and/or min_change_rel (relative, 0.5 = 50%)' });
    }
    return out;
  },
  evaluate({ rule, reading, now, history, lean }) {
    if (reading.kind !== 'market') return notMine('market', reading);
    const raw = reading.fields[rule.field];
    const cur = num(raw);
    if (cur === null) return notANumber(rule.field, raw);
    const old = history.at('market', reading.entity, now - rule.window);
    if (!old) return { status: 'wait', reason: `no reading ${rule.window / 1000}s old yet` };
    const prev = num(old.fields[rule.field]);
    if (prev === null) return { status: 'wait', reason: `the reading ${rule.window / 1000}s ago has no ${rule.field}` };

    const change = cur - prev;
    const rel = relative(change, prev);
    // Each given minimum met (true) or not (false); undefined when not given. No closure or list: 10,000 verdicts a poll.
    const absMet = rule.min_change === undefined ? undefined : signed(rule.direction, change) >= rule.min_change - EPSILON;
    const relMet = rule.min_change_rel === undefined ? undefined : signed(rule.direction, rel) >= rule.min_change_rel - EPSILON;
    const breach = rule.require === 'all' ? absMet !== false && relMet !== false : absMet === true || relMet === true;
    if (!breach && lean) return LEAN_OK;
    return { status: breach ? 'breach' : 'ok', value: cur, threshold: rule.min_change ?? rule.min_change_rel ?? null, previous: prev };
  },
  // Judged (ok or breach): the value and the previous one were numbers.
  explain({ rule }, v) {
    const change = v.value! - v.previous!;
    const rel = relative(change, v.previous!);
    return { change, change_rel: Number.isFinite(rel) ? rel : null, field: rule.field, window: rule.window / 1000, direction: rule.direction, apy: v.value };
  },
});
