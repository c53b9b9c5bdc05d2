/** The keys every rule has, without their zod schemas (./schema.ts): the daemon's modules read the names only. */
import type { ruleCommonShape } from './schema.js';

/** The keys of {@link ruleCommonShape} (SPEC §3): annotation templates may read them as `rule.<key>`. */
export const ruleCommonKeys = [
  'name',
  'severity',
  'for',
  'keep_firing_for',
  'select',
  'labels',
  'annotations',
  'notify',
  'absent_for',
  'enabled',
  'flap_threshold',
  'flap_window',
  'max_reading_age',
] as const satisfies ReadonlyArray<keyof typeof ruleCommonShape>;

// Every key of the schema is listed, checked at build time.
type Missing = Exclude<keyof typeof ruleCommonShape, (typeof ruleCommonKeys)[number]>;
const _everyKeyListed: [Missing] extends [never] ? true : Missing = true;
void _everyKeyListed;
