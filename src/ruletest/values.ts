/**
 * The expanding notation of rule-test series: one value per poll, separated by spaces.
 *
 *   0.5            one value          0.96x20        20 times 0.96
 *   0.5+0.01x5     0.5 0.51 … 0.54    1-0.1x3        1 0.9 0.8
 *   _              no reading (the entity is missing from that poll)
 *   null true false                   'text'        a string (no spaces), e.g. '0.95' for a numeric string
 *   now  now-26h   the poll's own time, minus or plus a duration (ms): for timestamps like oracle_last_update
 *   start+1h       the test's start plus a duration
 * Unlike promtool, `axN` means N values, not N+1.
 */
import { parseDuration } from '../config/duration.js';

/** "This entity is missing from the poll." */
export const ABSENT: unique symbol = Symbol('absent');

/** One expanded value, resolved per poll: `now` is that poll's time, `start` the test's. */
export type Cell = (now: number, start: number) => unknown;

const NUMBER = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/;
const SEQ = /^([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)([-+])((?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)$/;
const TIME = /^(now|start)(?:([-+])(.+))?$/;
const REPEAT = /^(.+?)x(\d+)$/;

const constant = (v: unknown): Cell => () => v;

/** Adds b to a without float noise showing: 0.1 + 0.2 → 0.3. */
function add(a: number, b: number): number {
  return Number((a + b).toPrecision(12));
}

function single(token: string): Cell {
  if (token === '_') return constant(ABSENT);
  if (token === 'null') return constant(null);
  if (token === 'true' || token === 'false') return constant(token === 'true');
  if (NUMBER.test(token)) return constant(Number(token));
  const quoted = /^'(.*)'$/.exec(token) ?? /^"(.*)"$/.exec(token);
  if (quoted) return constant(quoted[1]);
  const time = TIME.exec(token);
  if (time) {
    const [, origin, sign, dur] = time;
    let offset = 0;
    if (dur !== undefined) {
      const ms = parseDuration(dur);
      if (ms === undefined) throw new Error(`'${token}': '${dur}' is not a duration (write it like 30s, 5m, 26h)`);
      offset = sign === '-' ? -ms : ms;
    }
    return origin === 'now' ? (now) => now + offset : (_now, start) => start + offset;
  }
  throw new Error(`'${token}' is not a value (a number, _, null, true, false, 'text', now-5m, start+1h, with xN to repeat)`);
}

function expandToken(token: string): Cell[] {
  const rep = REPEAT.exec(token);
  if (!rep) return [single(token)];
  const [, head = '', count] = rep;
  const n = Number(count);
  if (n < 1 || n > 100_000) throw new Error(`'${token}': repeat count must be between 1 and 100000`);
  const seq = SEQ.exec(head);
  if (seq) {
    const a = Number(seq[1]);
    const b = Number(seq[3]) * (seq[2] === '-' ? -1 : 1);
    return Array.from({ length: n }, (_, i) => constant(add(a, b * i)));
  }
  const cell = single(head);
  return Array.from({ length: n }, () => cell);
}

/** Expands a series: a notation string, or a YAML list of literal values (`_` still means missing). Throws with a message on a bad token. */
export function expandValues(values: string | number | boolean | null | readonly unknown[]): Cell[] {
  if (Array.isArray(values)) return values.map((v) => (v === '_' ? constant(ABSENT) : constant(v)));
  if (typeof values !== 'string') return [constant(values)];
  const tokens = values.trim().split(/\s+/).filter((t) => t !== '');
  return tokens.flatMap(expandToken);
}
