/**
 * The daemon makes no collator, number or date format, nor calls a locale-aware method (B6s: the first collator or
 * number format maps ~7 MB that stay): `lookout run` polls on its schedule, fires alerts on several markets, renders
 * their Slack messages (amounts in dollars, the group's order) and serves its status page, with every such way into
 * ICU trapped (test/fixtures/icu-trap.mjs; V8's own time-zone reads for local dates are not among them).
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { DaemonProcess, getText, ROOT } from './fixtures/daemon/harness.js';
import { daemonScope } from './fixtures/daemon/scope.js';
import { utilRule, writeConfig } from './fixtures/daemon/world.js';

const { dirs, slackWorld } = daemonScope();
const TRAP = join(ROOT, 'test', 'fixtures', 'icu-trap.mjs');

/**
 * What the trap recorded in `file` for the first process that loaded it (the one started: the processes it starts,
 * such as the config loader, load it too and write their own lines), less its `ready` line; throws when the trap
 * never ran.
 */
function trapped(file: string): string[] {
  expect(existsSync(file), 'the ICU trap was loaded').toBe(true);
  const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
  const [pid, first] = (lines[0] ?? '').split(' ');
  expect(first, 'the ICU trap was loaded').toBe('ready');
  return lines.slice(1).filter((l) => l.startsWith(`${pid} `)).map((l) => l.slice(pid!.length + 1));
}

it('the trap records a use of ICU (it can fail)', async () => {
  const file = join(dirs.make(), 'icu.txt');
  await new Promise<void>((resolve, reject) =>
    execFile(process.execPath, ['--import', TRAP, '-e', `['b', 'a'].sort((x, y) => x.localeCompare(y)); (1234.5).toLocaleString('en-US')`], { env: { ...process.env, ICU_TRAP_FILE: file }, timeout: 20_000 }, (err) => (err ? reject(err) : resolve())),
  );
  const used = trapped(file);
  expect(used.some((l) => l.startsWith('localeCompare '))).toBe(true);
  expect(used.some((l) => l.startsWith('toLocaleString '))).toBe(true);
});

it('polls, fires on three markets, renders their messages with dollar amounts and serves its status page without ICU', async () => {
  const { sim, slack, db, dir } = await slackWorld();
  const file = writeConfig(join(dir, 'icu.yaml'), {
    sim,
    db,
    // The starter market rules (their texts show amounts with `usd`) and one rule firing at once on three markets.
    ruleFiles: [join(ROOT, 'rules', 'markets.yaml')],
    rules: [0, 1, 2].map((i) => ({ ...utilRule(`util-${i}`, sim.market(i), 0.01), clear_below: 0.005, labels: { team: 'risk' }, annotations: { summary: 'util {{utilization | pct}} of {{total_supplied_usd | usd}} supplied' } })),
    notifiers: { slack: { type: 'slack', webhook_url: slack.url, rate_limit: 10 } },
    routes: [{ default: true, notify: ['slack'], group_by: ['team'], group_wait: '0s', group_interval: '1s' }],
    sourceDownAfter: 50,
  });
  const trap = join(dir, 'icu.txt');
  const { daemon, url } = await DaemonProcess.start(file, { NODE_OPTIONS: `--import ${TRAP}`, ICU_TRAP_FILE: trap });
  // One message for the group of the three markets (their order is the group's), and the polls on schedule after it.
  await slack.waitFor('a FIRING message naming the three markets', (p) => p.some((x) => x.text.startsWith('FIRING') && [0, 1, 2].every((i) => JSON.stringify(x).includes(sim.market(i)))), 30_000, () => daemon.diag());
  // In the group's order: by entity, code unit by code unit (compareText), as no collator is made.
  const firing = JSON.stringify(slack.posts.find((x) => x.text.startsWith('FIRING') && [0, 1, 2].every((i) => JSON.stringify(x).includes(sim.market(i)))));
  const ids = [0, 1, 2].map((i) => sim.market(i));
  expect([...ids].sort((a, b) => firing.indexOf(a) - firing.indexOf(b))).toEqual([...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
  // Their texts show the amounts, grouped in thousands (src/text-format.ts): the dollar format ran.
  expect(slack.posts.map((x) => JSON.stringify(x)).join('\n')).toMatch(/of \$\d{1,3}(,\d{3})+ supplied/);
  await daemon.waitForPolls(2, 10_000);
  const page = await getText(`${url}/`);
  expect(page).toContain(sim.market(0));
  expect(trapped(trap)).toEqual([]);
});
