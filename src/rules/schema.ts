/** The rule schema: the keys every rule shares, merged with each kind's own parameters from the registry. */
import { z } from 'zod';
import { SEVERITIES, SOURCE_DOWN, WATCHDOG } from '../model.js';
import { duration } from '../config/duration-schema.js';
import { paramShape, type ParamShape } from './param-kit.js';
import { selectCheck } from './select.js';

const selectValue = z.union([z.string(), z.number(), z.boolean(), z.array(z.union([z.string(), z.number(), z.boolean()]))]);

/** Keys every rule has, whatever its kind (SPEC §3). */
export const ruleCommonShape = {
  name: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]+$/, 'rule names use letters, digits, _ . : - only')
    // A rule of that name would share the built-in alert's fingerprints and settings (the watchdog's entity is `lookout`).
    .refine((n) => n !== SOURCE_DOWN && n !== WATCHDOG, { message: `${SOURCE_DOWN} and ${WATCHDOG} are the names of lookout's built-in alerts; choose another` }),
  severity: z.enum(SEVERITIES).default('warning'),
  for: duration.default(0),
  keep_firing_for: duration.default(0),
  select: z
    .record(z.string(), selectValue)
    .superRefine((sel, ctx) => {
      for (const p of selectCheck(sel)) ctx.addIssue({ code: 'custom', path: p.path, message: p.message });
    })
    .default({}),
  labels: z.record(z.string(), z.string()).default({}),
  annotations: z.record(z.string(), z.string()).default({}),
  notify: z.array(z.string()).optional(),
  absent_for: z.int().min(1).default(3),
  enabled: z.boolean().default(true),
  flap_threshold: z.int().min(1).optional(),
  flap_window: duration.optional(),
  max_reading_age: duration.optional(),
};

/** What the config needs to know of a rule kind to validate a rule of it. */
export interface RuleKindSchema {
  kind: string;
  /** The kind's own parameters, built into a zod shape ({@link paramShape}) merged into the rule object. */
  params: ParamShape;
  /** Checks beyond the schema (e.g. clear_below < threshold, template fields); paths are relative to the rule. */
  check?(rule: Record<string, unknown>): Array<{ path: (string | number)[]; message: string }>;
}

const common = z.object(ruleCommonShape);
/** A validated rule: the common keys typed, the kind's own parameters as further keys. */
export type RuleBase = z.output<typeof common> & { kind: string; [param: string]: unknown };

/** Builds the discriminated union of all rule kinds; unknown keys are errors. */
export function buildRuleSchema(kinds: readonly RuleKindSchema[]): z.ZodType<RuleBase> {
  const options = kinds.map((k) => z.strictObject({ ...ruleCommonShape, ...paramShape(k.params), kind: z.literal(k.kind) }));
  return z.discriminatedUnion('kind', options as unknown as [z.ZodObject, ...z.ZodObject[]]) as unknown as z.ZodType<RuleBase>;
}
