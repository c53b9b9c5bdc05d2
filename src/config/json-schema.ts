/** The config's JSON Schema, generated from the zod schema, so editors (yaml-language-server) complete and check keys. */
import { z } from 'zod';
import { configSchema } from './schema.js';
import { ruleSchema } from './load.js';

/** JSON Schema (draft 2020-12) of the config file, with `rules.inline` items typed as rules. */
export function configJsonSchema(): Record<string, unknown> {
  const schema = configSchema.extend({
    rules: z
      .strictObject({ files: z.array(z.string()).optional(), inline: z.array(ruleSchema).optional() })
      .optional(),
  });
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' }) as Record<string, unknown>;
  return { ...json, $id: 'https://lookout.dev/schema/config.json', title: 'lookout configuration' };
}

/** JSON Schema of a rule file (`rules:` list). */
export function ruleFileJsonSchema(): Record<string, unknown> {
  const schema = z.strictObject({ rules: z.array(ruleSchema) });
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' }) as Record<string, unknown>;
  return { ...json, $id: 'https://lookout.dev/schema/rules.json', title: 'lookout rule file' };
}
