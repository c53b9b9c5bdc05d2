/**
 * The committed JSON Schema, judged by a real JSON Schema validator (ajv, draft 2020-12) as an editor's
 * yaml-language-server would: config.example.yaml validates as shipped and with every commented example switched
 * on (`${VAR}` kept as written, as an editor sees it), the shipped rule files validate against the rule-file schema,
 * and the schema still refuses what the loader refuses.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { ruleFileJsonSchema } from '../../src/config/json-schema.js';
import { uncommentExamples } from '../config-example-docs.js';

const ajv = new Ajv2020({ allErrors: true, strict: false });
const validate = ajv.compile(JSON.parse(readFileSync('lookout.schema.json', 'utf8')) as object);
const errorsOf = (value: unknown) => (validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`));
const example = readFileSync('config.example.yaml', 'utf8');

describe('lookout.schema.json with ajv', () => {
  it('accepts config.example.yaml as shipped (its ${VAR:-default} values included)', () => {
    expect(example).toContain("${LOOKOUT_LISTEN:-127.0.0.1:9464}");
    expect(errorsOf(YAML.parse(example))).toEqual([]);
  });

  it('accepts config.example.yaml with every commented example switched on', () => {
    const on = uncommentExamples(example);
    expect(on).not.toBe(example);
    expect(errorsOf(YAML.parse(on))).toEqual([]);
  });

  it.each([
    ['listen', { server: { listen: '${LOOKOUT_LISTEN}' } }],
    ['a number', { source: { base_url: 'http://x.test', retries: '${RETRIES:-3}' } }],
    ['a duration', { source: { base_url: 'http://x.test', timeout: '${TIMEOUT}' } }],
    ['a URL with a variable inside', { source: { base_url: 'https://${DATA_HOST}/v1' } }],
  ])('accepts ${VAR} in %s', (_name, cfg) => {
    const base = { source: { base_url: 'http://x.test' }, polls: [{ name: 'm', kind: 'metrics', cron: '* * * * *' }] };
    expect(errorsOf({ ...base, ...cfg })).toEqual([]);
  });

  it.each([
    ['a malformed listen', { server: { listen: 'localhost' } }, /listen/],
    ['an unknown key', { sorce: {} }, /additional properties/],
    ['retries as text', { source: { base_url: 'http://x.test', retries: 'three' } }, /retries/],
    ['an unknown poll kind', { polls: [{ name: 'p', kind: 'prices', cron: '* * * * *' }] }, /polls\/0/],
  ])('still refuses %s', (_name, cfg, where) => {
    expect(errorsOf(cfg).join('\n')).toMatch(where);
  });

  it('accepts the shipped rule files against the rule-file schema', () => {
    const validateRules = ajv.compile(ruleFileJsonSchema());
    for (const f of readdirSync('rules').filter((n) => n.endsWith('.yaml'))) {
      const ok = validateRules(YAML.parse(readFileSync(join('rules', f), 'utf8')));
      expect(ok ? [] : validateRules.errors, f).toEqual([]);
    }
  });
});
