import fs from 'node:fs';
import { parse } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseScrape } from './metrics-fixtures.js';
import { fedMetrics } from './metrics-simulated.js';

/** Names of metrics a PromQL expression reads (lookout's own and the process metrics it relies on). */
function metricNames(expr: string): string[] {
  const withoutStrings = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  return [...withoutStrings.matchAll(/\b((?:lookout|process|nodejs)_[a-zA-Z0-9_]+)\b/g)].map((m) => m[1]!);
}

interface Panel {
  title?: string;
  type?: string;
  targets?: { expr?: string }[];
  panels?: Panel[];
}

function exprsOf(dashboard: { panels: Panel[]; templating: { list: { query?: unknown; definition?: string }[] } }): [string, string][] {
  const out: [string, string][] = [];
  const walk = (ps: Panel[]) => {
    for (const p of ps) {
      for (const t of p.targets ?? []) if (t.expr) out.push([p.title ?? '?', t.expr]);
      walk(p.panels ?? []);
    }
  };
  walk(dashboard.panels);
  for (const v of dashboard.templating.list) {
    const q = typeof v.query === 'object' && v.query !== null ? (v.query as { query?: string }).query : undefined;
    if (q && q.includes('(')) out.push([`variable ${q}`, q]);
  }
  return out;
}

let scraped: Set<string>;
beforeAll(async () => {
  const { metrics } = await fedMetrics();
  scraped = new Set(parseScrape(await metrics.scrape()).map((s) => s.name));
});

describe('grafana/lookout-dashboard.json', () => {
  const dashboard = JSON.parse(fs.readFileSync('grafana/lookout-dashboard.json', 'utf8'));
  const exprs = exprsOf(dashboard);

  it('parses and covers markets, positions, benchmarks and lookout itself', () => {
    const titles = (dashboard.panels as Panel[]).filter((p) => p.type === 'row').map((p) => p.title);
    expect(titles).toEqual(['Markets', 'Positions', 'Benchmarks', 'lookout health']);
    const used = new Set(exprs.flatMap(([, e]) => metricNames(e)));
    for (const name of [
      'lookout_market_utilization_ratio',
      'lookout_market_borrow_apy_ratio',
      'lookout_market_supply_apy_ratio',
      'lookout_market_oracle_lag_seconds',
      'lookout_positions',
      'lookout_positions_value_usd',
      'lookout_benchmark_apy_ratio',
      'lookout_poll_duration_seconds_bucket',
      'lookout_poll_errors_total',
      'lookout_source_up',
      'lookout_alerts',
      'lookout_outbox_pending',
      'lookout_notifications_total',
    ]) {
      expect(used, name).toContain(name);
    }
  });

  it('has unique panel ids and every panel inside the 24-column grid', () => {
    const panels = dashboard.panels as (Panel & { id: number; gridPos: { x: number; w: number } })[];
    expect(new Set(panels.map((p) => p.id)).size).toBe(panels.length);
    for (const p of panels) expect(p.gridPos.x + p.gridPos.w).toBeLessThanOrEqual(24);
  });

  it('queries only metrics that exist in a scrape (histogram _bucket/_sum/_count included)', () => {
    const missing = exprs.flatMap(([title, e]) => metricNames(e).filter((n) => !scraped.has(n)).map((n) => `${title}: ${n}`));
    expect(missing).toEqual([]);
  });

  it('the check catches a metric that does not exist', () => {
    expect(metricNames('sum(rate(lookout_made_up_total{job="lookout_x"}[5m]))').filter((n) => !scraped.has(n))).toEqual(['lookout_made_up_total']);
  });
});

describe('prometheus/lookout-rules.yml', () => {
  it('uses only metrics that exist in a scrape', () => {
    const doc = parse(fs.readFileSync('prometheus/lookout-rules.yml', 'utf8')) as { groups: { rules: { expr: string; alert?: string; record?: string }[] }[] };
    const exprs = doc.groups.flatMap((g) => g.rules.map((r) => [r.alert ?? r.record ?? '?', r.expr] as const));
    expect(exprs.length).toBeGreaterThan(5);
    const missing = exprs.flatMap(([name, e]) => metricNames(e).filter((n) => !scraped.has(n)).map((n) => `${name}: ${n}`));
    expect(missing).toEqual([]);
  });
});
