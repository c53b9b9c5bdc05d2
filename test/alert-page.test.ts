/**
 * An alert's page, from real parts: two hours of one-minute polls through the real alert engine into a real SQLite
 * store, the alert's FIRING and RESOLVED sent through the real notification pipeline to a loopback Slack, and the
 * page served by the real HTTP server — read as HTML, then in headless Chromium (Debian's `chromium`), whose
 * screenshots go to test-artifacts/ for a person to look at.
 */
import fs from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AlertEngine } from '../src/alerts/engine.js';
import { alertPageView } from '../src/alerts/page-data.js';
import { createAlertRepo } from '../src/alerts/repo.js';
import { ManualClock } from '../src/clock.js';
import { createNotifications, type Notifications } from '../src/notify/index.js';
import type { Store } from '../src/store/index.js';
import type { Silence } from '../src/http/types.js';
import { drive, engineFor, market, MIN, outcome, rule, T0, tempDirs, tempStore } from './alerts-helpers.js';
import { startFakeDaemon, type FakeDaemon } from './http-fixtures.js';
import { notifier, route, SlackRecorder } from './notify-helpers.js';
import { tool } from './tools.js';

const chromiumBin = tool('chromium', 'chromium');
const dirs = tempDirs();
const EVIL = '<img src=x onerror=alert(1)>';
const silence = (id: string, chain: string, comment: string): Silence => ({ id, matchers: [{ name: 'chain', op: '=', value: chain }], startsAt: T0, endsAt: T0 + 10 * 3_600_000, author: 'ops', comment });
const silences = [silence('s-base', 'base', EVIL), silence('s-eth', 'ethereum', 'another chain')];

/** Utilization of m1 minute by minute: calm, a climb over 90% from minute 40 to 70, calm again. */
const utilization = (i: number) => (i >= 40 && i < 70 ? 0.93 + 0.04 * Math.sin((i - 40) / 5) : 0.6 + 0.1 * Math.sin(i / 7));

