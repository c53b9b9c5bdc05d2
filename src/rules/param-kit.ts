/**
 * The rule kinds' parameter schemas, built with zod on the config side. A kind module names its parameters with
 * functions of a {@link SchemaKit} ({@link ParamShape}); only the config's loading calls them ({@link paramShape}), so
 * the daemon, which runs the kinds over a config already loaded, never loads zod (B6s).
 */
import { z } from 'zod';
import { duration, positiveDuration } from '../config/duration-schema.js';

/** A number ≥ 0, with a message that says so. */
const nonNegative = z.number().min(0, { error: 'must be 0 or more' });
/** A number > 0, with a message that says so. */
const positive = z.number().gt(0, { error: 'must be greater than 0' });
/** A fraction in [0, 1] (utilization, APY thresholds): 0.95 = 95%. */
const fraction = z
  .number({ error: 'expected a number' })
  .min(0, { error: 'must be between 0 and 1 (a fraction: 0.95 = 95%)' })
  .max(1, { error: 'must be between 0 and 1 (a fraction: 0.95 = 95%)' });

/** What a kind's parameter schemas are built from: zod itself and the schemas several kinds share. */
export const schemaKit = { z, nonNegative, positive, fraction, duration, positiveDuration } as const;
/** The type of {@link schemaKit}: kind modules import it as a type only. */
export type SchemaKit = typeof schemaKit;

/** One parameter of a kind: its schema, built from the kit. */
export type ParamSchema = (kit: SchemaKit) => z.ZodType;
/** A kind's parameters by name (the keys are known without zod: templates and `--set` check names against them). */
export type ParamShape = Readonly<Record<string, ParamSchema>>;
/** The zod shape a {@link ParamShape} builds. */
export type BuiltShape<P extends ParamShape> = { -readonly [K in keyof P]: ReturnType<P[K]> };

const built = new WeakMap<ParamShape, z.ZodRawShape>();

/** The zod shape of a kind's parameters, built once per kind. */
export function paramShape<P extends ParamShape>(params: P): BuiltShape<P> {
  let shape = built.get(params);
  if (!shape) {
    shape = Object.fromEntries(Object.entries(params).map(([name, schema]) => [name, schema(schemaKit)]));
    built.set(params, shape);
  }
  return shape as BuiltShape<P>;
}
