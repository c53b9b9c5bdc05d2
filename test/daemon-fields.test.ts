/**
 * Field-level reading in the real daemon (SPEC §6): a market whose oracle_price is garbage keeps its
 * utilization alert (fires, and resolves when the spike ends), while its price_deviation has no data —
 * neither fires nor resolves — and the rejection is counted on /metrics and logged once, not once per poll.
 */
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { apiAlerts, DaemonProcess, getText, sample, until, type ApiAlert } from './fixtures/daemon/harness.js';
import { daemonScope } from './fixtures/daemon/scope.js';
import { utilRule, writeConfig } from './fixtures/daemon/world.js';
import { startRewriteProxy, type RewriteProxy } from './fixtures/rewrite-proxy.js';

const { dirs, spikingSim } = daemonScope();
let proxy: RewriteProxy | undefined;
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

const stateOf = (alerts: ApiAlert[], rule: string, entity: string) => alerts.find((a) => a.rule === rule && a.entity === entity)?.state;

it('a garbage oracle_price: utilization still fires and resolves on time, price_deviation has no data (no firing, no resolve), counted and logged once', async () => {
  const sim = await spikingSim();
  const m0 = sim.market(0);
  const m1 = sim.market(1);
  // Phase 1: market #0's service price is twice its oracle price (price_deviation fires); market #1 sends a
  // garbage oracle price and the same doubled service price (it would fire, were the price read).
  // Phase 2: market #0's oracle price turns to garbage and its service price is back (it would resolve, were it read).
  let phase = 1;
  proxy = await startRewriteProxy(sim.url, (row) => {
    const doubled = () => (row.service_price = Number(row.service_price) * 2);
    if (row.market_id === m1) {
      row.oracle_price = 'garbage';
      doubled();
    }
    if (row.market_id === m0) {
      if (phase === 1) doubled();
      else row.oracle_price = 'garbage';
    }
  });
  const dir = dirs.make();
  const dev = (market: string) => ({ name: `dev-${market === m0 ? 0 : 1}`, kind: 'price_deviation', severity: 'warning', select: { market_id: market }, max_deviation: 0.05 });
  const file = writeConfig(join(dir, 'lookout.yaml'), {
    sim: { url: proxy.url, catalogUrl: sim.catalogUrl },
    db: join(dir, 'lookout.db'),
    rules: [utilRule('util-high', m0), dev(m0), dev(m1)],
    sourceDownAfter: 50,
  });
  const { daemon, url } = await DaemonProcess.start(file);
  const alerts = () => apiAlerts(url);
  await until('util-high and dev-0 firing on market #0', async () => {
    const a = await alerts();
    return stateOf(a, 'util-high', m0) === 'firing' && stateOf(a, 'dev-0', m0) === 'firing' ? true : undefined;
  }, 20_000, () => daemon.diag());

  phase = 2;
  await daemon.waitForPolls(3, 15_000);
  expect(stateOf(await alerts(), 'dev-0', m0), 'an unreadable price must not resolve').toBe('firing');

  // The spike ends: utilization resolves on the next polls, price_deviation still cannot be judged.
  await sim.swap({ scenario: 'calm', startedAt: Date.now() });
  await until('util-high resolved on market #0', async () => (stateOf(await alerts(), 'util-high', m0) !== 'firing' ? true : undefined), 20_000, () => daemon.diag());
  await daemon.waitForPolls(2, 10_000);
  const after = await alerts();
  expect(stateOf(after, 'dev-0', m0)).toBe('firing');
  expect(stateOf(after, 'dev-1', m1), 'an unreadable price must not fire').toBeUndefined();
  expect(daemon.logs().filter((l) => l.msg === 'alert' && l.rule === 'dev-0' && l.status === 'resolved')).toEqual([]);

  const metrics = await getText(`${url}/metrics`);
  const polls = daemon.count((l) => l.msg === 'poll' && l.outcome === 'ok');
  expect(sample(metrics, 'lookout_fields_rejected_total', { poll: 'markets', field: 'oracle_price' })).toBeGreaterThanOrEqual(polls);
  // Every poll of markets kept both markets' rows: no whole-row rejection.
  expect(sample(metrics, 'lookout_rows_rejected_total', { poll: 'markets' })).toBeUndefined();
  expect(sample(metrics, 'lookout_market_utilization_ratio', { market_id: m1 })).toEqual(expect.any(Number));
  // One log line per (market, field) for the many polls that sent the same garbage.
  const lines = daemon.logs().filter((l) => l.msg === 'field_rejected' && l.field === 'oracle_price');
  expect(polls).toBeGreaterThan(4);
  expect(lines.map((l) => l.entity).sort(), daemon.diag()).toEqual([m0, m1].sort());
}, 90_000);
