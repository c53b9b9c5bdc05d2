/** Label matchers as in Alertmanager: `name=value`, `name!=value`, `name=~regex`, `name!~regex` (regexes anchored). */
import { LookoutError } from '../errors.js';

/** The four matcher operators. */
export const MATCH_OPS = ['=', '!=', '=~', '!~'] as const;
/** One matcher operator. */
export type MatchOp = (typeof MATCH_OPS)[number];

/** One label matcher; a label that is absent reads as the empty string, as in Alertmanager. */
export interface Matcher {
  name: string;
  op: MatchOp;
  value: string;
}

const LABEL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const PARSE = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*(.*?)\s*$/;
const regexCache = new Map<string, RegExp>();

/** Compiles an anchored regular expression (cached); throws LookoutError E_BAD_REQUEST when it is invalid. */
export function anchoredRegex(pattern: string): RegExp {
  let re = regexCache.get(pattern);
  if (!re) {
    try {
      re = new RegExp(`^(?:${pattern})$`);
    } catch (err) {
      throw new LookoutError('E_BAD_REQUEST', `invalid regular expression '${pattern}': ${(err as Error).message}`, { cause: err });
    }
    if (regexCache.size > 1000) regexCache.clear();
    regexCache.set(pattern, re);
  }
  return re;
}

/** Parses `rule=~usdc-.*` into a Matcher; quotes around the value are removed. Throws E_BAD_REQUEST. */
export function parseMatcher(text: string): Matcher {
  const m = PARSE.exec(text);
  if (!m) {
    throw new LookoutError(
      'E_BAD_REQUEST',
      `invalid matcher '${text}': write it as label=value, label!=value, label=~regex or label!~regex`,
    );
  }
  let value = m[3]!;
  if (value.length >= 2 && ((value.startsWith('"') && value.endsWith('"')) || (value.startsWith("'") && value.endsWith("'")))) {
    value = value.slice(1, -1);
  }
  const matcher: Matcher = { name: m[1]!, op: m[2] as MatchOp, value };
  validateMatcher(matcher);
  return matcher;
}

/** Throws E_BAD_REQUEST unless the label name is valid and a regex value compiles. */
export function validateMatcher(m: Matcher): void {
  if (!LABEL_NAME.test(m.name)) throw new LookoutError('E_BAD_REQUEST', `invalid label name '${m.name}' in matcher`);
  if (!(MATCH_OPS as readonly string[]).includes(m.op)) throw new LookoutError('E_BAD_REQUEST', `invalid matcher operator '${m.op}'`);
  if (m.op === '=~' || m.op === '!~') anchoredRegex(m.value);
}

/** True when `labels` satisfy the matcher. */
export function matches(m: Matcher, labels: Readonly<Record<string, string>>): boolean {
  const v = labels[m.name] ?? '';
  switch (m.op) {
    case '=':
      return v === m.value;
    case '!=':
      return v !== m.value;
    case '=~':
      return anchoredRegex(m.value).test(v);
    case '!~':
      return !anchoredRegex(m.value).test(v);
  }
}

/** True when `labels` satisfy every matcher (an empty list matches nothing, so a silence can never mute everything by accident). */
export function matchesAll(list: readonly Matcher[], labels: Readonly<Record<string, string>>): boolean {
  return list.length > 0 && list.every((m) => matches(m, labels));
}

/** Formats a matcher the way it is written on the command line. */
export function formatMatcher(m: Matcher): string {
  return `${m.name}${m.op}${m.value}`;
}
