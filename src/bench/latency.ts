/**
 * Target B8, alert latency: from the simulator changing a value to a webhook receiving the notification,
 * through lookout's own alert path (its rule, its webhook notifier) and through lookout as an exporter →
 * a real Prometheus (scrape and rule evaluation every second) → a real Alertmanager (its webhook receiver).
 * One daemon, in a child process, serves both paths from the same polls (every second), so each change is
 * timed on both at once. Both route the same way: a group per rule and market, group_wait 0s.
 * Without the Debian packages the bench says so and measures nothing.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { benchConfigYaml } from './config.js';
import type { Bench, BenchContext } from './context.js';
import { startDaemonChild, type DaemonChild } from './daemon-proc.js';
import { findTool, rssMbOf, startAlertmanager, startPrometheus, type Served } from './prom.js';
import { startChildSimulator, type ChildSimulator } from './sim.js';
import { summarize } from './stats.js';
import { until } from './until.js';
import { startWebhookSink, type WebhookSink } from './webhook-sink.js';

/** Utilization a market is moved to: over both rules' threshold (ambient utilization stays under 0.9). */
const HIGH = 0.99;
const THRESHOLD = 0.98;

const LOOKOUT_RULE = `    - { name: utilization-high, kind: threshold, severity: critical, field: utilization, op: ">=", value: ${THRESHOLD} }`;
/** The same rule in PromQL, over the gauge lookout exports. */
const PROM_RULES = `groups:
  - name: lookout
    rules:
      - alert: UtilizationHigh
        expr: lookout_market_utilization_ratio >= ${THRESHOLD}
        labels: { severity: critical }
`;

/** Median of ms samples, as seconds. */
const fmtS = (xs: number[]) => `${(summarize(xs).median / 1000).toFixed(2)} s`;

