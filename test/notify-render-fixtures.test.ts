/**
 * `lookout render` over test/fixtures/render: the rule's real kind judges the fixture reading (over its `history`) and
 * the engine's own annotation rendering fills the templates, so Slack and email show what the daemon would send.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { runRenderCommand } from '../src/notify/render.js';
import { tempStores } from './notify-helpers.js';

const DIR = fileURLToPath(new URL('./fixtures/render/', import.meta.url));
const CONFIG = join(DIR, 'config.yaml');
const SECRETS = ['sl4ck-secret', 'hooks.slack.example', 'sm7p-secret', 'render-api-k3y'];
const stores = tempStores();
afterEach(() => stores.cleanup());

async function render(rule: string, fixture: string, now?: number): Promise<{ code: number; text: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runRenderCommand({ configFile: CONFIG, rule, fixture, out: { write: (t: string) => out.push(t) }, err: { write: (t: string) => err.push(t) }, ...(now ? { now } : {}) });
  return { code, text: out.join(''), err: err.join('') };
}

/** The part of the output under `=== name (type) ===`, up to the next notifier. */
function section(text: string, name: string): string {
  const start = text.indexOf(`=== ${name} `);
  expect(start, `no section for ${name}`).toBeGreaterThanOrEqual(0);
  const next = text.indexOf('\n=== ', start + 1);
  return text.slice(start, next < 0 ? undefined : next);
}

/** How a text appears inside the Slack JSON (quotes and newlines escaped). */
const inJson = (s: string) => JSON.stringify(s).slice(1, -1);

const cases = [
  {
    rule: 'borrow-apy-jump',
    fixture: 'apy-jump.yaml',
    evidence: { value: '9.12%', threshold: '2%', previous: '3.1%' },
    summary: 'borrow APY of USDC/WETH up 602 bps to 9.12% (was 3.1% 1h ago)',
  },
  {
    rule: 'oracle-lag',
    fixture: 'oracle-lag.yaml',
    evidence: { value: '1d4h', threshold: '1d2h29m' },
    summary: 'oracle of wstETH/USDC last updated 1d 4h ago (allowed 1d 2h)',
  },
  {
    rule: 'utilization-extreme',
    fixture: 'utilization.yaml',
    evidence: { value: '98.5%', threshold: '98%' },
    summary: '<!channel> market at 98.5% on base',
  },
  {
    rule: 'benchmark-stale',
    fixture: 'benchmark-incomplete.yaml',
    evidence: { value: '11h', threshold: '6h' },
    summary: 'base usd benchmark is incomplete (11h incomplete, day 2025-01-13)',
  },
];

describe('lookout render over fixtures', () => {
  it.each(cases)('$rule: Slack and email show the evaluated evidence and the real annotations', async (c) => {
    const { code, text, err } = await render(c.rule, join(DIR, c.fixture));
    expect(code, err).toBe(0);
    expect(text).not.toContain('note:'); // every fixture breaches
    const slack = section(text, 'risk-slack');
    const email = section(text, 'desk-email');
    const escSlack = c.summary.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
    const escHtml = escSlack;
    expect(slack).toContain(inJson(`\n> ${escSlack}`));
    expect(slack).not.toContain('<!channel>');
    expect(email).toContain(`\n  summary: ${c.summary}\n`);
    expect(email).toContain(`<p style="margin:4px 0">${escHtml}</p>`);
    expect(slack).toContain(inJson(Object.entries(c.evidence).map(([k, v]) => `${k} *${v}*`).join(' · ')));
    for (const [k, v] of Object.entries(c.evidence)) expect(email).toContain(`\n  ${k}: ${v}\n`);
    expect(slack).toContain('--- resolved ---');
    expect(email).toContain('Subject: [RESOLVED] ' + c.rule);
    for (const s of SECRETS) expect(text, s).not.toContain(s);
  });

  it('says when the rule would not fire: apy_jump without a reading a window old waits', async () => {
    const dir = stores.dir();
    const fixture = join(dir, 'no-history.yaml');
    writeFileSync(fixture, `now: "2025-01-14T12:00:00Z"\nentity: "0xm"\nlabels: { market_id: "0xm", chain: base }\nfields: { borrow_apy: 0.09, market: { loan_asset_symbol: USDC, collateral_asset_symbol: WETH } }\n`);
    const { code, text } = await render('borrow-apy-jump', fixture);
    expect(code).toBe(0);
    expect(text).toContain("note: rule 'borrow-apy-jump' judges this reading 'wait' (no reading 3600s old yet): it would not fire on it");
    for (const s of SECRETS) expect(text, s).not.toContain(s);
  });

  it('takes `now` from the caller when the fixture has none, and relative history times from it', async () => {
    const dir = stores.dir();
    const fixture = join(dir, 'relative.yaml');
    const now = Date.parse('2025-01-14T12:00:00Z');
    writeFileSync(
      fixture,
      `entity: "0xm"\nlabels: { market_id: "0xm", chain: base }\nfields: { borrow_apy: 0.06, market: { loan_asset_symbol: USDC, collateral_asset_symbol: WETH } }\nhistory:\n  - { at: -2h, fields: { borrow_apy: 0.01 } }\n`,
    );
    const { code, text } = await render('borrow-apy-jump', fixture, now);
    expect(code).toBe(0);
    expect(text).toContain('\n  summary: borrow APY of USDC/WETH up 500 bps to 6% (was 1% 1h ago)\n');
    expect(text).toContain('\n  since: 2025-01-14 12:00:00 UTC\n');
  });

  it('a bad time in the fixture is exit 1 naming the place', async () => {
    const dir = stores.dir();
    const fixture = join(dir, 'bad.yaml');
    writeFileSync(fixture, `fields: { borrow_apy: 0.06 }\nhistory:\n  - { at: yesterday, fields: { borrow_apy: 0.01 } }\n`);
    const { code, err } = await render('borrow-apy-jump', fixture);
    expect(code).toBe(1);
    expect(err).toContain("history[0].at: 'yesterday' is not a time");
  });
});
