/** Loads the config: YAML (positions kept) → `${VAR}` from the environment → zod, then the rule files, each problem as file:line:col. */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { validateDetailed as validateCron } from 'node-cron';
import type { z } from 'zod';
import { ConfigError, type ConfigProblem } from '../errors.js';
import { buildRuleSchema } from '../rules/schema.js';
import { ruleKinds } from '../rules/registry.js';
import { configSchema, type ConfigFile } from './schema.js';
import { expandGlob } from './glob.js';
import { parseYamlFile, problemAt, type YamlFile } from './yaml-file.js';
import { describeIssue } from './issues.js';
import { closest, knownKeysAt } from './suggest.js';

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

/** Validates config text as if read from `file`; rule file patterns resolve against `dir`. */
export function loadConfigText(file: string, text: string, opts: LoadOptions & { dir?: string } = {}): Config {
  const env = opts.env ?? process.env;
  const dir = opts.dir ?? dirname(resolve(file));
  const yf = parseYamlFile(file, text, env);
  if (yf.problems.length) throw new ConfigError(yf.problems);
  const problems: ConfigProblem[] = [];

  const parsed = configSchema.safeParse(yf.value ?? {});
  if (!parsed.success) problems.push(...zodProblems(yf, [], parsed.error, configSchema, yf.value));
  const cfg = parsed.success ? parsed.data : undefined;

  const rules: LoadedRule[] = [];
  const ruleFiles: string[] = [];
  const raw = (yf.value ?? {}) as { rules?: { inline?: unknown; files?: unknown } };
  if (Array.isArray(raw.rules?.inline)) rules.push(...validateRules(yf, ['rules', 'inline'], raw.rules.inline, problems));
  const patterns = Array.isArray(raw.rules?.files) ? (raw.rules.files as unknown[]) : [];
  patterns.forEach((pattern, i) => {
    if (typeof pattern !== 'string') return;
    const matches = expandGlob(pattern, dir);
    if (matches.length === 0) problems.push(problemAt(yf, ['rules', 'files', i], `rule file pattern '${pattern}' matches no file`));
    for (const rf of matches) {
      ruleFiles.push(rf);
      rules.push(...loadRuleFile(rf, env, problems));
    }
  });

  if (cfg) problems.push(...crossCheck(yf, cfg, rules));
  const envShard = shardFromEnv(env, problems);
  if (problems.length) throw new ConfigError(problems);

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

/** Reads one rule file (`rules:` list), validating each rule against the rule schema. */
export function loadRuleFile(path: string, env: NodeJS.ProcessEnv, problems: ConfigProblem[]): LoadedRule[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    problems.push({ file: displayPath(path), line: 1, col: 1, message: `cannot read rule file: ${(err as NodeJS.ErrnoException).code ?? String(err)}` });
    return [];
  }
  const yf = parseYamlFile(displayPath(path), text, env);
  if (yf.problems.length) {
    problems.push(...yf.problems);
    return [];
  }
  const value = yf.value as { rules?: unknown } | null;
  if (!value || typeof value !== 'object' || !Array.isArray(value.rules)) {
    problems.push(problemAt(yf, [], "a rule file holds a 'rules:' list"));
    return [];
  }
  for (const key of Object.keys(value)) {
    if (key !== 'rules') problems.push(problemAt(yf, [], `unknown key '${key}' (a rule file holds only 'rules:')`, key));
  }
  return validateRules(yf, ['rules'], value.rules, problems);
}

function validateRules(yf: YamlFile, base: (string | number)[], list: unknown[], problems: ConfigProblem[]): LoadedRule[] {
  const out: LoadedRule[] = [];
  list.forEach((item, i) => {
    const path = [...base, i];
    const r = ruleSchema.safeParse(item);
    if (!r.success) {
      problems.push(...zodProblems(yf, path, r.error, ruleSchema, item));
      return;
    }
    const kind = ruleKinds.find((k) => k.kind === r.data.kind);
    for (const p of kind?.check?.(r.data as Record<string, unknown>) ?? []) problems.push(problemAt(yf, [...path, ...p.path], p.message));
    const pos = problemAt(yf, path, '');
    out.push({ rule: r.data, file: yf.file, line: pos.line, col: pos.col });
  });
  return out;
}

