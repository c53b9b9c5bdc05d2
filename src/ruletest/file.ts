/** The rule-test file format (see docs/rule-tests.md) and loading it, with problems as file:line:col. */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { duration, positiveDuration } from '../config/duration-schema.js';
import { describeIssue } from '../config/issues.js';
import { loadRuleFile, ruleSchema } from '../config/load.js';
import { parseYamlFile, problemAt, type YamlFile } from '../config/yaml-file.js';
import type { ConfigProblem } from '../errors.js';
import { SEVERITIES } from '../model.js';
import { getRuleKind } from '../rules/registry.js';
import type { RuleBase } from '../rules/schema.js';

const readingKind = z.enum(['market', 'position', 'asset', 'holding', 'performance', 'benchmark']);
const scalar = z.union([z.string(), z.number(), z.boolean()]);

const seriesSchema = z.strictObject({
  entity: z.string().min(1),
  kind: readingKind.default('market'),
  /** Poll that returns it; default by kind (markets, positions, benchmarks, assets, holdings, performance). */
  poll: z.string().min(1).optional(),
  labels: z.record(z.string(), scalar).default({}),
  /** Fields every reading of the series has (nested maps as in the readings). */
  fields: z.record(z.string(), z.unknown()).default({}),
  /** Per field (dotted paths allowed, `at` for the reading's own time): one value per poll, in the expanding notation. */
  values: z.record(z.string(), z.union([scalar, z.null(), z.array(z.unknown())])).default({}),
  /** Or: fields from a time on, held until the next point; `absent: true` removes the entity from then on. */
  points: z.array(z.strictObject({ at: duration, fields: z.record(z.string(), z.unknown()).default({}), absent: z.boolean().default(false) })).default([]),
});

const expectedAlertSchema = z.strictObject({
  rule: z.string().min(1),
  entity: z.string().min(1),
  state: z.enum(['pending', 'firing', 'resolved', 'inactive']).default('firing'),
  flapping: z.boolean().optional(),
  /** A subset of the alert's labels. */
  labels: z.record(z.string(), scalar).optional(),
  /** The alert's annotations, exactly (every key given must match; keys not given are not checked). */
  annotations: z.record(z.string(), z.string()).optional(),
  value: z.number().optional(),
});

const expectationSchema = z.strictObject({
  at: duration,
  /** Only alerts of this rule are compared (default: every rule's). */
  rule: z.string().optional(),
  alerts: z.array(expectedAlertSchema).default([]),
});

const failedPollSchema = z.union([duration, z.strictObject({ poll: z.string().min(1), at: z.union([duration, z.array(duration)]) })]);

const testSchema = z.strictObject({
  name: z.string().min(1),
  /** Time between polls; default: the file's evaluation_interval. */
  interval: positiveDuration.optional(),
  start: z.string().optional(),
  series: z.array(seriesSchema).default([]),
  failed_polls: z.array(failedPollSchema).default([]),
  alert_expectations: z.array(expectationSchema).min(1),
});

const fileSchema = z.strictObject({
  rule_files: z.array(z.string()).default([]),
  rules: z.array(z.unknown()).default([]),
  evaluation_interval: positiveDuration.default(60_000),
  start: z.string().default('2025-01-15T00:00:00Z'),
  alerting: z
    .strictObject({
      flap_threshold: z.int().min(1).default(6),
      flap_window: positiveDuration.default(3_600_000),
      max_reading_age: positiveDuration.default(6 * 3_600_000),
    })
    .default({ flap_threshold: 6, flap_window: 3_600_000, max_reading_age: 6 * 3_600_000 }),
  source_down: z
    .strictObject({ after: z.int().min(1).default(3), severity: z.enum(SEVERITIES).default('warning') })
    .default({ after: 3, severity: 'warning' }),
  tests: z.array(testSchema).min(1),
});

