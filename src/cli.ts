#!/usr/bin/env node
/** The `lookout` command line: parses arguments and hands each command to its module. Wiring only. */
import { Command, Option } from 'commander';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { applyDaemonHeapSettings } from './heap-growth.js';

const pkg = JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), '..', 'package.json'), 'utf8')) as { version: string };
// A reader that stops early (`lookout backtest … | head`) closes the pipe: stop quietly, as other Unix tools do.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(0);
  throw e;
});
const out = (line: string) => process.stdout.write(line + '\n');
const err = (line: string) => process.stderr.write(line + '\n');
const io = { out, err };
const CONFIG_DEFAULT = 'config.yaml';

/** `--url` and `--token` of the commands that can talk to a running daemon instead of its DB file. */
function daemonOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option('--url <url>', "a running daemon's base URL, e.g. http://127.0.0.1:9464 (default: the DB file the config names)").env('LOOKOUT_URL'))
    .addOption(new Option('--token <token>', "the daemon's server.token, when it has one").env('LOOKOUT_TOKEN'));
}

/** Runs a command body and turns its result into the process exit code; unexpected errors print one line, no stack. */
async function exit(body: () => Promise<number> | number): Promise<void> {
  try {
    process.exitCode = await body();
  } catch (e) {
    const code = (e as { code?: string }).code;
    err(`lookout: ${e instanceof Error ? e.message : String(e)}${code ? ` (${code})` : ''}`);
    if (process.env.LOOKOUT_DEBUG) err(String((e as Error).stack));
    process.exitCode = 2;
  }
}

const program = new Command('lookout')
  .description('Alerting daemon for DeFi lending markets, positions and benchmark rates.')
  .version(pkg.version)
  .showHelpAfterError();

program
  .command('run')
  .description('run the daemon: poll, evaluate rules, notify, serve /metrics')
  .option('-c, --config <file>', 'config file', CONFIG_DEFAULT)
  .action((o: { config: string }) =>
    exit(async () => {
      // Process-wide V8 settings, before the daemon's modules load (src/heap-growth.ts).
      applyDaemonHeapSettings();
      return (await import('./commands/run.js')).runDaemonCommand(o.config, { ...io, version: pkg.version });
    }),
  );

program
  .command('demo')
  .description('start the embedded simulator and the daemon against it: real alerts within a minute, no API key')
  .option('--duration <duration>', 'stop by itself after this long (e.g. 60s)')
  .option('--scenario <name>', 'simulator scenario', 'demo')
  .option('--slack-webhook <url>', 'also send the alerts to this Slack incoming webhook')
  .option('--port <port>', 'metrics/status port (default 9464 or the next free one)')
  .option('--db <file>', 'keep the database in this file (default: a temp file removed on exit)')
  .action((o: { duration?: string; scenario: string; slackWebhook?: string; port?: string; db?: string }) =>
    exit(async () => {
      applyDaemonHeapSettings();
      return (await import('./commands/demo.js')).runDemoCommand({ ...o, ...io, version: pkg.version });
    }),
  );

program
  .command('check')
  .description('validate the config and every rule file, every problem in one run as file:line:col')
  .option('-c, --config <file>', 'config file', CONFIG_DEFAULT)
  .option('--rules <file>', 'check this rule file alone instead, like promtool check rules (repeatable)', collect, [])
  .action((o: { config: string; rules: string[] }) =>
    exit(async () => {
      const m = await import('./commands/check.js');
      return o.rules.length ? m.runCheckRules(o.rules, io) : m.runCheck(o.config, io);
    }),
  );

program
  .command('probe')
  .description('read-only: one page of every configured poll from the service; how each field was read')
  .option('-c, --config <file>', 'config file', CONFIG_DEFAULT)
  .option('--json', 'print the report as JSON')
  .action((o: { config: string; json?: boolean }) => exit(async () => (await import('./commands/probe.js')).runProbe(o.config, o, io)));

program
  .command('test')
  .description('run rule unit tests written in YAML')
  .argument('<files...>', 'rule test files')
  .option('--run <name>', 'only the tests whose name is this, or matches it as a regular expression')
  .action((files: string[], o: { run?: string }) =>
    exit(async () => (await import('./ruletest/index.js')).runTestCommand(files, { out, ...(o.run !== undefined ? { run: o.run } : {}) })),
  );

