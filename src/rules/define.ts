/** `defineKind`: turns one kind module's spec into a {@link RuleKind}, adding the checks every kind shares (select keys, annotation templates). */
import type { z } from 'zod';
import type { ReadingKind } from '../model.js';
import { annotationCheck } from './annotations.js';
import { aReading } from './fields.js';
import type { EvalInput, JudgedVerdict, RuleKind, Verdict } from './rule-kind.js';
import type { BuiltShape, ParamShape } from './param-kit.js';
import type { RuleBase } from './schema.js';
import { selectKeyCheck } from './select.js';

/** A problem found by a kind's `check`, its path relative to the rule. */
export interface RuleProblem {
  path: (string | number)[];
  message: string;
}

/** A validated rule of a kind with parameters `P`. */
export type RuleOf<P extends ParamShape> = RuleBase & z.output<z.ZodObject<BuiltShape<P>>>;

/** What one kind module writes. */
export interface KindSpec<P extends ParamShape> {
  kind: string;
  description: string;
  reads: readonly ReadingKind[];
  context: readonly string[];
  /**
   * The kind's own parameters, each a function of the config side's kit returning its schema (./param-kit.ts): the
   * daemon runs the kind without zod. Write it before the members that take a `rule`: their `rule` is typed from it.
   */
  params: P;
  readingKinds?(rule: RuleOf<P>): readonly ReadingKind[];
  /** Fields the rule cannot judge without (see {@link RuleKind.needs}). */
  needs?(rule: RuleOf<P>): readonly string[];
  /** The fields of the judged reading evaluate reads (see {@link RuleKind.fields}). */
  fields?(rule: RuleOf<P>): readonly string[];
  /** Which extreme of a bucket is the worst per field (see {@link RuleKind.worst}). */
  worst?(rule: RuleOf<P>): Readonly<Record<string, 'min' | 'max'>>;
  /** Checks of the kind's own parameters beyond the schema (e.g. clear_below < threshold). */
  check?(rule: RuleOf<P>): RuleProblem[];
  evaluate(input: EvalInput<RuleOf<P>>): Verdict;
  /** The values of `context` for a breach or ok verdict (see {@link RuleKind.explain}). */
  explain?(input: EvalInput<RuleOf<P>>, verdict: JudgedVerdict): Record<string, unknown>;
}

/** Builds a rule kind whose `check` also validates the rule's select keys and annotation templates against what it reads. */
export function defineKind<P extends ParamShape>(spec: KindSpec<P>): RuleKind<RuleOf<P>> {
  const kind: RuleKind<RuleOf<P>> = {
    ...spec,
    check(raw) {
      const rule = raw as RuleOf<P>;
      const reads = spec.readingKinds?.(rule) ?? spec.reads;
      return [
        ...(spec.check?.(rule) ?? []),
        ...selectKeyCheck((rule.select ?? {}) as Record<string, unknown>, reads),
        ...annotationCheck((rule.annotations ?? {}) as Record<string, unknown>, spec, reads),
      ];
    },
  };
  return kind;
}

/** The reading kinds a rule judges (its kind's `readingKinds(rule)`, else `reads`). */
export function ruleReads(kind: RuleKind, rule: RuleBase): readonly ReadingKind[] {
  return kind.readingKinds?.(rule) ?? kind.reads;
}

/** A `wait` verdict for a reading of a kind the rule does not judge (the engine should not have asked). */
export function notMine(expected: string, reading: { kind: string }): Verdict {
  return { status: 'wait', reason: `not ${aReading(expected)} (got ${reading.kind})` };
}

/** A `data_error` verdict for a field the rule judges that the reading lacks (absent or null) or holds as something not a number. */
export function notANumber(field: string, raw: unknown): Verdict {
  return { status: 'data_error', reason: raw === null || raw === undefined ? `${field} missing` : `${field} not a number: ${String(raw)}` };
}
