/**
 * The daemon runs a config already loaded without the config's parser: neither zod nor yaml (~6–8 MB of a 200-market
 * watch, B6s) loads with its modules, a poll judged by its rules, or its HTTP API; the silences API loads zod with the
 * first silence it is asked to add, and answers a bad one as before. Checked in a child process of the built code,
 * given a config loaded here (plain data, as `lookout run` hands it over).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { serialize } from 'node:v8';
import { beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../src/config/load.js';
import { daemonScope } from './fixtures/daemon/scope.js';
import { writeConfig } from './fixtures/daemon/world.js';
import { dist, loaded, RECORD, root, runScript } from './module-graph-helpers.js';

const { dirs, startSim } = daemonScope();

/** A script expression: whether `pkg` was loaded, by import (the hook) or by require (its cache). */
const parserLoaded = (pkg: string) =>
  `(${loaded(pkg)} || Object.keys(createRequire(import.meta.url).cache).some((f) => /node_modules[\\\\/]${pkg}[\\\\/]/.test(f)))`;
const zod = parserLoaded('zod');
const yaml = parserLoaded('yaml');

/** Rules of kinds that import zod's types (their parameters are built with it on the config side). */
const RULES = [
  { name: 'util-high', kind: 'utilization_above', threshold: 0.99 },
  { name: 'apy-up', kind: 'apy_jump', window: '1h', min_change: 0.5 },
  { name: 'thin', kind: 'threshold', field: 'borrow_apy', op: '>=', value: 0 },
];

beforeAll(() => {
  if (!existsSync(join(root, 'dist', 'daemon.js'))) throw new Error('dist/daemon.js is missing: run `npm run build`');
});

it('a daemon polls, judges and serves without zod or yaml; the silences API loads zod with its first body and answers a bad one as before', async () => {
  const sim = await startSim({ scenario: 'calm' });
  const dir = dirs.make();
  const file = writeConfig(join(dir, 'lookout.yaml'), { sim, db: join(dir, 'lookout.db'), cron: '0 0 1 1 *', rules: RULES });
  const config = loadConfig(file);
  const out = await runScript(
    `
    ${RECORD}
    const { createRequire } = await import('node:module');
    const { deserialize } = await import('node:v8');
    const { startDaemon } = await import(${JSON.stringify(dist('daemon.js'))});
    const { silentLogger } = await import(${JSON.stringify(dist('log.js'))});
    const config = deserialize(Buffer.from(process.env.LOOKOUT_TEST_CONFIG, 'base64'));
    const daemon = await startDaemon({ config, log: silentLogger, consoleOut: { write() {} } });
    const loaded = { zod: ${zod}, yaml: ${yaml} };
    await daemon.pollNow('markets');
    const rules = await fetch(daemon.url + '/api/rules').then((r) => r.json());
    const [poll] = await fetch(daemon.url + '/api/polls').then((r) => r.json());
    const alerts = await fetch(daemon.url + '/api/alerts').then((r) => r.json());
    // The calm world's markets went through the engine: the rule that holds for every market has alerts.
    const judged = poll.ok === true && poll.rows > 0 && alerts.some((a) => a.rule === 'thin');
    const served = { zod: ${zod}, yaml: ${yaml} };
    const post = (body) => fetch(daemon.url + '/api/silences', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
      .then(async (r) => [r.status, (await r.json()).message]);
    const silence = { matchers: [{ name: 'rule', op: '=', value: 'util-high' }], endsAt: Date.now() + 3_600_000, author: 'ops', comment: 'maintenance' };
    const answers = [
      await post({ ...silence, matchers: [] }),
      await post({ ...silence, extra: 1 }),
      await post({ ...silence, matchers: [{ name: 'rule', op: '~', value: 'x' }] }),
      await post({ ...silence, endsAt: 'soon' }),
      (await post(silence))[0],
    ];
    const afterSilence = { zod: ${zod}, yaml: ${yaml} };
    await daemon.stop();
    console.log(JSON.stringify({ loaded, judged, served, rules: rules.length, answers, afterSilence }));
  `,
    { LOOKOUT_TEST_CONFIG: serialize(config).toString('base64') },
  );
  expect(JSON.parse(out.split('\n').at(-1)!)).toEqual({
    loaded: { zod: false, yaml: false },
    judged: true,
    served: { zod: false, yaml: false },
    rules: 3,
    answers: [
      [400, 'invalid silence: matchers: a silence needs at least one matcher'],
      [400, 'invalid silence: Unrecognized key: "extra"'],
      [400, 'invalid silence: matchers.0.op: Invalid option: expected one of "="|"!="|"=~"|"!~"'],
      [400, 'invalid silence: endsAt: must be an ISO-8601 time'],
      201,
    ],
    afterSilence: { zod: true, yaml: false },
  });
});
