/** Loads the config: YAML (positions kept) → `${VAR}` from the environment → zod, then the rule files, each problem as file:line:col. */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import type { z } from 'zod';
import { ConfigError, redact, type ConfigProblem } from '../errors.js';
import { buildRuleSchema } from '../rules/schema.js';
import { ruleKinds } from '../rules/registry.js';
import { configSchema, type ConfigFile } from './schema.js';
import { expandGlob } from './glob.js';
import { parseYamlFile, problemAt, type YamlFile } from './yaml-file.js';
import { describeIssue } from './issues.js';
import { closest, knownKeysAt } from './suggest.js';
import { crossCheck, ruleRef, type RuleRef } from './cross-check.js';
import { formatDuration } from './duration.js';

/** The rule schema assembled from the rule registry. */
export const ruleSchema = buildRuleSchema(ruleKinds);
/** One validated rule (durations in ms, defaults applied). */
export type RuleConfig = z.output<typeof ruleSchema>;

/** A rule with where it was written, so later problems can point at it. */
export interface LoadedRule {
  rule: RuleConfig;
  file: string;
  line: number;
  col: number;
}

/** The loaded config: the file's sections, the rules from every rule file, and the secrets to keep out of output. */
export interface Config extends Omit<ConfigFile, 'rules'> {
  /** Absolute path of the config file. */
  file: string;
  rules: LoadedRule[];
  /** Absolute paths of the rule files read (for reload-on-change). */
  ruleFiles: string[];
  /** Every secret value in the config: never to be printed. */
  secrets: string[];
}

/** Options of {@link loadConfig}. */
export interface LoadOptions {
  env?: NodeJS.ProcessEnv;
}

/** Reads and validates `file` and its rule files; throws {@link ConfigError} listing every problem found. */
export function loadConfig(file: string, opts: LoadOptions = {}): Config {
  const abs = resolve(file);
  let text: string;
  try {
    text = readFileSync(abs, 'utf8');
  } catch (err) {
    throw new ConfigError([{ file, line: 1, col: 1, message: `cannot read config: ${(err as NodeJS.ErrnoException).code ?? String(err)}` }]);
  }
  return loadConfigText(file, text, { ...opts, dir: dirname(abs) });
}

/**
 * Where a config comes from: the file, or `text` as if read from `file` (rule file patterns resolve against `dir`);
 * `env` stands for the process's environment when given. Plain data: a config loader process takes it as JSON.
 */
export interface ConfigSource {
  file: string;
  text?: string;
  dir?: string;
  env?: Record<string, string>;
}

/** Loads a {@link ConfigSource}: {@link loadConfig} of its file, or {@link loadConfigText} of its text. */
export function loadConfigSource(s: ConfigSource): Config {
  const opts = s.env ? { env: s.env } : {};
  return s.text === undefined ? loadConfig(s.file, opts) : loadConfigText(s.file, s.text, { ...opts, ...(s.dir ? { dir: s.dir } : {}) });
}

/** Validates config text as if read from `file`; rule file patterns resolve against `dir`. */
export function loadConfigText(file: string, text: string, opts: LoadOptions & { dir?: string } = {}): Config {
  const env = opts.env ?? process.env;
  const dir = opts.dir ?? dirname(resolve(file));
  const yf = parseYamlFile(file, text, env);
  if (!yf.parsed) throw new ConfigError(yf.problems);
  // Every check runs whatever else failed, so one run of `lookout check` shows every problem.
  const problems: ConfigProblem[] = [];

  const parsed = configSchema.safeParse(yf.value ?? {});
  if (!parsed.success) problems.push(...zodProblems(yf, [], parsed.error, configSchema, yf.value));
  const cfg = parsed.success ? parsed.data : undefined;

  const rules: LoadedRule[] = [];
  const refs: RuleRef[] = [];
  const ruleFiles: string[] = [];
  const raw = (yf.value ?? {}) as { rules?: { inline?: unknown; files?: unknown } };
  if (Array.isArray(raw.rules?.inline)) rules.push(...validateRules(yf, ['rules', 'inline'], raw.rules.inline, problems, refs));
  const patterns = Array.isArray(raw.rules?.files) ? (raw.rules.files as unknown[]) : [];
  patterns.forEach((pattern, i) => {
    if (typeof pattern !== 'string') return;
    const matches = expandGlob(pattern, dir);
    if (matches.length === 0) problems.push(problemAt(yf, ['rules', 'files', i], `rule file pattern '${pattern}' matches no file`));
    for (const rf of matches) {
      ruleFiles.push(rf);
      rules.push(...loadRuleFile(rf, env, problems, refs));
    }
  });

  problems.push(...crossCheck(yf, refs));
  if (cfg) problems.push(...checkRawRetention(yf, cfg.storage.raw_retention, rules));
  const envShard = shardFromEnv(env, problems);
  if (problems.length || yf.problems.length) {
    // A secret pasted (or interpolated) into a key where it fails validation would be quoted back: not in a message.
    const secrets = collectSecrets(yf.value);
    const all = inFileOrder(withoutEcho([...yf.problems, ...problems], yf.problems));
    throw new ConfigError(all.map((p) => ({ ...p, message: redact(p.message, secrets) })));
  }

  const c = envShard ? { ...cfg!, shard: envShard } : cfg!;
  const storagePath = c.storage.path === ':memory:' || isAbsolute(c.storage.path) ? c.storage.path : resolve(dir, c.storage.path);
  return {
    ...c,
    storage: { ...c.storage, path: storagePath },
    source: { ...c.source, catalog_url: c.source.catalog_url ?? c.source.base_url },
    file: resolve(file),
    rules,
    ruleFiles,
    secrets: collectSecrets(c),
  };
}

