import { spawnSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Metrics } from '../src/metrics/index.js';
import { samples } from './metrics-fixtures.js';
import { fedMetrics, type SimulatedPolls } from './metrics-simulated.js';
import { tool } from './tools.js';

const promtool = tool('promtool', 'prometheus', { probe: true });
const NEEDS = promtool.needs;
let polls: SimulatedPolls;
let metrics: Metrics;

beforeAll(async () => {
  ({ metrics, polls } = await fedMetrics());
});

function run(args: string[], input?: string) {
  const r = spawnSync(promtool.require(), args, { input, encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

describe('a scrape of simulator data', () => {
  it('holds markets, position aggregates and benchmarks from the simulator', async () => {
    const text = await metrics.scrape();
    const markets = polls.get('markets')!;
    expect(markets.length).toBeGreaterThan(0);
    expect(samples(text, 'lookout_market_utilization_ratio').length).toBe(markets.filter((r) => typeof r.fields.utilization === 'number').length);
    const positions = samples(text, 'lookout_positions');
    expect(positions.reduce((n, s) => n + s.value, 0)).toBe(polls.get('positions')!.length);
    expect(new Set(positions.map((s) => s.labels.verified))).toEqual(new Set(['true', 'false']));
    expect(samples(text, 'lookout_benchmark_apy_ratio').length).toBeGreaterThan(0);
  });

  it.skipIf(promtool.skip)(`passes promtool check metrics (${NEEDS})`, async () => {
    const r = run(['check', 'metrics'], await metrics.scrape());
    expect(r.output).toBe('');
    expect(r.status).toBe(0);
  });
});

describe('the shipped Prometheus files', () => {
  it.skipIf(promtool.skip)(`promtool check rules passes on prometheus/lookout-rules.yml (${NEEDS})`, () => {
    const r = run(['check', 'rules', 'prometheus/lookout-rules.yml']);
    expect(r.output).toMatch(/SUCCESS: \d+ rules found/);
    expect(r.status).toBe(0);
  });

  it.skipIf(promtool.skip)(`the alerting rules pass their unit tests (${NEEDS})`, () => {
    const r = run(['test', 'rules', 'prometheus/lookout-rules.test.yml']);
    expect(r.output).toContain('SUCCESS');
    expect(r.status).toBe(0);
  });

  it.skipIf(promtool.skip)(`promtool check config passes on the example scrape config (${NEEDS})`, () => {
    const r = run(['check', 'config', 'prometheus/prometheus.example.yml']);
    expect(r.status, r.output).toBe(0);
  });
});
