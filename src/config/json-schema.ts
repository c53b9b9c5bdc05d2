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
  return withVarDef(acceptVars(json) as Record<string, unknown>, 'https://lookout.dev/schema/config.json', 'lookout configuration');
}

function withVarDef(json: Record<string, unknown>, $id: string, title: string): Record<string, unknown> {
  return { ...json, $defs: { ...(json.$defs as Record<string, unknown> | undefined), env_var: VAR_REFERENCE }, $id, title };
}

/** A value written as (or with) `${VAR}` / `${VAR:-default}`, which the loader replaces before validating. */
export const VAR_REFERENCE = { type: 'string', pattern: '\\$\\{[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\\}', description: 'read from the environment: ${VAR} or ${VAR:-default}' };

/**
 * Every scalar field of the schema also accepts `${VAR}` (a port, a URL, a number, a duration…), as the loader does:
 * an editor must not flag `listen: '${LOOKOUT_LISTEN:-127.0.0.1:9464}'`. A `const` (a poll's `kind`, a notifier's
 * `type`) stays as it is: it tells the alternatives of a union apart.
 */
export function acceptVars(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(acceptVars);
  if (node === null || typeof node !== 'object') return node;
  const n = node as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(n)) {
    if (k === 'properties' || k === '$defs' || k === 'definitions' || k === 'patternProperties') {
      out[k] = Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([name, sub]) => [name, acceptVars(sub)]));
    } else if (k === 'items' || k === 'additionalProperties' || k === 'anyOf' || k === 'oneOf' || k === 'allOf' || k === 'prefixItems') {
      out[k] = acceptVars(v);
    } else out[k] = v;
  }
  const scalar = ['string', 'number', 'integer', 'boolean'].includes(n.type as string) || (Array.isArray(n.enum) && n.const === undefined);
  if (!scalar || n.const !== undefined) return out;
  const { description, default: dflt, ...rest } = out;
  return { ...(description !== undefined ? { description } : {}), ...(dflt !== undefined ? { default: dflt } : {}), anyOf: [rest, { $ref: '#/$defs/env_var' }] };
}

/** JSON Schema of a rule file (`rules:` list). */
export function ruleFileJsonSchema(): Record<string, unknown> {
  const schema = z.strictObject({ rules: z.array(ruleSchema) });
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' }) as Record<string, unknown>;
  return withVarDef(acceptVars(json) as Record<string, unknown>, 'https://lookout.dev/schema/rules.json', 'lookout rule file');
}
