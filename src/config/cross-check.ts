/**
 * Checks across the config's parts (duplicate names, cron expressions, notifier references, route regexes, shard).
 * They read the file's raw value, not the validated config, so they run on whatever parsed: a broken notifier or a
 * bad severity elsewhere must not hide a duplicate poll name (every problem in one run of `lookout check`).
 */
import { cronProblem } from '../scheduler/cron.js';
import type { ConfigProblem } from '../errors.js';
import { problemAt, type YamlFile } from './yaml-file.js';
import { closest } from './suggest.js';

/** What cross-checks need of one rule, valid or not, and where it was written. */
export interface RuleRef {
  name: string;
  /** The notifier names it gives, each where it is written. */
  notify: Array<{ name: string; line: number; col: number }>;
  file: string;
  line: number;
  col: number;
}

/** A rule item's name and notifier names, when it has a name at all; `path` locates the item in `yf`. */
export function ruleRef(yf: YamlFile, path: readonly (string | number)[], item: unknown): RuleRef | undefined {
  const r = record(item);
  if (typeof r.name !== 'string') return undefined;
  const at = problemAt(yf, path, '');
  const notify = list(r.notify).flatMap((n, j) => {
    if (typeof n !== 'string') return [];
    const p = problemAt(yf, [...path, 'notify', j], '');
    return [{ name: n, line: p.line, col: p.col }];
  });
  return { name: r.name, notify, file: yf.file, line: at.line, col: at.col };
}

/** Duplicate rule names across every rule file, and rules naming a notifier the config lacks (`notifiers` undefined: not checked). */
export function checkRuleRefs(rules: readonly RuleRef[], notifiers?: ReadonlySet<string>): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const seen = new Map<string, RuleRef>();
  for (const r of rules) {
    const prev = seen.get(r.name);
    if (prev) problems.push({ file: r.file, line: r.line, col: r.col, message: `duplicate rule name '${r.name}' (first at ${prev.file}:${prev.line}:${prev.col})` });
    else seen.set(r.name, r);
    for (const n of notifiers ? r.notify : []) {
      if (!notifiers!.has(n.name)) {
        problems.push({ file: r.file, line: n.line, col: n.col, message: `rule '${r.name}' notifies '${n.name}', which is not in notifiers${guess(n.name, notifiers!)}` });
      }
    }
  }
  return problems;
}

/** The config file's own cross-checks, plus {@link checkRuleRefs} for its rules. */
export function crossCheck(yf: YamlFile, rules: readonly RuleRef[]): ConfigProblem[] {
  const raw = record(yf.value);
  const problems: ConfigProblem[] = [];
  const notifiers = new Set(Object.keys(record(raw.notifiers)));
  const seenPolls = new Set<string>();
  list(raw.polls).forEach((item, i) => {
    const p = record(item);
    if (typeof p.name === 'string') {
      if (seenPolls.has(p.name)) problems.push(problemAt(yf, ['polls', i, 'name'], `duplicate poll name '${p.name}'`));
      seenPolls.add(p.name);
    }
    if (typeof p.cron !== 'string' || p.cron === '') return;
    const why = cronProblem(p.cron);
    if (why) problems.push(problemAt(yf, ['polls', i, 'cron'], why));
  });
  problems.push(...checkRuleRefs(rules, notifiers));
  const routes = list(raw.routes).map(record);
  routes.forEach((r, i) => {
    list(r.notify).forEach((n, j) => {
      if (typeof n === 'string' && !notifiers.has(n)) problems.push(problemAt(yf, ['routes', i, 'notify', j], `unknown notifier '${n}'${guess(n, notifiers)}`));
    });
    for (const [label, re] of Object.entries(record(r.match_re))) {
      if (typeof re !== 'string') continue;
      try {
        new RegExp(re);
      } catch {
        problems.push(problemAt(yf, ['routes', i, 'match_re', label], `invalid regular expression '${re}'`));
      }
    }
  });
  if (routes.filter((r) => r.default === true).length > 1) problems.push(problemAt(yf, ['routes'], 'more than one route has default: true'));
  for (const n of list(record(raw.watchdog).notify)) {
    if (typeof n === 'string' && !notifiers.has(n)) problems.push(problemAt(yf, ['watchdog', 'notify'], `unknown notifier '${n}'${guess(n, notifiers)}`));
  }
  const shard = record(raw.shard);
  if (typeof shard.index === 'number' && typeof shard.total === 'number' && shard.index >= shard.total) {
    problems.push(problemAt(yf, ['shard', 'index'], 'shard.index must be below shard.total'));
  }
  return problems;
}

function guess(name: string, known: ReadonlySet<string>): string {
  const g = closest(name, [...known]);
  return g ? ` — did you mean '${g}'?` : '';
}

function record(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

function list(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}