/**
 * Reads one rule file (`rules:` list), validating each rule against the rule schema; problems go to `problems`, and
 * every named rule (valid or not) to `refs` for the cross-checks.
 */
export function loadRuleFile(path: string, env: NodeJS.ProcessEnv, problems: ConfigProblem[], refs: RuleRef[] = []): LoadedRule[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    problems.push({ file: displayPath(path), line: 1, col: 1, message: `cannot read rule file: ${(err as NodeJS.ErrnoException).code ?? String(err)}` });
    return [];
  }
  const yf = parseYamlFile(displayPath(path), text, env);
  if (!yf.parsed) {
    problems.push(...yf.problems);
    return [];
  }
  const found: ConfigProblem[] = [];
  const rules = readRules(yf, found, refs);
  problems.push(...withoutEcho([...yf.problems, ...found], yf.problems));
  return rules;
}

function readRules(yf: YamlFile, problems: ConfigProblem[], refs: RuleRef[]): LoadedRule[] {
  const value = yf.value as { rules?: unknown } | null;
  if (!value || typeof value !== 'object' || !Array.isArray(value.rules)) {
    problems.push(problemAt(yf, [], "a rule file holds a 'rules:' list"));
    return [];
  }
  for (const key of Object.keys(value)) {
    if (key !== 'rules') problems.push(problemAt(yf, [], `unknown key '${key}' (a rule file holds only 'rules:')`, key));
  }
  return validateRules(yf, ['rules'], value.rules, problems, refs);
}

/** Problems grouped by file (in the order the files were read), each file's by line and column. */
function inFileOrder(problems: ConfigProblem[]): ConfigProblem[] {
  const files = [...new Set(problems.map((p) => p.file))];
  return [...problems].sort((a, b) => files.indexOf(a.file) - files.indexOf(b.file) || a.line - b.line || a.col - b.col);
}

/**
 * Drops the problems a reported one already explains: an unset `${VAR}` reads as empty, so the schema's complaint
 * about that same value (an empty URL) says nothing new.
 */
function withoutEcho(problems: ConfigProblem[], causes: readonly ConfigProblem[]): ConfigProblem[] {
  const at = new Set(causes.map((p) => `${p.file}:${p.line}:${p.col}`));
  return problems.filter((p) => causes.includes(p) || !at.has(`${p.file}:${p.line}:${p.col}`));
}

function validateRules(yf: YamlFile, base: (string | number)[], list: unknown[], problems: ConfigProblem[], refs: RuleRef[]): LoadedRule[] {
  const out: LoadedRule[] = [];
  list.forEach((item, i) => {
    const path = [...base, i];
    const at = problemAt(yf, path, '');
    const ref = ruleRef(yf, path, item);
    if (ref) refs.push(ref);
    const r = ruleSchema.safeParse(item);
    if (!r.success) {
      problems.push(...zodProblems(yf, path, r.error, ruleSchema, item));
      return;
    }
    const kind = ruleKinds.find((k) => k.kind === r.data.kind);
    for (const p of kind?.check?.(r.data as Record<string, unknown>) ?? []) problems.push(problemAt(yf, [...path, ...p.path], p.message));
    out.push({ rule: r.data, file: yf.file, line: at.line, col: at.col });
  });
  return out;
}

