import { describe, expect, it } from 'vitest';
import { escapeHtml, relativeTime, renderStatusPage, type StatusView } from '../src/http/status-page.js';
import { NOW, alert } from './metrics-fixtures.js';
import { pollStatus } from './http-fixtures.js';


function view(extra: Partial<StatusView> = {}): StatusView {
  return { now: NOW, alerts: [], polls: [], silences: [], ready: { ok: true }, version: '0.1.0', ...extra };
}

describe('status page rendering', () => {
  it.each([
    ['<b>', '&#60;b&#62;'],
    ['a & b', 'a &#38; b'],
    [`"quoted" 'single'`, '&#34;quoted&#34; &#39;single&#39;'],
    ['plain', 'plain'],
  ])('escapes %s', (input, out) => {
    expect(escapeHtml(input)).toBe(out);
  });

  it.each([
    [NOW - 5_000, '5s ago'],
    [NOW - 125_000, '2m ago'],
    [NOW - 3 * 3_600_000 - 60_000, '3h 1m ago'],
    [NOW - 2 * 86_400_000, '2d 0h ago'],
    [NOW + 7_200_000, 'in 2h 0m'],
    [null, '—'],
  ])('relative time of %s is %s', (t, text) => {
    expect(relativeTime(t, NOW)).toBe(text);
  });

  it.each([
    ['utilization_above', 0.97, 0.9, '97%', '90%'],
    ['oracle_lag', 5400, 3960, '1h30m', '1h6m'],
    ['unverified_position', 25_000, 10_000, '$25,000', '$10,000'],
  ])('shows a %s alert’s value and threshold in their unit', (kind, value, threshold, v, t) => {
    const html = renderStatusPage(view({ alerts: [alert('r', 'e', 'firing', { kind, value, threshold })] }));
    expect(html).toContain(`${v} <span class="muted">vs ${t}</span>`);
  });

  it('escapes every untrusted value: labels, annotations, entity, poll errors, silences', () => {
    // Each untrusted value carries its own marker, so each one is seen escaped, not just "most of them".
    const evil = (what: string) => `<script>alert("${what}")</script>`;
    const places = ['entity', 'label', 'summary', 'poll', 'poll_error', 'matcher', 'author', 'comment', 'ready', 'version'] as const;
    const html = renderStatusPage(
      view({
        alerts: [
          alert('util_high', evil('entity'), 'firing', {
            labels: { rule: 'util_high', loan_asset: evil('label') },
            annotations: { summary: evil('summary') },
          }),
        ],
        polls: [pollStatus(evil('poll'), false, { error: evil('poll_error') })],
        silences: [{ id: 's1', matchers: [{ name: 'loan_asset', op: '=', value: evil('matcher') }], startsAt: NOW, endsAt: NOW + 60_000, author: evil('author'), comment: evil('comment') }],
        ready: { ok: false, reason: evil('ready') },
        version: evil('version'),
      }),
    );
    expect(html).not.toContain('<script');
    const escaped = (what: string) => evil(what).replace(/</g, '&#60;').replace(/>/g, '&#62;').replace(/"/g, '&#34;');
    const missing = places.filter((p) => !html.includes(escaped(p)));
    expect(missing, 'each untrusted value is shown, escaped').toEqual([]);
  });

  it('lists firing before pending, critical before warning, and says how many', () => {
    const html = renderStatusPage(
      view({
        alerts: [
          alert('apy_jump', 'm9', 'pending', { severity: 'warning' }),
          alert('util_high', 'm2', 'pending'),
          alert('util_high', 'm1', 'firing'),
          alert('old', 'm3', 'resolved'),
        ],
      }),
    );
    const order = ['m1', 'm2', 'm9'].map((e) => html.indexOf(`>${e}<`));
    expect(order.every((i) => i > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(html).not.toContain('>m3<');
    expect(html).toContain('1 firing · 2 pending');
    expect(html).toContain('<title>(1 firing) lookout</title>');
  });

  it('auto-refreshes and needs no script', () => {
    const html = renderStatusPage(view());
    expect(html).toContain('<meta http-equiv="refresh" content="10">');
    expect(html).not.toContain('<script');
    expect(html).toContain('No firing or pending alerts.');
    expect(html).toContain('No poll has run yet.');
    expect(html).toContain('No active silences.');
  });

  it('shows each poll’s status, last success, duration and error', () => {
    const html = renderStatusPage(view({ polls: [pollStatus('markets', true), pollStatus('positions', false)] }));
    expect(html).toMatch(/markets[\s\S]*badge ok">ok[\s\S]*1\.50 s/);
    expect(html).toMatch(/positions[\s\S]*badge firing">failing[\s\S]*×3[\s\S]*10m ago[\s\S]*503 — service unavailable/);
  });

  it('hides expired silences', () => {
    const s = { id: 'gone', matchers: [{ name: 'rule', op: '=' as const, value: 'x' }], startsAt: NOW - 2000, endsAt: NOW - 1000, author: 'a', comment: 'c' };
    expect(renderStatusPage(view({ silences: [s] }))).toContain('No active silences.');
  });
});
