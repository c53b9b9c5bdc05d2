/**
 * The soak, bounded for CI: 200 poll cycles (about 70 s) of the real daemon against a changing simulator with faults,
 * then the alert history against `lookout backtest` and a scan of every byte produced for the four secrets.
 * The full run (`npm run soak`, 2,000 cycles) is where memory, fds, DB size and lag are shown level: docs/reliability.md.
 */
import { afterEach, expect, it } from 'vitest';
import { killAll, tempDirs } from './fixtures/daemon/harness.js';
import { runSoak } from './soak/soak.js';

const dirs = tempDirs();
afterEach(async () => {
  await killAll();
  dirs.cleanup();
});

it('200 poll cycles with faults: stops cleanly, the DB is sound, the alert history equals the backtest’s, and no secret in any output', async () => {
  const r = await runSoak({ cycles: 200, dir: dirs.make() });
  const diag = JSON.stringify({ ...r, samples: r.samples }, null, 1).slice(0, 4000);
  expect(r.cycles, diag).toBeGreaterThanOrEqual(200);
  // The faults were felt: the 5xx burst failed polls.
  expect(r.failedPolls, diag).toBeGreaterThan(0);
  expect(r.samples.length, diag).toBeGreaterThanOrEqual(2);
  expect(r.exit, diag).toEqual({ code: 0, signal: null });
  expect(r.integrity).toBe('ok');
  // Alerts fired (the spike, source_down), and every episode is the backtest's too, at the same times.
  expect(r.compared.live, diag).toBeGreaterThan(0);
  expect(r.compared.mismatches, diag).toEqual([]);
  // Every channel carried messages (so their bodies were scanned).
  for (const n of Object.values(r.delivered)) expect(n, diag).toBeGreaterThan(0);
  // Logs, DB, every HTTP answer captured, every Slack, webhook and email body: none holds a secret.
  expect(r.scanned.bytes).toBeGreaterThan(1_000_000);
  expect(r.scanned.hits).toEqual([]);
}, 180_000);