function zodProblems(yf: YamlFile, base: (string | number)[], error: z.ZodError, schema: z.ZodType, value: unknown): ConfigProblem[] {
  // A typo (`windw:`) is one mistake: "unknown key 'windw' — did you mean 'window'?", not also "missing 'window'".
  const explained = new Set<string>();
  const unknown = error.issues.flatMap((issue) => {
    if (issue.code !== 'unrecognized_keys') return [];
    const rel = issue.path as (string | number)[];
    const known = knownKeysAt(schema, value, rel).filter((c) => !issue.keys.includes(c));
    return issue.keys.map((k) => {
      const guess = closest(k, known);
      if (guess) explained.add(JSON.stringify([...rel, guess]));
      return { issue, problem: problemAt(yf, [...base, ...rel], `unknown key '${k}'${guess ? ` — did you mean '${guess}'?` : ''}`, k) };
    });
  });
  return error.issues.flatMap((issue) => {
    if (issue.code === 'unrecognized_keys') return unknown.filter((u) => u.issue === issue).map((u) => u.problem);
    const rel = issue.path as (string | number)[];
    const input = valueAt(value, rel);
    if (input === undefined && explained.has(JSON.stringify(rel))) return [];
    return [problemAt(yf, [...base, ...rel], describeIssue(issue, [...base, ...rel], input))];
  });
}

/** A path as a person would type it: relative to the working directory when inside it. */
export function displayPath(p: string): string {
  const rel = relative(process.cwd(), p);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : p;
}

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let v = value;
  for (const seg of path) v = v && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[seg] : undefined;
  return v;
}

/**
 * `LOOKOUT_SHARD_INDEX` and `LOOKOUT_SHARD_TOTAL` (both, or neither) replace the file's `shard`, so identical replicas
 * can share one config: the index may be a number or a StatefulSet pod name ending in its ordinal (`lookout-2` → 2).
 */
export function shardFromEnv(env: NodeJS.ProcessEnv, problems: ConfigProblem[]): { index: number; total: number } | undefined {
  const rawIndex = env.LOOKOUT_SHARD_INDEX?.trim();
  const rawTotal = env.LOOKOUT_SHARD_TOTAL?.trim();
  if (!rawIndex && !rawTotal) return undefined;
  const at = (message: string) => problems.push({ file: '(environment)', line: 1, col: 1, message });
  if (!rawIndex || !rawTotal) {
    at('LOOKOUT_SHARD_INDEX and LOOKOUT_SHARD_TOTAL go together: set both or neither');
    return undefined;
  }
  const total = /^\d+$/.test(rawTotal) ? Number(rawTotal) : NaN;
  const m = /(?:^|-)(\d+)$/.exec(rawIndex);
  const index = m ? Number(m[1]) : NaN;
  if (!(total >= 1)) at(`LOOKOUT_SHARD_TOTAL must be a whole number of replicas (1 or more), got '${rawTotal}'`);
  if (Number.isNaN(index)) at(`LOOKOUT_SHARD_INDEX must be a number or a pod name ending in its ordinal (lookout-2), got '${rawIndex}'`);
  else if (total >= 1 && index >= total) at(`LOOKOUT_SHARD_INDEX ${index} must be below LOOKOUT_SHARD_TOTAL ${total}`);
  return total >= 1 && !Number.isNaN(index) && index < total ? { index, total } : undefined;
}

/**
 * The secret values a config holds (API key, server token, notifier URLs, tokens and passwords), read off the
 * document whether or not it validated: a problem message must not quote one, even where it sits in the wrong key.
 */
function collectSecrets(doc: unknown): string[] {
  const obj = (v: unknown) => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
  const d = obj(doc);
  const out: unknown[] = [obj(d.source).api_key, obj(d.server).token];
  for (const n of Object.values(obj(d.notifiers))) {
    const c = obj(n);
    out.push(c.webhook_url, c.token, c.url, c.bearer_token, c.hmac_secret, obj(c.smtp).pass, ...Object.values(obj(c.headers)));
  }
  return out.filter((s): s is string => typeof s === 'string' && s.length > 0);
}

/**
 * A rule that looks back (`window`) further than full-resolution history reaches would judge 5-minute buckets live: the
 * config must keep raw history at least that long.
 */
function checkRawRetention(yf: YamlFile, raw: number, rules: readonly LoadedRule[]): ConfigProblem[] {
  const longest = rules.reduce<LoadedRule | undefined>((best, r) => {
    const w = (r.rule as { window?: unknown }).window;
    return typeof w === 'number' && w > raw && w > ((best?.rule as { window?: number } | undefined)?.window ?? 0) ? r : best;
  }, undefined);
  if (!longest) return [];
  const w = (longest.rule as unknown as { window: number }).window;
  const written = (yf.value as { storage?: { raw_retention?: unknown } } | null)?.storage?.raw_retention !== undefined;
  const at = problemAt(yf, written ? ['storage', 'raw_retention'] : [], '');
  return [{
    ...at,
    message:
      `storage.raw_retention (${formatDuration(raw)}${written ? '' : ', the default'}) is shorter than the window of rule '${longest.rule.name}' ` +
      `(${formatDuration(w)}, ${longest.file}:${longest.line}:${longest.col}): it would judge 5-minute buckets; set raw_retention to ${formatDuration(w)} or more`,
  }];
}
