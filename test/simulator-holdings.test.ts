/**
 * Simulated holdings are one row per wallet, chain and token: a real wallet has one balance of a token on a chain,
 * and a repeated (wallet, chain, token) row has nothing to tell it apart, so the client would reject it as a duplicate.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { silentLogger } from '../src/log.js';
import { startSimulator, type Simulator } from '../src/simulator/index.js';
import { walletCount, generateHoldings } from '../src/simulator/positions.js';
import { createDataServiceClient, type DataServiceClient } from '../src/source/client.js';
import { runPoll } from '../src/source/polls/registry.js';
import { pollSchema } from '../src/source/polls/schemas.js';
import { recordingSleep, sourceConfig } from './source-helpers.js';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
const open: Array<{ sim: Simulator; client: DataServiceClient }> = [];
afterEach(async () => {
  for (const { sim, client } of open.splice(0)) {
    await client.close();
    await sim.close();
  }
});

describe('simulated holdings', () => {
  it.each([
    ['default settings', {}],
    ['seed 7', { seed: 7 }],
    ['seed 42, 1000 positions', { seed: 42, positions: 1000 }],
    ['few wallets', { seed: 3, positions: 20 }],
  ])('%s: a holdings poll through the real client rejects nothing', async (_name, opts) => {
    const clock = new ManualClock(NOW);
    const sim = await startSimulator({ clock, startedAt: NOW - 3_600_000, ...opts });
    const client = createDataServiceClient(sourceConfig(sim), { sleep: recordingSleep().sleep });
    open.push({ sim, client });
    const cfg = pollSchema.parse({ name: 'holdings', kind: 'holdings', cron: '* * * * *' });
    const { readings, rejected } = await runPoll(cfg, { client, signal: AbortSignal.timeout(20_000), now: clock.now(), log: silentLogger });
    expect(rejected).toEqual([]);
    expect(readings).toHaveLength(sim.world.holdings.length);
    expect(new Set(readings.map((r) => r.entity)).size).toBe(readings.length);
  });

  it.each([1, 2, 11, 99])('seed %i: generateHoldings gives each wallet one row per chain and token, deterministically', (seed) => {
    const networks = ['mainnet', 'base', 'arbitrum', 'optimism'].map((name) => ({ name })) as never;
    const wallets = Array.from({ length: walletCount(300) }, (_, i) => `0xw${i}`);
    const a = generateHoldings(seed, 300, networks, wallets);
    const keys = a.map((h) => `${h.wallet}/${h.chain}/${h.symbol}`);
    expect(new Set(keys).size).toBe(300);
    expect(generateHoldings(seed, 300, networks, wallets)).toEqual(a);
  });
});
