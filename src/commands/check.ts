/** `lookout check -c FILE`: validates the config and every rule file; `--rules FILE` checks rule files alone, like `promtool check rules`. */
import { resolve } from 'node:path';
import { formatProblem, type ConfigProblem } from '../errors.js';
import { displayPath, loadConfig, loadRuleFile, type Config, type LoadedRule } from '../config/load.js';
import { checkRuleRefs, type RuleRef } from '../config/cross-check.js';
import { problemCount, reportConfigError, type Output } from './config-report.js';

/**
 * Loads the config for a command; when it is invalid, prints every problem as file:line:col, then `last` (given the
 * number of problems), and returns undefined — the command then exits 1.
 */
export function loadConfigOrReport(file: string, io: Output, last: (n: number) => string, env: NodeJS.ProcessEnv = process.env): Config | undefined {
  try {
    return loadConfig(file, { env });
  } catch (err) {
    return reportConfigError(err, io, last);
  }
}

/** Prints every problem as file:line:col and returns 1, or prints a summary and returns 0. */
export function runCheck(file: string, io: Output, env: NodeJS.ProcessEnv = process.env): number {
  const cfg = loadConfigOrReport(file, io, (n) => `${problemCount(n)} found`, env);
  if (!cfg) return 1;
  io.out(summarize(cfg));
  return 0;
}

/**
 * Checks rule files alone, without a config: each rule against its kind, and rule names unique across the files (the
 * notifiers a rule names are checked with the config, by `check -c`). Prints every problem as file:line:col.
 */
export function runCheckRules(files: readonly string[], io: Output, env: NodeJS.ProcessEnv = process.env): number {
  const problems: ConfigProblem[] = [];
  const refs: RuleRef[] = [];
  const perFile = files.map((f) => [f, loadRuleFile(resolve(f), env, problems, refs)] as [string, LoadedRule[]]);
  problems.push(...checkRuleRefs(refs));
  if (problems.length) {
    for (const p of problems) io.err(formatProblem(p));
    io.err(`${problemCount(problems.length)} found`);
    return 1;
  }
  for (const [f, rules] of perFile) io.out(`${f}: OK, ${rules.length} rule${rules.length === 1 ? '' : 's'}${rules.length ? `: ${rules.map((r) => r.rule.name).join(', ')}` : ''}`);
  return 0;
}

/** A short human summary of a valid config. */
export function summarize(cfg: Config): string {
  const lines = [`${displayPath(cfg.file)}: OK`];
  lines.push(`  polls (${cfg.polls.length}): ${cfg.polls.map((p) => `${p.name} [${p.kind}, ${p.cron}]`).join(', ')}`);
  const byFile = new Map<string, number>();
  for (const r of cfg.rules) byFile.set(r.file, (byFile.get(r.file) ?? 0) + 1);
  lines.push(`  rules (${cfg.rules.length}): ${[...byFile].map(([f, n]) => `${n} in ${f}`).join(', ') || 'none'}`);
  const notifiers = Object.entries(cfg.notifiers);
  lines.push(`  notifiers (${notifiers.length}): ${notifiers.map(([n, c]) => `${n} [${c.type}]`).join(', ') || 'none'}`);
  lines.push(`  routes: ${cfg.routes.length}`);
  return lines.join('\n');
}
