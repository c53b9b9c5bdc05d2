/**
 * The daemon while a poll's transaction is open (issue 14, B9): the transaction gives the event loop turns, so
 * /healthz and /metrics answer during it; everything else that touches the database — the JSON API, the status page,
 * a silence posted, deliveries, ticks, the history fold — waits at the store's gate and runs between transactions.
 * A path that forgot to wait would have its statement refused (E_STORE_BUSY, see store-gate.test.ts), which shows
 * here as a 500, a logged store failure, or a missing silence. In-process, so the test can see when a poll's
 * transaction is open (`store.gate.busy`) and fire its requests right then. The requests are what this test aims at
 * the open transactions; deliveries and ticks may or may not meet one here (the dispatcher's and the Slack bot's waits
 * are pinned in notify-gate.test.ts), and any that does must not log an error.
 */
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import YAML from 'yaml';
import { loadConfigText } from '../src/config/load.js';
import { startDaemon, type Daemon } from '../src/daemon.js';
import { createLogger } from '../src/log.js';
import { nextTurn } from '../src/yielding.js';
import { configObject, SimHandle } from './fixtures/daemon/world.js';
import { tempDirs } from './store-helpers.js';

const dirs = tempDirs('lookout-yielding-');
let sim: SimHandle | undefined;
let daemon: Daemon | undefined;
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  await sim?.close();
  sim = undefined;
  dirs.cleanup();
});

const MARKETS = 1500;

it('answers /healthz, /metrics and /readyz during a poll transaction; the API and a posted silence wait at the gate and see it whole; nothing is refused or logged as an error', { timeout: 90_000 }, async () => {
  sim = await SimHandle.start({ scenario: 'calm', markets: MARKETS });
  const dir = dirs.make();
  const cfg = configObject({
    sim,
    db: join(dir, 'lookout.db'),
    // Every market breaches: the first poll that judges them writes 1,500 alerts and their notifications.
    rules: [{ name: 'util-any', kind: 'utilization_above', severity: 'warning', threshold: 0.000001 }],
  }) as { polls: Array<Record<string, unknown>> };
  cfg.polls[0]!.limit = 5000;
  const config = loadConfigText(join(dir, 'lookout.yaml'), YAML.stringify(cfg), { dir, env: {} });
  const lines: Array<Record<string, unknown>> = [];
  const log = createLogger({ level: 'info', write: (l) => void lines.push(JSON.parse(l) as Record<string, unknown>) });
  daemon = await startDaemon({ config, log, consoleOut: { write: () => true } });
  const { store, url } = daemon;
  const get = (path: string) => fetch(`${url}${path}`, { signal: AbortSignal.timeout(20_000) });

  const answers: Array<{ path: string; status: number; body: string }> = [];
  const silences: string[] = [];
  const inFlight: Array<Promise<void>> = [];
  let opened = 0;
  let wasBusy = false;
  const deadline = Date.now() + 60_000;
  // Each time a poll's transaction opens, fire a burst of requests into it; three transactions' worth.
  while (opened < 3 && Date.now() < deadline) {
    const busy = store.gate.busy;
    if (busy && !wasBusy) {
      opened++;
      const n = opened;
      for (const path of ['/healthz', '/metrics', '/api/alerts', '/api/polls', '/', '/readyz']) {
        inFlight.push(get(path).then(async (r) => void answers.push({ path, status: r.status, body: path === '/api/alerts' ? await r.text() : '' })));
      }
      const comment = `posted during transaction ${n}`;
      inFlight.push(
        fetch(`${url}/api/silences`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ matchers: [{ name: 'rule', op: '=', value: `nothing-${n}` }], endsAt: new Date(Date.now() + 3_600_000).toISOString(), author: 'test', comment }),
          signal: AbortSignal.timeout(20_000),
        }).then(async (r) => {
          answers.push({ path: 'POST /api/silences', status: r.status, body: await r.text() });
          if (r.status === 201) silences.push(comment);
        }),
      );
    }
    wasBusy = busy;
    await nextTurn();
  }
  expect(opened, 'three poll transactions seen open').toBe(3);
  await Promise.all(inFlight);

  for (const a of answers) expect(a.status, `${a.path}: ${a.body}`).toBeLessThan(300);
  // The API reads between transactions: no alert list was read half written (all of them or, before the first commit, none).
  for (const a of answers.filter((x) => x.path === '/api/alerts')) {
    const firing = (JSON.parse(a.body) as unknown[]).length;
    expect([0, MARKETS]).toContain(firing);
  }
  expect(silences).toHaveLength(3);
  const listed = (await (await get('/api/silences')).json()) as Array<{ comment: string }>;
  expect(listed.map((s) => s.comment).sort()).toEqual(silences.sort());
  // Nothing anywhere in the daemon was refused or failed for the store meanwhile (deliveries, ticks, the fold).
  const bad = lines.filter((l) => l.level === 'error' || JSON.stringify(l).includes('E_STORE_BUSY'));
  expect(bad).toEqual([]);
  // And the polls themselves all stored.
  expect(lines.filter((l) => l.msg === 'poll' && l.outcome !== 'ok')).toEqual([]);
});
