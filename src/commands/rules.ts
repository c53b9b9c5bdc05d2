/** `lookout rules`: the rules loaded — from the config and its rule files, or from a running daemon (`--url`). */
import { loadConfig } from '../config/load.js';
import { ruleJson, type RuleJson } from '../http/types.js';
import { daemonRequest, type DaemonTarget } from './daemon-api.js';
import { table } from './alerts.js';
import type { Output } from './config-report.js';

/** Options of the rules command. */
export interface RulesOptions extends Output {
  configFile: string;
  json: boolean;
  /** A running daemon to ask: the rules it has loaded now (after its latest reload). */
  target?: DaemonTarget;
}

/** Prints one line per rule (or JSON); returns the exit code. */
export async function runRulesCommand(o: RulesOptions): Promise<number> {
  const rules = o.target ? await daemonRequest<RuleJson[]>(o.target, 'GET', '/api/rules') : loadConfig(o.configFile).rules.map(ruleJson);
  if (o.json) {
    o.out(JSON.stringify(rules, null, 2));
    return 0;
  }
  if (rules.length === 0) {
    o.out('no rules loaded');
    return 0;
  }
  const rows = rules.map((r) => [r.name, r.kind, r.severity, r.for, r.enabled ? 'yes' : 'no', r.source]);
  o.out(table(['NAME', 'KIND', 'SEVERITY', 'FOR', 'ENABLED', 'SOURCE'], rows));
  return 0;
}