program
  .command('backtest')
  .description('replay stored readings through the rules and show what would have fired')
  .option('-c, --config <file>', 'config file', CONFIG_DEFAULT)
  .requiredOption('--from <time>', 'start: ISO time, or a duration ago like 7d')
  .option('--to <time>', 'end: ISO time, or a duration ago (default now)')
  .option('--rule <name>', 'only this rule')
  .option('--set <rule.param=value>', 'run again with a changed parameter, side by side', collect, [])
  .option('--json', 'machine-readable output')
  .option('--html <file>', 'also write a self-contained HTML report with a chart per entity that fired')
  .action((o: { config: string; from: string; to?: string; rule?: string; set: string[]; json?: boolean; html?: string }) =>
    exit(async () =>
      (await import('./backtest/index.js')).runBacktestCommand({
        configFile: o.config,
        from: o.from,
        to: o.to ?? 'now',
        ...(o.rule ? { rule: o.rule } : {}),
        set: o.set,
        json: Boolean(o.json),
        ...(o.html ? { html: o.html } : {}),
        out,
        err,
        isTTY: Boolean(process.stderr.isTTY),
      }),
    ),
  );

program
  .command('render')
  .description('print the message each notifier would send for a reading, without sending')
  .option('-c, --config <file>', 'config file', CONFIG_DEFAULT)
  .requiredOption('--rule <name>', 'rule name')
  .requiredOption('--fixture <file>', 'a reading as YAML or JSON')
  .action((o: { config: string; rule: string; fixture: string }) =>
    exit(async () => (await import('./notify/render.js')).runRenderCommand({ configFile: o.config, rule: o.rule, fixture: o.fixture, out: process.stdout, err: process.stderr })),
  );

type DaemonOpts = { url?: string; token?: string };
/** `{ target }` when --url (or LOOKOUT_URL) names a running daemon, else nothing: the command uses the DB file. */
const daemonTargetOf = async (o: DaemonOpts) => {
  const target = (await import('./commands/daemon-api.js')).daemonTarget(o);
  return target ? { target } : {};
};

daemonOptions(
  program
    .command('alerts')
    .description('current alerts: rule, entity, state, since, last notified — from the DB file, or a running daemon with --url')
    .option('-c, --config <file>', 'config file', CONFIG_DEFAULT)
    .option('--match <matcher>', 'only alerts whose labels match: name=value, name!=value, name=~regex, name!~regex (repeatable)', collect, [])
    .option('--rule <name>', 'only this rule')
    .option('--severity <severity>', 'only this severity: info, warning or critical')
    .option('--json', 'machine-readable output (times as ISO 8601)')
    .option('--all', 'include resolved alerts'),
).action((o: { config: string; match: string[]; rule?: string; severity?: string; json?: boolean; all?: boolean; url?: string; token?: string }) =>
  exit(async () =>
    (await import('./commands/alerts.js')).runAlertsCommand({
      configFile: o.config,
      json: Boolean(o.json),
      all: Boolean(o.all),
      match: o.match,
      ...(o.rule !== undefined ? { rule: o.rule } : {}),
      ...(o.severity !== undefined ? { severity: o.severity } : {}),
      ...(await daemonTargetOf(o)),
      ...io,
    }),
  ),
);

daemonOptions(
  program
    .command('rules')
    .description('the rules loaded: name, kind, severity, for, where written — from the config, or a running daemon with --url')
    .option('-c, --config <file>', 'config file', CONFIG_DEFAULT)
    .option('--json', 'machine-readable output'),
).action((o: { config: string; json?: boolean; url?: string; token?: string }) =>
  exit(async () => (await import('./commands/rules.js')).runRulesCommand({ configFile: o.config, json: Boolean(o.json), ...(await daemonTargetOf(o)), ...io })),
);

