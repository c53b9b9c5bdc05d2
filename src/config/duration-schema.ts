/** The config's duration schemas (zod): text like `30s` or `1h30m` (or 0), parsed to milliseconds by ./duration.ts. */
import { z } from 'zod';
import { parseDuration } from './duration.js';

/** A zod schema for a duration written as text (or 0); the parsed value is milliseconds. */
export const duration = z
  .union([z.string(), z.literal(0)])
  .transform((v, ctx) => {
    const ms = typeof v === 'number' ? 0 : parseDuration(v);
    if (ms === undefined) {
      ctx.addIssue({ code: 'custom', message: `invalid duration '${v}': write it like 30s, 5m, 2h or 7d` });
      return z.NEVER;
    }
    return ms;
  });

/** A duration that must be greater than zero. */
export const positiveDuration = duration.refine((ms) => ms > 0, { message: 'duration must be greater than 0' });