/** One series of a test, as validated. */
export type SeriesSpec = z.output<typeof seriesSchema>;
/** One expected alert. */
export type ExpectedAlert = z.output<typeof expectedAlertSchema>;
/** One `alert_expectations` entry. */
export type Expectation = z.output<typeof expectationSchema>;
/** One test of a file. */
export type TestSpec = z.output<typeof testSchema>;

/** A loaded test file: its tests, the rules they run, and where each test starts in the file. */
export interface RuleTestFile {
  file: string;
  spec: z.output<typeof fileSchema>;
  rules: RuleBase[];
  /** Start time of the tests (ms), unless a test gives its own. */
  start: number;
}

/** Parses an ISO time for `start`; undefined when it is not one. */
export function parseStart(text: string): number | undefined {
  const t = Date.parse(text);
  return Number.isFinite(t) ? t : undefined;
}

function zodProblems(yf: YamlFile, base: (string | number)[], error: z.ZodError): ConfigProblem[] {
  return error.issues.map((issue) => {
    const path = [...base, ...(issue.path as (string | number)[])];
    if (issue.code === 'unrecognized_keys') return problemAt(yf, path, `unknown key '${issue.keys.join("', '")}'`, issue.keys[0]);
    return problemAt(yf, path, describeIssue(issue, path));
  });
}

/** Reads and validates a rule-test file and the rules it names; returns the problems instead when there are any. */
export function loadRuleTestFile(path: string, env: NodeJS.ProcessEnv): RuleTestFile | { problems: ConfigProblem[] } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    return { problems: [{ file: path, line: 1, col: 1, message: `cannot read test file: ${(err as NodeJS.ErrnoException).code ?? String(err)}` }] };
  }
  const yf = parseYamlFile(path, text, env);
  if (yf.problems.length) return { problems: yf.problems };
  const parsed = fileSchema.safeParse(yf.value ?? {});
  if (!parsed.success) return { problems: zodProblems(yf, [], parsed.error) };
  const spec = parsed.data;
  const problems: ConfigProblem[] = [];

  const rules: RuleBase[] = [];
  for (const rf of spec.rule_files) rules.push(...loadRuleFile(resolve(dirname(path), rf), env, problems).map((l) => l.rule as RuleBase));
  spec.rules.forEach((raw, i) => {
    const r = ruleSchema.safeParse(raw);
    if (!r.success) {
      problems.push(...zodProblems(yf, ['rules', i], r.error));
      return;
    }
    for (const p of getRuleKind(r.data.kind)?.check?.(r.data as Record<string, unknown>) ?? []) problems.push(problemAt(yf, ['rules', i, ...p.path], p.message));
    rules.push(r.data as RuleBase);
  });
  const names = new Set<string>();
  for (const r of rules) {
    if (names.has(r.name)) problems.push(problemAt(yf, ['rules'], `duplicate rule name '${r.name}'`));
    names.add(r.name);
  }
  if (rules.length === 0 && problems.length === 0) problems.push(problemAt(yf, [], "no rules to test: give 'rule_files' or 'rules'"));

  const start = parseStart(spec.start);
  if (start === undefined) problems.push(problemAt(yf, ['start'], `start: '${spec.start}' is not an ISO time like 2025-01-15T00:00:00Z`));
  spec.tests.forEach((t, i) => {
    if (t.start !== undefined && parseStart(t.start) === undefined) problems.push(problemAt(yf, ['tests', i, 'start'], `start: '${t.start}' is not an ISO time`));
    t.alert_expectations.forEach((e, j) => {
      for (const [k, a] of e.alerts.entries()) {
        if (!names.has(a.rule) && a.rule !== 'source_down') problems.push(problemAt(yf, ['tests', i, 'alert_expectations', j, 'alerts', k, 'rule'], `unknown rule '${a.rule}'`));
      }
      if (e.rule !== undefined && !names.has(e.rule) && e.rule !== 'source_down') problems.push(problemAt(yf, ['tests', i, 'alert_expectations', j, 'rule'], `unknown rule '${e.rule}'`));
    });
  });
  if (problems.length) return { problems };
  return { file: path, spec, rules, start: start! };
}