function zodProblems(yf: YamlFile, base: (string | number)[], error: z.ZodError, schema: z.ZodType, value: unknown): ConfigProblem[] {
  return error.issues.flatMap((issue) => {
    const rel = issue.path as (string | number)[];
    const path = [...base, ...rel];
    if (issue.code === 'unrecognized_keys') {
      const known = knownKeysAt(schema, value, rel);
      return issue.keys.map((k) => {
        const guess = closest(k, known.filter((c) => !issue.keys.includes(c)));
        return problemAt(yf, path, `unknown key '${k}'${guess ? ` (did you mean '${guess}'?)` : ''}`, k);
      });
    }
    return [problemAt(yf, path, describeIssue(issue, path, valueAt(value, rel)))];
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

function crossCheck(yf: YamlFile, cfg: ConfigFile, rules: LoadedRule[]): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const seenPolls = new Set<string>();
  cfg.polls.forEach((p, i) => {
    if (seenPolls.has(p.name)) problems.push(problemAt(yf, ['polls', i, 'name'], `duplicate poll name '${p.name}'`));
    seenPolls.add(p.name);
    const cron = validateCron(p.cron);
    if (!cron.valid) {
      const why = cron.errors.map((e) => `${e.field}: ${e.message}`).join('; ');
      problems.push(problemAt(yf, ['polls', i, 'cron'], `invalid cron expression '${p.cron}'${why ? ` (${why})` : ''}`));
    }
  });
  const seenRules = new Map<string, LoadedRule>();
  for (const lr of rules) {
    const prev = seenRules.get(lr.rule.name);
    if (prev) {
      problems.push({ file: lr.file, line: lr.line, col: lr.col, message: `duplicate rule name '${lr.rule.name}' (first at ${prev.file}:${prev.line}:${prev.col})` });
    }
    seenRules.set(lr.rule.name, lr);
    for (const n of lr.rule.notify ?? []) {
      if (!cfg.notifiers[n]) problems.push({ file: lr.file, line: lr.line, col: lr.col, message: `rule '${lr.rule.name}' notifies '${n}', which is not in notifiers` });
    }
  }
  cfg.routes.forEach((r, i) => {
    r.notify.forEach((n, j) => {
      if (!cfg.notifiers[n]) problems.push(problemAt(yf, ['routes', i, 'notify', j], `unknown notifier '${n}'`));
    });
    for (const [label, re] of Object.entries(r.match_re)) {
      try {
        new RegExp(re);
      } catch {
        problems.push(problemAt(yf, ['routes', i, 'match_re', label], `invalid regular expression '${re}'`));
      }
    }
  });
  const defaults = cfg.routes.filter((r) => r.default).length;
  if (defaults > 1) problems.push(problemAt(yf, ['routes'], 'more than one route has default: true'));
  for (const n of cfg.watchdog.notify ?? []) {
    if (!cfg.notifiers[n]) problems.push(problemAt(yf, ['watchdog', 'notify'], `unknown notifier '${n}'`));
  }
  if (cfg.shard && cfg.shard.index >= cfg.shard.total) problems.push(problemAt(yf, ['shard', 'index'], 'shard.index must be below shard.total'));
  return problems;
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

function collectSecrets(cfg: ConfigFile): string[] {
  const out: (string | undefined)[] = [cfg.source.api_key, cfg.server.token];
  for (const n of Object.values(cfg.notifiers)) {
    if (n.type === 'slack') out.push(n.webhook_url, n.token);
    if (n.type === 'email') out.push(n.smtp.pass);
    if (n.type === 'webhook') out.push(n.url, n.bearer_token, n.hmac_secret, ...Object.values(n.headers));
  }
  return out.filter((s): s is string => typeof s === 'string' && s.length > 0);
}
