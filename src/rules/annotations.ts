/** Rendering a rule's annotations for one reading and verdict, and checking at load time that every name a template reads exists. */
import type { Reading, ReadingKind } from '../model.js';
import { aReading, fieldType, didYouMean, isKnownLabel, knownFields, knownLabels } from './fields.js';
import type { RuleKind, Verdict } from './rule-kind.js';
import type { RuleBase } from './schema.js';
import { ruleCommonKeys } from './common-keys.js';
import { compileTemplate, type CompiledTemplate } from './template.js';

/** Names every template may read whatever the kind: the verdict's values and the reading's identity. */
export const verdictNames = ['value', 'threshold', 'previous', 'entity', 'at', 'kind', 'reason'] as const;

const compiled = new Map<string, CompiledTemplate>();

function compileCached(text: string): CompiledTemplate {
  let c = compiled.get(text);
  if (!c) {
    c = compileTemplate(text);
    compiled.set(text, c);
  }
  return c;
}

/**
 * The names a template sees: the reading's fields, `labels.*`, `value`, `threshold`, `previous`, `entity`, `at`,
 * `kind` (of the reading), `reason` (of a wait/data_error verdict, or the context's), `rule.*` and the verdict's context keys
 * (which win over fields of the same name).
 */
export function templateScope(rule: RuleBase, reading: Reading, verdict?: Verdict): Record<string, unknown> {
  const scope: Record<string, unknown> = { ...reading.fields, labels: reading.labels, entity: reading.entity, at: reading.at, kind: reading.kind, rule };
  if (!verdict) return scope;
  if (verdict.status === 'wait' || verdict.status === 'data_error') {
    scope.reason = verdict.reason;
    scope.value = verdict.status === 'data_error' ? (verdict.value ?? null) : null;
  } else {
    Object.assign(scope, verdict.context ?? {});
    scope.value = verdict.value;
    scope.threshold = verdict.threshold;
    scope.previous = verdict.previous ?? null;
  }
  return scope;
}

/**
 * Renders every annotation of `rule` for a reading and its verdict; never throws. Given the alert's `current`
 * annotations, returns that same object when every text comes out as it is there.
 */
export function renderAnnotations(rule: RuleBase, reading: Reading, verdict?: Verdict, current?: Readonly<Record<string, string>>): Record<string, string> {
  const { keys, templates, names } = compiledOf(rule);
  const same = current !== undefined && countKeys(current) === keys.length;
  if (keys.length === 0) return same ? current! : {};
  const scope = scopeFor(names, rule, reading, verdict);
  // A new object only from the first text that differs from `current` (the texts before it are current's own).
  let out: Record<string, string> | undefined = same ? undefined : {};
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const text = templates[i]!.render(scope);
    if (out === undefined) {
      if (Object.prototype.propertyIsEnumerable.call(current, key) && current![key] === text) continue;
      out = {};
      for (let j = 0; j < i; j++) out[keys[j]!] = current![keys[j]!]!;
    }
    out[key] = text;
  }
  return out ?? current!;
}

/** The top-level names a rule's annotation templates read (`market` for `{{market.chain}}`, `labels` for `labels.chain`). */
export function annotationNames(rule: RuleBase): readonly string[] {
  return compiledOf(rule).names;
}

function countKeys(o: object): number {
  let n = 0;
  for (const _ in o) n++;
  return n;
}

/** A rule's annotations compiled: their keys and templates, and the top-level names they read (`labels` for `labels.chain`). */
interface CompiledAnnotations {
  keys: readonly string[];
  templates: readonly CompiledTemplate[];
  names: readonly string[];
}

/** By the rule's annotations object: a rule is judged thousands of times a poll, its annotations never change. */
const compiledAnnotations = new WeakMap<object, CompiledAnnotations>();
const NO_ANNOTATIONS: CompiledAnnotations = { keys: [], templates: [], names: [] };

function compiledOf(rule: RuleBase): CompiledAnnotations {
  const annotations = rule.annotations;
  if (!annotations) return NO_ANNOTATIONS;
  let c = compiledAnnotations.get(annotations);
  if (!c) {
    const entries = Object.entries(annotations);
    const templates = entries.map(([, text]) => compileCached(text));
    c = { keys: entries.map(([k]) => k), templates, names: [...new Set(templates.flatMap((t) => t.names.map((n) => n.split('.')[0]!)))] };
    compiledAnnotations.set(annotations, c);
  }
  return c;
}

