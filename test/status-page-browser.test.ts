/**
 * The status page in a real browser: headless Chromium (Debian's `chromium`) loads `/` from the real
 * server while alerts fire, and a screenshot is saved to test-artifacts/ for a person to look at.
 */
import fs from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NOW, alert } from './metrics-fixtures.js';
import { pollStatus, startFakeDaemon, type FakeDaemon } from './http-fixtures.js';
import { tool } from './tools.js';

const chromiumBin = tool('chromium', 'chromium');
const EVIL = '<script>window.__pwned = 1</script>';
const TOKEN = 'browser-test-token';

describe.skipIf(chromiumBin.skip)(`status page in headless Chromium (${chromiumBin.needs})`, () => {
  let browser: Browser;
  let daemon: FakeDaemon;

  beforeAll(async () => {
    browser = await chromium.launch({
      executablePath: chromiumBin.require(),
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      timeout: 30_000,
    });
    daemon = await startFakeDaemon({ token: TOKEN });
    daemon.alerts = [
      alert('usdc_utilization_high', '0x3a85e6…c2d1', 'firing', {
        labels: { rule: 'usdc_utilization_high', severity: 'critical', market_id: '0x3a85e6…c2d1', chain: 'ethereum', loan_asset: 'USDC', collateral_asset: EVIL },
        annotations: { summary: `USDC/${EVIL} utilization at 97.0% (threshold 90%)` },
      }),
      alert('oracle_stale', '0x9f1b…77aa', 'firing', {
        severity: 'warning',
        kind: 'oracle_lag',
        value: 5400,
        threshold: 3600,
        labels: { rule: 'oracle_stale', severity: 'warning', market_id: '0x9f1b…77aa', chain: 'base', loan_asset: 'WETH', collateral_asset: 'cbBTC' },
        annotations: { summary: 'oracle of WETH/cbBTC has not updated for 1h 30m' },
      }),
      alert('borrow_apy_jump', '0x51c0…0b3e', 'pending', {
        severity: 'warning',
        value: 0.182,
        threshold: 0.05,
        firing_since: null,
        labels: { rule: 'borrow_apy_jump', severity: 'warning', market_id: '0x51c0…0b3e', chain: 'ethereum', loan_asset: 'DAI', collateral_asset: 'wstETH' },
        annotations: { summary: 'borrow APY of DAI/wstETH jumped 13.2 points' },
      }),
    ];
    daemon.polls = [
      pollStatus('markets', true),
      pollStatus('positions', true, { kind: 'positions', rows: 3120, rejected: 0 }),
      pollStatus('benchmarks', false, { kind: 'benchmarks' }),
    ];
    daemon.silences.add({
      matchers: [{ name: 'chain', op: '=', value: 'base' }],
      endsAt: NOW + 2 * 3_600_000,
      author: 'ops',
      comment: 'base RPC maintenance',
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await daemon?.server.close();
  });

  it.each([
    ['light', 'status-page.png'],
    ['dark', 'status-page-dark.png'],
  ] as const)('lists the firing alert, shows the untrusted symbol as text, in %s mode', async (colorScheme, file) => {
    // The browser answers the page's Basic challenge with the token as password, as a person would.
    const context = await browser.newContext({ colorScheme, viewport: { width: 1280, height: 900 }, httpCredentials: { username: 'ops', password: TOKEN } });
    try {
      const page = await context.newPage();
      const violations: string[] = [];
      page.on('console', (m) => {
        if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
      });
      const res = await page.goto(daemon.server.url + '/', { timeout: 15_000 });
      expect(res?.status()).toBe(200);
      // The CSP allows the page's own stylesheet (by hash) and nothing else: it is applied, and nothing was refused.
      expect(await page.evaluate('getComputedStyle(document.querySelector("section")).borderTopLeftRadius')).toBe('8px');
      expect(violations).toEqual([]);
      const firing = page.locator('tr', { hasText: 'usdc_utilization_high' });
      await expect(firing.count()).resolves.toBe(1);
      expect(await firing.innerText()).toContain('firing');
      expect(await firing.innerText()).toContain(`collateral_asset=${EVIL}`);
      // Each alert's rule links to its page, by fingerprint.
      expect(await firing.locator('a').getAttribute('href')).toBe(`/alerts/${daemon.alerts[0]!.fingerprint}`);
      expect(await page.evaluate('document.querySelectorAll("td.rule a[href^=\'/alerts/\']").length')).toBe(3);
      // Strings, so they run in the page without DOM typings in this Node project.
      expect(await page.evaluate('document.querySelectorAll("script").length')).toBe(0);
      expect(await page.evaluate('typeof window.__pwned')).toBe('undefined');
      expect(await page.locator('tr', { hasText: 'borrow_apy_jump' }).innerText()).toContain('pending');
      expect(await page.locator('tr', { hasText: 'benchmarks' }).innerText()).toContain('failing');
      expect(await page.locator('section', { hasText: 'Silences' }).innerText()).toContain('base RPC maintenance');
      expect(await page.title()).toBe('(2 firing) lookout');
      fs.mkdirSync('test-artifacts', { recursive: true });
      await page.screenshot({ path: `test-artifacts/${file}`, fullPage: true });
      expect(fs.statSync(`test-artifacts/${file}`).size).toBeGreaterThan(10_000);
    } finally {
      await context.close();
    }
  }, 30_000);

  it('a page on another origin cannot create a silence, neither by fetch nor by a form, even with the browser logged in', async () => {
    // The attacker's page: any origin other than lookout's (here another port of the same machine).
    const evil = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>evil</title>'));
    await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
    const evilUrl = `http://localhost:${(evil.address() as AddressInfo).port}/`;
    const target = `${daemon.server.url}/api/silences`;
    const before = daemon.silences.items.size;
    const context = await browser.newContext({ httpCredentials: { username: 'ops', password: TOKEN } });
    try {
      const page = await context.newPage();
      // The browser has logged in to the status page: it holds Basic credentials for lookout's origin.
      expect((await page.goto(daemon.server.url + '/', { timeout: 15_000 }))?.status()).toBe(200);
      await page.goto(evilUrl, { timeout: 15_000 });
      const body = JSON.stringify({ matchers: [{ name: 'severity', op: '=', value: 'critical' }], endsAt: NOW + 7 * 86_400_000, author: 'evil', comment: 'shh' });
      // A no-cors fetch with text/plain: no preflight, the answer is opaque to the page but the request is sent.
      await page.evaluate(`fetch(${JSON.stringify(target)}, { method: 'POST', mode: 'no-cors', credentials: 'include', headers: { 'content-type': 'text/plain' }, body: ${JSON.stringify(body)} }).catch(() => undefined)`);
      expect(daemon.silences.items.size).toBe(before);
      // A form post whose text/plain encoding (name=value) is valid JSON: the page navigates to lookout's answer.
      const answer = page.waitForResponse((r) => r.url() === target, { timeout: 15_000 });
      await page.evaluate(`(() => { const f = document.createElement('form'); f.method = 'POST'; f.action = ${JSON.stringify(target)}; f.enctype = 'text/plain';
        const i = document.createElement('input'); i.name = ${JSON.stringify(body.slice(0, -3))}; i.value = 'h"}'; f.appendChild(i); document.body.appendChild(f); f.submit(); })()`);
      const res = await answer;
      expect(res.status()).toBe(403);
      expect(await res.text()).toContain('cross_site_request');
      expect(daemon.silences.items.size).toBe(before);
    } finally {
      await context.close();
      await new Promise((r) => evil.close(r));
    }
  }, 30_000);

  it.each([
    ['no credentials', undefined],
    ['a wrong password', { username: 'ops', password: 'not-the-token' }],
  ])('refuses the page with %s', async (_name, httpCredentials) => {
    const context = await browser.newContext(httpCredentials ? { httpCredentials } : {});
    try {
      const page = await context.newPage();
      // Chromium either shows the 401 or gives up on the Basic challenge; the page never renders.
      const res = await page.goto(daemon.server.url + '/', { timeout: 15_000 }).catch((err: Error) => err);
      if (res instanceof Error) expect(res.message).toMatch(/ERR_INVALID_AUTH_CREDENTIALS|ERR_UNEXPECTED/);
      else expect(res?.status()).toBe(401);
      expect(await page.locator('text=usdc_utilization_high').count()).toBe(0);
    } finally {
      await context.close();
    }
  }, 30_000);
});