const silence = program.command('silence').description('mute notifications by label matchers (evaluation goes on)');
daemonOptions(
  silence
    .command('add')
    .description('add a silence; prints its id')
    .option('-c, --config <file>', 'config file', CONFIG_DEFAULT)
    .requiredOption('--match <matcher>', '(required) label matcher: name=value, name!=value, name=~regex, name!~regex (repeatable)', collect, [])
    .requiredOption('--for <duration>', '(required) how long, e.g. 2h')
    .requiredOption('--comment <text>', '(required) why')
    .option('--author <name>', 'who (default: your login name)'),
).action((o: { config: string; match: string[]; for: string; comment: string; author?: string } & DaemonOpts) =>
  exit(async () =>
    (await import('./silences/cli.js')).silenceAddCommand({
      configFile: o.config,
      match: o.match,
      for: o.for,
      comment: o.comment,
      ...(o.author !== undefined ? { author: o.author } : {}),
      ...(await daemonTargetOf(o)),
      out: process.stdout,
      err: process.stderr,
    }),
  ),
);
daemonOptions(
  silence
    .command('list')
    .description('list silences')
    .option('-c, --config <file>', 'config file', CONFIG_DEFAULT)
    .option('--all', 'include expired silences')
    .option('--json', 'machine-readable output (times as ISO 8601)'),
).action((o: { config: string; all?: boolean; json?: boolean } & DaemonOpts) =>
  exit(async () =>
    (await import('./silences/cli.js')).silenceListCommand({
      configFile: o.config,
      all: Boolean(o.all),
      json: Boolean(o.json),
      ...(await daemonTargetOf(o)),
      out: process.stdout,
      err: process.stderr,
    }),
  ),
);
daemonOptions(
  silence
    .command('expire')
    .description('expire a silence now')
    .argument('<id>', 'silence id')
    .option('-c, --config <file>', 'config file', CONFIG_DEFAULT),
).action((id: string, o: { config: string } & DaemonOpts) =>
  exit(async () =>
    (await import('./silences/cli.js')).silenceExpireCommand({ configFile: o.config, id, ...(await daemonTargetOf(o)), out: process.stdout, err: process.stderr }),
  ),
);

program
  .command('simulate')
  .description('run the data-service simulator alone, to try configs against')
  .addOption(new Option('--port <port>', 'port of the whole interface, catalog included (0 = any free one)').default('8080'))
  .option('--catalog-port <port>', 'also serve the catalog alone on this port')
  .option('--scenario <name>', 'scenario (default calm; incidents with --history)')
  .option('--seed <n>', 'seed', '1')
  .option('--markets <n>', 'number of markets')
  .option('--positions <n>', 'number of positions')
  .option('--api-key <key>', 'required x-api-key (default sim-key; "none" accepts any)')
  .option('--host <host>', 'listen address', '127.0.0.1')
  .option('--encoding <name>', 'how values are written: canonical, mixed, strings, units, chaos, or family=choice,… (see docs/simulator.md)', 'mixed')
  .option('--print-config', 'print a lookout config that polls this simulator (fast polls, demo-timed rules) and exit')
  .option('--history <duration>', 'first write this much simulated history (e.g. 7d) into --db, for lookout backtest')
  .option('--db <file>', 'the lookout database --history writes and --print-config names', 'lookout.db')
  .action((o: { port: string; catalogPort?: string; scenario?: string; seed: string; markets?: string; positions?: string; apiKey?: string; host: string; encoding: string; printConfig?: boolean; history?: string; db: string }) =>
    exit(async () => {
      const { runSimulateCommand } = await import('./simulator/cli.js');
      const sim = await runSimulateCommand({
        port: Number(o.port),
        ...(o.catalogPort ? { catalogPort: Number(o.catalogPort) } : {}),
        ...(o.scenario ? { scenario: o.scenario } : {}),
        ...(o.printConfig ? { printConfig: true } : {}),
        ...(o.history ? { history: o.history } : {}),
        db: o.db,
        seed: Number(o.seed),
        host: o.host,
        encoding: o.encoding,
        ...(o.markets ? { markets: Number(o.markets) } : {}),
        ...(o.positions ? { positions: Number(o.positions) } : {}),
        ...(o.apiKey ? { apiKey: o.apiKey === 'none' ? null : o.apiKey } : {}),
      });
      if (!sim) return 0;
      await new Promise<void>((res) => {
        process.once('SIGINT', res);
        process.once('SIGTERM', res);
      });
      await sim.close();
      return 0;
    }),
  );

program
  .command('schema')
  .description('print the JSON Schema of the config (or of a rule file), for editors')
  .option('--rules', 'the schema of a rule file instead')
  .action((o: { rules?: boolean }) =>
    exit(async () => {
      const m = await import('./config/json-schema.js');
      out(JSON.stringify(o.rules ? m.ruleFileJsonSchema() : m.configJsonSchema(), null, 2));
      return 0;
    }),
  );

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

await program.parseAsync(process.argv);