async function latency(ctx: BenchContext): Promise<void> {
  const prometheus = findTool('prometheus');
  const alertmanager = findTool('prometheus-alertmanager') ?? findTool('alertmanager');
  if (!prometheus || !alertmanager) {
    ctx.note(`alert.latency: not measured: ${!prometheus ? 'prometheus' : 'prometheus-alertmanager'} not installed (Debian packages prometheus, prometheus-alertmanager)`);
    return;
  }
  // Each path waits a random part of its 1 s cadences (lookout: its poll; Prometheus: the poll, the scrape and the
  // evaluation), so the ratio of medians is ~1/3 give or take the samples' luck: over 15 changes it read 0.24–0.54 in
  // runs of the same code (the seventeenth session), over 31 the spread is about half that.
  const samples = ctx.quick ? 3 : 31;
  const dir = join(ctx.dir, 'latency');
  mkdirSync(dir);
  let sim: ChildSimulator | undefined;
  let daemon: DaemonChild | undefined;
  let prom: Served | undefined;
  let am: Served | undefined;
  const sinks: WebhookSink[] = [];
  try {
    sim = await startChildSimulator({ markets: samples + 5, positions: 0 });
    const lookoutSink = await startWebhookSink();
    const amSink = await startWebhookSink();
    sinks.push(lookoutSink, amSink);
    daemon = await startDaemonChild(
      benchConfigYaml({
        baseUrl: sim.url,
        catalogUrl: sim.catalogUrl,
        apiKey: sim.apiKey,
        dbPath: join(dir, 'daemon.db'),
        rules: { inline: LOOKOUT_RULE },
        polls: ['markets'],
        cron: { markets: '* * * * * *' },
        // As a watch of 20 markets is configured: the default limit (1,000 rows, 50 a market), not the §8 scale's 10,000
        // (500 rows a market, 300 ms of every poll spent fetching and reading rows older than each market's newest).
        marketsLimit: 'default',
        notify: {
          notifiers: `  hook: { type: webhook, url: ${JSON.stringify(lookoutSink.url)} }`,
          routes: '  - { default: true, notify: [hook], group_by: [rule, market_id], group_wait: 0s, group_interval: 1s, repeat_interval: 4h, send_resolved: false }',
        },
      }),
    );
    am = await startAlertmanager(alertmanager, dir, { webhookUrl: amSink.url, groupBy: ['alertname', 'market_id'], groupWait: '0s', groupInterval: '1s' });
    prom = await startPrometheus(prometheus, dir, { target: new URL(daemon.url!).host, rulesYaml: PROM_RULES, alertmanager: new URL(am.url).host });
    const p = prom;
    // Prometheus has scraped lookout once it knows the gauge.
    await until('Prometheus to scrape lookout', async () => {
      const r = (await (await fetch(`${p.url}/api/v1/query?query=count(lookout_market_utilization_ratio)`)).json()) as { data?: { result?: unknown[] } };
      return r.data?.result?.length ? true : undefined;
    }, 60_000, 200);
    const own: number[] = [];
    const viaAm: number[] = [];
    /** From the change to the alert's startsAt (when each path judged it firing), and from there to the webhook. */
    const split = { ownJudged: [] as number[], ownSent: [] as number[], amJudged: [] as number[], amSent: [] as number[] };
    for (let k = 0; k < samples; k++) {
      // A random phase against the 1 s cadences (lookout's poll, the scrape, the evaluation): not a synchronisation.
      await new Promise((r) => setTimeout(r, Math.random() * 1000));
      const { at, marketIds } = await sim.override([k], HIGH);
      const id = marketIds[0]!;
      const both = await until(`market ${id} to be notified through both paths`, () => {
        const a = lookoutSink.firing.get(id);
        const b = amSink.firing.get(id);
        return a !== undefined && b !== undefined ? { a, b } : undefined;
      }, 60_000, 20);
      own.push(both.a - at);
      viaAm.push(both.b - at);
      const ownStart = lookoutSink.startsAt.get(id) ?? NaN;
      const amStart = amSink.startsAt.get(id) ?? NaN;
      split.ownJudged.push(ownStart - at);
      split.ownSent.push(both.a - ownStart);
      split.amJudged.push(amStart - at);
      split.amSent.push(both.b - amStart);
    }
    const lookoutRss = (await daemon.memory()).rssMb;
    const promRss = rssMbOf(prom.pid);
    const amRss = rssMbOf(am.pid);
    const o = summarize(own);
    const a = summarize(viaAm);
    ctx.row({ name: 'alert.latency', n: `${samples} changes, 1 s cadence`, subject: o, baseline: a, baselineName: 'lookout /metrics → Prometheus → Alertmanager' });
    ctx.figure('latency_lookout_ms', o.median);
    ctx.figure('latency_prometheus_ms', a.median);
    ctx.figure('latency_lookout_rss_mb', lookoutRss);
    ctx.figure('latency_prometheus_rss_mb', promRss + amRss);
    ctx.note(
      `alert.latency: ${samples} changes of one market's utilization to ${HIGH} (threshold ${THRESHOLD}), each timed from the simulator's change to the webhook: ` +
        `lookout's own path median ${(o.median / 1000).toFixed(2)} s (${(o.min / 1000).toFixed(2)}–${(o.max / 1000).toFixed(2)}), ` +
        `lookout /metrics → Prometheus (scrape and evaluation every 1 s) → Alertmanager (group_wait 0s) median ${(a.median / 1000).toFixed(2)} s (${(a.min / 1000).toFixed(2)}–${(a.max / 1000).toFixed(2)}): ratio ${(o.median / a.median).toFixed(2)}. ` +
        `Where the time goes (medians, from each alert's startsAt): lookout judged it firing ${fmtS(split.ownJudged)} after the change and its webhook arrived ${fmtS(split.ownSent)} later; ` +
        `Prometheus judged it firing ${fmtS(split.amJudged)} after the change and Alertmanager's webhook arrived ${fmtS(split.amSent)} later. ` +
        `Both paths start from lookout's poll of every second. RSS: lookout ${lookoutRss.toFixed(0)} MB; Prometheus ${promRss.toFixed(0)} MB + Alertmanager ${amRss.toFixed(0)} MB, watching ${samples + 5} markets.`,
    );
  } finally {
    await prom?.stop();
    await am?.stop();
    await daemon?.stop();
    for (const s of sinks) await s.close();
    await sim?.stop();
  }
}

/** The alert-latency benchmark. */
export const latencyBenches: Bench[] = [
  { name: 'alert.latency', about: 'value change → webhook: lookout’s own path vs lookout /metrics → real Prometheus → real Alertmanager, both every 1 s (target B8)', run: latency },
];
