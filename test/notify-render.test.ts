/** `lookout render`: prints each notifier's message for a fixture reading, without sending and without secrets. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { renderNotification, runRenderCommand } from '../src/notify/render.js';
import { alert, notifier, tempStores } from './notify-helpers.js';

const stores = tempStores();
afterEach(() => stores.cleanup());

it('prints the firing and resolved message of every configured notifier for a fixture', async () => {
  const dir = stores.dir();
  const configFile = join(dir, 'config.yaml');
  writeFileSync(
    configFile,
    `source: { base_url: http://127.0.0.1:1 }
polls:
  - { name: markets, kind: metrics, cron: "*/30 * * * * *" }
notifiers:
  risk-slack: { type: slack, webhook_url: "https://hooks.slack.example/services/T/B/sup3r-secret" }
  desk-email: { type: email, smtp: { host: smtp.example.com, pass: "sm7p-secret" }, from: lookout@example.com, to: [risk@example.com] }
routes:
  - default: true
    notify: [risk-slack]
rules:
  inline:
    - name: usdc-util-high
      kind: utilization_above
      severity: critical
      threshold: 0.95
      annotations:
        summary: "{{market.loan_asset_symbol}} utilization {{utilization | pct}}"
`,
  );
  const fixture = join(dir, 'reading.yaml');
  writeFileSync(fixture, `entity: "0xabc"\nlabels: { market_id: "0xabc", chain: base, loan_asset_symbol: "<!channel>", collateral_asset_symbol: WETH }\nfields: { utilization: 0.97, block: 42, market: { loan_asset_symbol: "<!channel>" } }\n`);
  const chunks: string[] = [];
  const code = await runRenderCommand({ configFile, rule: 'usdc-util-high', fixture, out: { write: (t: string) => chunks.push(t) }, now: 1_700_000_000_000 });
  const text = chunks.join('');
  expect(code, text).toBe(0);
  expect(text).toContain('=== risk-slack (slack) ===');
  expect(text).toContain('=== desk-email (email) — not on this alert’s route ===');
  expect(text).toContain('FIRING:1 usdc-util-high');
  expect(text).toContain('Subject: [FIRING:1] usdc-util-high');
  expect(text).toContain('Subject: [RESOLVED] usdc-util-high');
  expect(text).toContain('value *97%*');
  expect(text).toContain('&lt;!channel&gt; utilization 97%'); // the real `pct` filter, as the daemon renders it
  expect(text).not.toContain('sup3r-secret');
  expect(text).not.toContain('sm7p-secret');
});

it('an unknown rule is exit 1 with a message', async () => {
  const dir = stores.dir();
  const configFile = join(dir, 'config.yaml');
  writeFileSync(configFile, `source: { base_url: http://127.0.0.1:1 }\npolls:\n  - { name: markets, kind: metrics, cron: "*/30 * * * * *" }\n`);
  const err: string[] = [];
  expect(await runRenderCommand({ configFile, rule: 'nope', fixture: configFile, out: { write: () => 0 }, err: { write: (t: string) => err.push(t) } })).toBe(1);
  expect(err.join('')).toContain("no rule named 'nope'");
});

it('renderNotification renders alerts or events for one notifier config', () => {
  const out = renderNotification(notifier({ type: 'console', color: 'always' }), [alert('util', 'm1')], { now: 1_700_000_000_000 });
  expect(out).toContain('FIRING critical util WETH/USDC on base (m1): value=97% threshold=95% previous=93%');
  const resolved = renderNotification(notifier({ type: 'email', smtp: { host: 'h' }, from: 'a@b.c', to: ['d@e.f'] }), [
    { type: 'resolved', at: 1, alert: alert('util', 'm1', { state: 'resolved', resolved_at: 1_700_000_600_000 }) },
  ]);
  expect(resolved).toContain('Subject: [RESOLVED] util');
  expect(resolved).toContain('lasted: 10m');
});