describe('an alert’s page', () => {
  const clock = new ManualClock(T0);
  let store: Store;
  let engine: AlertEngine;
  let n: Notifications;
  let slack: SlackRecorder;
  let daemon: FakeDaemon;
  let fingerprint: string;
  let statusWhileFiring = '';

  beforeAll(async () => {
    store = tempStore(dirs);
    const util = rule({ name: 'util-high', kind: 'utilization_above', severity: 'critical', threshold: 0.9, clear_below: 0.85, for: '3m' });
    engine = engineFor(store, [util], { clock });
    slack = await new SlackRecorder(clock).start();
    n = createNotifications({
      db: store.db,
      config: {
        notifiers: { slack: notifier({ type: 'slack', webhook_url: slack.url }) },
        routes: [route({ default: true, notify: ['slack'], group_wait: '0s', group_interval: '1m', repeat_interval: '4h' })],
        delivery: { backoff: 1000, max_backoff: 60_000, give_up_after: 3_600_000 },
        watchdog: { enabled: false, severity: 'info' },
        server: { external_url: 'https://lookout.example.com/' },
      },
      clock,
      random: () => 0.5,
      alerts: { firing: () => engine.alerts().filter((a) => a.state === 'firing'), markNotified: (fp, at) => createAlertRepo(store.db).markNotified(fp, at) },
    });
    daemon = await startFakeDaemon({
      deps: {
        clock,
        alerts: () => engine.alerts(),
        alertPage: (fp, range) =>
          alertPageView({ db: store.db, readings: store.readings, alertRepo: createAlertRepo(store.db), rules: () => [util], silences: () => silences }, fp, range, clock.now()),
      },
    });
    for (let i = 0; i < 120; i++) {
      const now = T0 + i * MIN;
      clock.set(now);
      const r = drive(store, engine, outcome('markets', 'metrics', [market('m1', now, { utilization: utilization(i), loan_asset_symbol: EVIL })], now));
      store.transaction(() => n.outbox.enqueue(r.events, now));
      await n.dispatcher.runDue();
      if (i === 55) statusWhileFiring = await (await daemon.get('/')).text();
    }
    fingerprint = engine.alerts().find((a) => a.rule === 'util-high')!.fingerprint;
  }, 60_000);

  afterAll(async () => {
    await n?.close();
    await slack?.stop();
    await daemon?.server.close();
    store?.close();
    dirs.cleanup();
  });

  it('fired and resolved once, and both messages went out (the scenario is what the page draws)', () => {
    expect(slack.delivered().map((p) => p.body.text.split(' ')[0])).toEqual(['FIRING:1', 'RESOLVED']);
    expect(engine.alerts().find((a) => a.fingerprint === fingerprint)!.state).toBe('resolved');
  });

  it('draws the value over the range, the threshold and clear lines, the pending and firing periods, and each notification', async () => {
    const res = await daemon.get(`/alerts/${fingerprint}?range=6h`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toMatch(/default-src 'none'; style-src 'sha256-/);
    const html = await res.text();
    expect(html).not.toContain('<script');
    const svg = /<svg class="chart"[\s\S]*?<\/svg>/.exec(html)?.[0] ?? '';
    expect(Number(/data-points="(\d+)"/.exec(svg)?.[1])).toBe(120); // every stored reading, none downsampled at this length
    expect(svg.match(/<path class="chart-series" d="M[^"]+"/g)).toHaveLength(1);
    expect(svg).toContain('chart-hline-threshold');
    expect(svg).toContain('threshold 90%');
    expect(svg).toContain('clears below 85%');
    expect(svg.match(/chart-band chart-band-pending/g)).toHaveLength(1);
    expect(svg.match(/chart-band chart-band-firing/g)).toHaveLength(1);
    expect(svg.match(/<g class="chart-mark chart-mark-(firing|resolved)"/g)).toEqual(['<g class="chart-mark chart-mark-firing"', '<g class="chart-mark chart-mark-resolved"']);
    // Pending began at minute 40 (first reading over 90%), firing 3 minutes later; resolved below 85% at minute 70.
    expect(html).toContain(`pending ${iso(T0 + 40 * MIN)} – ${iso(T0 + 43 * MIN)}`);
    expect(html).toContain(`firing ${iso(T0 + 43 * MIN)} – ${iso(T0 + 70 * MIN)}`);
    // The matching silence (chain=base) is listed, escaped; the other chain's is not.
    expect(html).toContain('&#60;img src=x onerror=alert(1)&#62;');
    expect(html).not.toContain('another chain');
  });

  it('a shorter range draws only its part; a bad range is 400 and an unknown fingerprint 404', async () => {
    const html = await (await daemon.get(`/alerts/${fingerprint}?range=1h`)).text();
    expect(Number(/data-points="(\d+)"/.exec(html)?.[1])).toBe(61); // minutes 59..119 of the stored readings
    expect(html).not.toContain('chart-mark-firing'); // sent at minute 43, before the hour shown
    expect((await daemon.get(`/alerts/${fingerprint}?range=2y`)).status).toBe(400);
    expect((await daemon.get('/alerts/0000000000000000')).status).toBe(404);
  });

  it('every message links each alert to its page under server.external_url, and that path is the page', async () => {
    const link = `https://lookout.example.com/alerts/${fingerprint}`;
    for (const p of slack.delivered()) expect(p.raw).toContain(`<${link}|chart and history>`);
    expect((await daemon.get(new URL(link).pathname)).status).toBe(200);
  });

  it('the status page links each active alert to its page', () => {
    expect(statusWhileFiring).toContain(`<a href="/alerts/${fingerprint}">util-high</a>`);
  });

  describe.skipIf(chromiumBin.skip)(`in headless Chromium (${chromiumBin.needs})`, () => {
    let browser: Browser;
    beforeAll(async () => {
      browser = await chromium.launch({
        executablePath: chromiumBin.require(),
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
        timeout: 30_000,
      });
    }, 40_000);
    afterAll(async () => {
      await browser?.close();
    });

    it.each(['light', 'dark'] as const)('renders in %s mode with no console error, the chart drawn; screenshot in test-artifacts/', async (scheme) => {
      const page = await browser.newPage({ viewport: { width: 1100, height: 900 }, colorScheme: scheme });
      const errors: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error') errors.push(m.text());
      });
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(`${daemon.server.url}/alerts/${fingerprint}`, { waitUntil: 'load', timeout: 20_000 });
      // Evaluated in the page (a string, as the status page's browser test does: the test's types have no DOM).
      const drawn = (await page.evaluate(`(() => {
        const box = (sel) => [...document.querySelectorAll(sel)].map((e) => e.getBBox());
        return {
          series: box('path.chart-series').map((b) => Math.round(b.width)),
          threshold: box('.chart-hline-threshold line').length,
          firing: box('rect.chart-band-firing').map((b) => Math.round(b.width)),
          marks: document.querySelectorAll('.chart-mark circle').length,
          seriesColour: getComputedStyle(document.querySelector('path.chart-series')).stroke,
        };
      })()`)) as { series: number[]; threshold: number; firing: number[]; marks: number; seriesColour: string };
      expect(drawn.series[0]).toBeGreaterThan(100);
      expect(drawn.threshold).toBe(1);
      expect(drawn.firing[0]).toBeGreaterThan(10);
      expect(drawn.marks).toBe(2);
      expect(drawn.seriesColour).not.toBe('none'); // the stylesheet applied (a CSP hash mismatch would leave it unstyled)
      expect(errors).toEqual([]);
      fs.mkdirSync('test-artifacts', { recursive: true });
      await page.screenshot({ path: `test-artifacts/alert-page-${scheme}.png`, fullPage: true });
      await page.close();
    }, 40_000);
  });
});

function iso(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').slice(0, 19) + ' UTC';
}