const own = (o: object, k: string): boolean => Object.prototype.propertyIsEnumerable.call(o, k);

/**
 * {@link templateScope} holding only `names` (what the templates read): the same value under each of them, without
 * copying every field of the reading for each alert judged (2,000 active alerts a poll in an incident).
 */
function scopeFor(names: readonly string[], rule: RuleBase, reading: Reading, verdict?: Verdict): Record<string, unknown> {
  // No prototype: a field named __proto__ is a member here, as the spread in templateScope makes it.
  const scope: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const n of names) {
    // Each layer over the one before, as templateScope builds it: fields, the reading's identity, then the verdict's.
    const v = verdict === undefined ? MISSING : verdictValue(verdict, n);
    if (v !== MISSING) scope[n] = v;
    else if (n === 'labels') scope[n] = reading.labels;
    else if (n === 'entity') scope[n] = reading.entity;
    else if (n === 'at') scope[n] = reading.at;
    else if (n === 'kind') scope[n] = reading.kind;
    else if (n === 'rule') scope[n] = rule;
    else if (own(reading.fields, n)) scope[n] = reading.fields[n];
  }
  return scope;
}

const MISSING = Symbol('missing');

/** What the verdict's layer of {@link templateScope} holds under `name`, or {@link MISSING}. */
function verdictValue(verdict: Verdict, name: string): unknown {
  if (verdict.status === 'wait' || verdict.status === 'data_error') {
    if (name === 'reason') return verdict.reason;
    if (name === 'value') return verdict.status === 'data_error' ? (verdict.value ?? null) : null;
    return MISSING;
  }
  if (name === 'value') return verdict.value;
  if (name === 'threshold') return verdict.threshold;
  if (name === 'previous') return verdict.previous ?? null;
  return verdict.context !== undefined && own(verdict.context, name) ? verdict.context[name] : MISSING;
}

/** Whether `name` (as written in a template) is something a rule of `kind` reading `readingKinds` can show. */
function knownName(name: string, kind: Pick<RuleKind, 'context' | 'params'>, readingKinds: readonly ReadingKind[]): boolean {
  const [root = '', ...rest] = name.split('.');
  if ((verdictNames as readonly string[]).includes(name) || kind.context.includes(name)) return true;
  if (root === 'labels') return rest.length === 1 && readingKinds.some((k) => isKnownLabel(k, rest[0]!));
  if (root === 'rule') {
    const key = rest[0];
    if (!key) return true;
    const ruleKeys = new Set(['kind', ...ruleCommonKeys, ...Object.keys(kind.params)]);
    if (!ruleKeys.has(key)) return false;
    return rest.length === 1 || ['select', 'labels', 'annotations'].includes(key);
  }
  return readingKinds.some((k) => fieldType(k, name) !== undefined);
}

function candidateNames(kind: Pick<RuleKind, 'context'>, readingKinds: readonly ReadingKind[]): string[] {
  const names: string[] = [...verdictNames, ...kind.context];
  for (const k of readingKinds) {
    names.push(...Object.keys(knownFields[k] ?? {}));
    names.push(...(knownLabels[k] ?? []).map((l) => `labels.${l}`));
  }
  return names;
}

/** Template problems of a rule's annotations: syntax, unknown filters and unknown names (a name piped through `default` may be absent). */
export function annotationCheck(
  annotations: Record<string, unknown>,
  kind: Pick<RuleKind, 'context' | 'params'>,
  readingKinds: readonly ReadingKind[],
): Array<{ path: (string | number)[]; message: string }> {
  const out: Array<{ path: (string | number)[]; message: string }> = [];
  for (const [key, text] of Object.entries(annotations)) {
    if (typeof text !== 'string') continue;
    const t = compileTemplate(text);
    for (const e of t.errors) out.push({ path: ['annotations', key], message: `${key}: ${e}` });
    const seen = new Set<string>();
    for (const ref of t.refs) {
      if (ref.optional || seen.has(ref.name) || knownName(ref.name, kind, readingKinds)) continue;
      seen.add(ref.name);
      const on = readingKinds.length === 1 ? aReading(readingKinds[0]!) : `${readingKinds.join('/')} readings`;
      out.push({
        path: ['annotations', key],
        message: `${key}: unknown field '${ref.name}' in template for ${on}${didYouMean(ref.name, candidateNames(kind, readingKinds))}`,
      });
    }
  }
  return out;
}
