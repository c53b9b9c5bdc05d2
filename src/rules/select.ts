/**
 * `select`: which readings a rule judges. Each key names a label, else a field (dotted paths allowed), else a key of
 * the nested `market` object, else `entity`; every key must match (AND). A value is a glob (picomatch, case-insensitive,
 * `*` does not cross `/`), a list is any-of, and numbers/booleans compare as their text (`true`, `18`).
 */
import picomatch from 'picomatch';
import type { Reading, ReadingKind } from '../model.js';
import { getPath } from './coerce.js';
import { didYouMean, knownFields, knownLabels } from './fields.js';

/** One select value as written in YAML. */
export type SelectScalar = string | number | boolean;
/** A rule's `select` map. */
export type Select = Record<string, SelectScalar | SelectScalar[]>;

type Matcher = (text: string) => boolean;
const patternCache = new Map<string, Matcher>();
const selectCache = new WeakMap<Select, Array<[string, Matcher]>>();

/** Distinct texts a select key remembers its answer for; texts past them (ids, not symbols) are tested each time. */
export const SELECT_MEMO_LIMIT = 256;

/** A pattern with no glob syntax in it (a symbol, a chain, an address). */
const LITERAL = /^[A-Za-z0-9_][A-Za-z0-9_.:-]*$/;

function matcher(pattern: string): Matcher {
  let m = patternCache.get(pattern);
  if (!m) {
    if (LITERAL.test(pattern)) {
      // The regex picomatch compiles a literal to (`/^(?:^(?:USDC)$)$/i`), without its per-call work around it: select
      // keys are tested for every reading of every rule (130,000 times a poll with the starter rules).
      const re = new RegExp(`^${pattern.replaceAll('.', '\\.')}$`, 'i');
      m = (text) => re.test(text);
    } else {
      const isMatch = picomatch(pattern, { nocase: true, dot: true });
      m = (text) => isMatch(text);
    }
    patternCache.set(pattern, m);
  }
  return m;
}

/**
 * Whether a text matches any of `matchers`, remembered per text: a key's values repeat from reading to reading (a
 * handful of chains and symbols across 10,000 markets), and a list of eleven symbols was eleven tests for most
 * readings (the shipped rules: ~27 ms of a calm poll's ~55 on a slow VM, issue 14, B1). The first
 * {@link SELECT_MEMO_LIMIT} texts a key sees are remembered; any other is tested each time it comes (a glob over
 * market ids), and the remembered ones stay.
 */
export function anyOf(matchers: readonly Matcher[]): Matcher {
  const test = (text: string): boolean => {
    for (const m of matchers) if (m(text)) return true;
    return false;
  };
  const memo = new Map<string, boolean>();
  return (text) => {
    let r = memo.get(text);
    if (r === undefined) {
      r = test(text);
      if (memo.size < SELECT_MEMO_LIMIT) memo.set(text, r);
    }
    return r;
  };
}

function compile(select: Select): Array<[string, Matcher]> {
  let c = selectCache.get(select);
  if (!c) {
    c = Object.entries(select).map(([key, v]) => [key, anyOf((Array.isArray(v) ? v : [v]).map((p) => matcher(String(p))))]);
    selectCache.set(select, c);
  }
  return c;
}

/** The text a select key sees in a reading: label, then field, then `market.<key>`, then `entity`; undefined when absent. */
export function selectValue(reading: Reading, key: string): string | undefined {
  const label = reading.labels[key];
  if (label !== undefined) return label;
  for (const v of [getPath(reading.fields, key), getPath(reading.fields, `market.${key}`)]) {
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return String(v);
  }
  if (key === 'entity') return reading.entity;
  return undefined;
}

/** Whether `reading` passes `select` (an empty select passes everything; a missing key fails). */
export function matchesSelect(select: Select, reading: Reading): boolean {
  return passes(compile(select), reading);
}

/** `select` compiled once, as a test of readings: what a rule's pass over a poll calls for each reading. */
export function selectTest(select: Select): (reading: Reading) => boolean {
  const c = compile(select);
  return c.length === 0 ? () => true : (reading) => passes(c, reading);
}

function passes(compiled: ReadonlyArray<[string, Matcher]>, reading: Reading): boolean {
  for (const [key, matches] of compiled) {
    const text = selectValue(reading, key);
    if (text === undefined || !matches(text)) return false;
  }
  return true;
}

/** Structural problems of a select map (an empty list or pattern matches nothing), paths relative to the select; messages without the key (the schema's issue formatter adds it). */
export function selectCheck(select: Record<string, unknown>): Array<{ path: (string | number)[]; message: string }> {
  const out: Array<{ path: (string | number)[]; message: string }> = [];
  for (const [key, v] of Object.entries(select)) {
    if (Array.isArray(v) && v.length === 0) out.push({ path: [key], message: 'an empty list matches nothing (leave the key out to match all)' });
    const values = Array.isArray(v) ? v : [v];
    values.forEach((p, i) => {
      if (p === '') out.push({ path: Array.isArray(v) ? [key, i] : [key], message: 'an empty pattern matches nothing' });
    });
  }
  return out;
}

/** Select keys that name nothing in readings of `kinds` (a typo would silently match nothing), paths relative to the rule. */
export function selectKeyCheck(select: Record<string, unknown>, kinds: readonly ReadingKind[]): Array<{ path: (string | number)[]; message: string }> {
  if (kinds.some((k) => !knownFields[k])) return [];
  const names = new Set<string>(['entity']);
  for (const k of kinds) {
    for (const l of knownLabels[k] ?? []) names.add(l);
    for (const f of Object.keys(knownFields[k] ?? {})) {
      names.add(f);
      if (f.startsWith('market.')) names.add(f.slice('market.'.length));
    }
  }
  return Object.keys(select)
    .filter((key) => !names.has(key))
    .map((key) => ({ path: ['select', key], message: `select: unknown key '${key}' for ${kinds.join('/')} readings${didYouMean(key, names)}` }));
}
