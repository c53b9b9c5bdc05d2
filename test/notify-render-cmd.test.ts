/**
 * `lookout render`'s parts (src/notify/render.ts) one by one: how a fixture file becomes a reading and its history, how
 * the rule's kind judges it (a stale reading is a data error, as in the engine), the alert that verdict makes, how alerts
 * and events become a message's alerts, and the command's answers when there is no notifier or the fixture is missing.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/load.js';
import type { RuleBase } from '../src/rules/schema.js';
import { fixtureAlert, judgeFixture, readFixture, renderNotification, runRenderCommand } from '../src/notify/render.js';
import { alert, notifier, tempStores } from './notify-helpers.js';

const NOW = Date.parse('2025-01-14T12:00:00Z');
const stores = tempStores();
afterEach(() => stores.cleanup());

const CONFIG = `source: { base_url: http://127.0.0.1:1 }
polls:
  - { name: markets, kind: metrics, cron: "*/30 * * * * *" }
  - { name: positions, kind: positions, cron: "*/30 * * * * *" }
rules:
  inline:
    - name: util
      kind: utilization_above
      severity: warning
      threshold: 0.9
      for: 5m
    - name: util-fresh
      kind: utilization_above
      threshold: 0.9
      max_reading_age: 10m
    - name: big-position
      kind: threshold
      reading: position
      field: value_usd
      op: ">"
      value: 1000
`;

function files(fixture: string, config = CONFIG): { dir: string; configFile: string; fixture: string } {
  const dir = stores.dir();
  writeFileSync(join(dir, 'config.yaml'), config);
  writeFileSync(join(dir, 'fixture.yaml'), fixture);
  return { dir, configFile: join(dir, 'config.yaml'), fixture: join(dir, 'fixture.yaml') };
}

function rule(configFile: string, name: string): RuleBase {
  return loadConfig(configFile).rules.find((r) => r.rule.name === name)!.rule;
}

async function render(configFile: string, ruleName: string, fixture: string): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runRenderCommand({ configFile, rule: ruleName, fixture, out: { write: (t: string) => out.push(t) }, err: { write: (t: string) => err.push(t) }, now: NOW });
  return { code, out: out.join(''), err: err.join('') };
}

describe('readFixture', () => {
  it('fields at the top level, labels as text, the entity from the fields, and history of the reading’s kind and entity, oldest first', () => {
    const { fixture } = files(`utilization: 0.97\nmarket_id: "0xm1"\nlabels: { chain: base, decimals: 6 }\nhistory:\n  - { at: -5m, fields: { utilization: 0.5 } }\n  - { at: -1h, utilization: 0.4 }\n  - { at: ${NOW - 600_000}, kind: position, entity: other, fields: { value_usd: 1 } }\n`);
    const f = readFixture(fixture, 'market', NOW);
    expect(f.now).toBe(NOW);
    expect(f.reading).toEqual({ kind: 'market', entity: '0xm1', at: NOW, labels: { chain: 'base', decimals: '6' }, fields: { utilization: 0.97, market_id: '0xm1' } });
    expect(f.history).toEqual([
      { kind: 'market', entity: '0xm1', at: NOW - 3_600_000, labels: {}, fields: { utilization: 0.4 } },
      { kind: 'position', entity: 'other', at: NOW - 600_000, labels: {}, fields: { value_usd: 1 } },
      { kind: 'market', entity: '0xm1', at: NOW - 300_000, labels: {}, fields: { utilization: 0.5 } },
    ]);
  });

  it('the fixture’s own now (an ISO date) wins, and relative times count from it', () => {
    const { fixture } = files(`now: "2025-01-01T00:00:00Z"\nat: -2m\nkind: position\nfields: { id: "pos-1", value_usd: 5 }\n`);
    const f = readFixture(fixture, 'market', NOW);
    const own = Date.parse('2025-01-01T00:00:00Z');
    expect(f.now).toBe(own);
    expect(f.reading).toMatchObject({ kind: 'position', entity: 'pos-1', at: own - 120_000 });
  });

  it('the entity: given, else the fields’ market_id or id, else the labels’ market_id, else "fixture"', () => {
    const entity = (text: string) => readFixture(files(text).fixture, 'market', NOW).reading.entity;
    expect(entity(`entity: e1\nfields: { market_id: m, id: i }\nlabels: { market_id: l }\n`)).toBe('e1');
    expect(entity(`fields: { id: i }\nlabels: { market_id: l }\n`)).toBe('i');
    expect(entity(`fields: { x: 1 }\nlabels: { market_id: l }\n`)).toBe('l');
    expect(entity(`fields: { x: 1 }\n`)).toBe('fixture');
    expect(readFixture(files(`at: 1000\nfields: { x: 1 }\n`).fixture, 'market', NOW).reading.at).toBe(1000);
  });

  it.each([
    ['a list', `- a\n- b\n`, 'a fixture is a YAML/JSON object with labels and fields'],
    ['an empty file', ``, 'a fixture is a YAML/JSON object with labels and fields'],
    ['a text', `hello\n`, 'a fixture is a YAML/JSON object with labels and fields'],
    ['fields that are not a map', `fields: 5\n`, 'reading: fields must be a map'],
    ['history that is not a list', `fields: { x: 1 }\nhistory: { at: -1m }\n`, 'history: a list of readings, each with `at` and `fields`'],
    ['a history entry that is not a map', `fields: { x: 1 }\nhistory:\n  - { at: -1m, fields: { x: 0 } }\n  - 5\n`, "history[1]: a reading with 'at' and 'fields'"],
    ['a history entry that is a list', `fields: { x: 1 }\nhistory:\n  - [1]\n`, "history[0]: a reading with 'at' and 'fields'"],
    ['a history entry without a time', `fields: { x: 1 }\nhistory:\n  - { fields: { x: 0 } }\n`, "history[0]: give its time as 'at'"],
    ['a bad now', `now: soon\nfields: { x: 1 }\n`, "now: 'soon' is not a time (ms, an ISO date, or -15m for 15 minutes before now)"],
    ['a relative time that is no duration', `at: -soon\nfields: { x: 1 }\n`, "reading.at: '-soon' is not a time"],
    ['an infinite time', `at: .inf\nfields: { x: 1 }\n`, "reading.at: 'Infinity' is not a time"],
  ])('refuses %s, naming the file and the place', (_name, text, message) => {
    const { fixture } = files(text);
    expect(() => readFixture(fixture, 'market', NOW)).toThrow(`${fixture}: ${message}`);
  });
});

describe('judgeFixture and fixtureAlert', () => {
  it('a market reading older than max_reading_age is a data error, as in the engine; exactly that old is judged', () => {
    const { configFile, fixture } = files(`fields: { utilization: 0.95 }\n`);
    const f = readFixture(fixture, 'market', NOW);
    const util = rule(configFile, 'util');
    const aged = (ms: number) => ({ ...f, reading: { ...f.reading, at: NOW - ms } });
    expect(judgeFixture(util, aged(3_600_001), 3_600_000)).toEqual({ status: 'data_error', reason: 'stale_reading' });
    expect(judgeFixture(util, aged(3_600_000), 3_600_000)).toMatchObject({ status: 'breach', value: 0.95, threshold: 0.9 });
    expect(judgeFixture(util, aged(1e9), undefined)).toMatchObject({ status: 'breach' });
    // The rule's own max_reading_age wins over the config's.
    const fresh = rule(configFile, 'util-fresh');
    expect(judgeFixture(fresh, aged(600_001), 3_600_000)).toEqual({ status: 'data_error', reason: 'stale_reading' });
    expect(judgeFixture(fresh, aged(600_000), 3_600_000)).toMatchObject({ status: 'breach' });
  });

  it('the config’s max_reading_age is for market readings only', () => {
    const { configFile, fixture } = files(`at: -2h\nfields: { id: p1, value_usd: 5000 }\n`);
    const f = readFixture(fixture, 'position', NOW);
    expect(judgeFixture(rule(configFile, 'big-position'), f, 60_000)).toMatchObject({ status: 'breach', value: 5000, threshold: 1000 });
  });

  it('the alert of a breach: values, block, data time and the rule’s for before it fired', () => {
    const { configFile, fixture } = files(`at: -1m\nfields: { utilization: 0.95, block: "77" }\nlabels: { market_id: m1 }\n`);
    const f = readFixture(fixture, 'market', NOW);
    const util = rule(configFile, 'util');
    const a = fixtureAlert(util, f, judgeFixture(util, f, undefined));
    expect(a).toMatchObject({
      rule: 'util',
      kind: 'utilization_above',
      entity: 'm1',
      severity: 'warning',
      state: 'firing',
      value: 0.95,
      threshold: 0.9,
      previous_value: null,
      peak: 0.95,
      data_at: NOW - 60_000,
      block: 77,
      pending_since: NOW - 300_000,
      firing_since: NOW,
    });
    expect(a.labels).toMatchObject({ rule: 'util', severity: 'warning', market_id: 'm1' });
  });

  it('a verdict that is not a breach makes an alert without evidence; a data error keeps its value when finite', () => {
    const { configFile, fixture } = files(`fields: { utilization: 0.95 }\n`);
    const f = readFixture(fixture, 'market', NOW);
    const util = rule(configFile, 'util');
    const wait = fixtureAlert(util, f, { status: 'wait', reason: 'x' });
    expect([wait.value, wait.threshold, wait.previous_value, wait.peak]).toEqual([null, null, null, null]);
    const err = fixtureAlert(util, f, { status: 'data_error', reason: 'x', value: 7 });
    expect([err.value, err.threshold, err.peak]).toEqual([7, null, 7]);
    const inf = fixtureAlert(util, f, { status: 'breach', value: Number.POSITIVE_INFINITY, threshold: 0.9, previous: Number.NaN });
    expect([inf.value, inf.threshold, inf.previous_value]).toEqual([null, 0.9, null]);
    const ok = fixtureAlert(util, f, { status: 'ok', value: 0.5, threshold: 0.9, previous: 0.4 });
    expect([ok.value, ok.threshold, ok.previous_value]).toEqual([0.5, 0.9, 0.4]);
  });
});

describe('renderNotification', () => {
  const console = notifier({ type: 'console', color: 'never' });
  const line = (items: Parameters<typeof renderNotification>[1]) => renderNotification(console, items, { now: NOW });

  it('words each event as the daemon does: a settle by the alert’s state, a flap as flapping', () => {
    const a = alert('util', 'm1');
    const resolved = { ...a, state: 'resolved' as const, resolved_at: NOW };
    expect(line([{ type: 'firing', at: NOW, alert: a }])).toContain('FIRING critical util');
    expect(line([{ type: 'flapping', at: NOW, alert: a }])).toContain('FLAPPING critical util');
    expect(line([{ type: 'settled', at: NOW, alert: a }])).toContain('FIRING critical util');
    expect(line([{ type: 'settled', at: NOW, alert: resolved }])).toContain('RESOLVED critical util');
    expect(line([{ type: 'resolved', at: NOW, alert: a }])).toContain('RESOLVED critical util');
    expect(line([a])).toContain('FIRING critical util');
    expect(line([resolved])).toContain('RESOLVED critical util');
    expect(line([{ ...a, state: 'pending' }])).toContain('FIRING critical util');
  });

  it('the unit given is the one shown; the name defaults to the type', () => {
    const a = alert('util', 'm1', { kind: 'threshold', value: 1500, threshold: 1000, previous_value: null });
    expect(renderNotification(console, [a], { now: NOW, unit: 'usd' })).toContain('value=$1,500 threshold=$1,000');
    expect(renderNotification(console, [a], { now: NOW })).toContain('value=1500 threshold=1000');
    const hook = renderNotification(notifier({ type: 'webhook', url: 'http://127.0.0.1:1/h' }), [a], { now: NOW });
    expect(JSON.parse(hook.slice(hook.indexOf('{')))).toMatchObject({ receiver: 'webhook', groupLabels: { rule: 'util' }, dedupKey: 'lk-render-preview', groupKey: 'render' });
    const named = renderNotification(notifier({ type: 'webhook', url: 'http://127.0.0.1:1/h' }), [a], { now: NOW, name: 'ops-hook' });
    expect(JSON.parse(named.slice(named.indexOf('{')))).toMatchObject({ receiver: 'ops-hook' });
  });
});

describe('runRenderCommand', () => {
  it('without notifiers shows the console notifier, and notes a verdict that would not fire with its reason', async () => {
    const { configFile, fixture } = files(`at: -2h\nfields: { utilization: 0.95 }\nlabels: { market_id: m1, chain: base }\n`);
    const r = await render(configFile, 'util-fresh', fixture);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain("note: rule 'util-fresh' judges this reading 'data_error' (stale_reading): it would not fire on it\n");
    expect(r.out).toContain('no notifiers configured; showing the console notifier\n');
    expect(r.out).toContain('=== console (console) ===\n--- firing ---\n');
    expect(r.out).not.toContain('not on this alert’s route');
    const ok = await render(configFile, 'util', files(`fields: { utilization: 0.5 }\n`).fixture);
    expect(ok.out).toContain("note: rule 'util' judges this reading 'ok': it would not fire on it\n");
  });

  it('judges a threshold rule’s reading kind and shows its values in its field’s unit', async () => {
    const { configFile, fixture } = files(`fields: { id: p1, value_usd: 5000 }\n`);
    const r = await render(configFile, 'big-position', fixture);
    expect(r.code, r.err).toBe(0);
    expect(r.out).not.toContain('note:');
    expect(r.out).toContain('value=$5,000 threshold=$1,000');
    expect(r.out).toContain('--- resolved ---\n');
    expect(r.out).toContain('2025-01-14 13:00:00 UTC RESOLVED warning big-position p1: value=$5,000 threshold=$1,000 peak=$5,000 lasted=1h [lk-render-preview]');
  });

  it('a fixture that cannot be read is exit 2 with the reason; a bad config is exit 1', async () => {
    const { dir, configFile } = files(`fields: {}\n`);
    const missing = await render(configFile, 'util', join(dir, 'nope.yaml'));
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/^lookout render: ENOENT/);
    expect(missing.out).toBe('');
    const bad = files(`fields: {}\n`, 'source: 5\n');
    const cfg = await render(bad.configFile, 'util', bad.fixture);
    expect(cfg.code).toBe(1);
    expect(cfg.err).toMatch(/^lookout render: /);
  });
});

describe('render: the edges', () => {
  it('a fixture’s reserved keys are never fields; a null `fields` falls back to the top level; a null time is no time', () => {
    const { fixture } = files(`now: "2025-01-14T12:00:00Z"\nkind: market\nentity: e1\nat: ~\nlabels: { chain: base }\nhistory: []\nfields: ~\nutilization: 0.9\n`);
    const f = readFixture(fixture, 'position', NOW - 1);
    expect(f.reading).toEqual({ kind: 'market', entity: 'e1', at: NOW, labels: { chain: 'base' }, fields: { utilization: 0.9 } });
  });

  it.each([
    ['a time that is not text or a number', `at: true\nfields: { x: 1 }\n`, "reading.at: 'true' is not a time"],
    ['a duration without its minus', `at: 15m\nfields: { x: 1 }\n`, "reading.at: '15m' is not a time"],
    ['a null history entry', `fields: { x: 1 }\nhistory:\n  - ~\n`, "history[0]: a reading with 'at' and 'fields'"],
  ])('refuses %s', (_name, text, message) => {
    const { fixture } = files(text);
    expect(() => readFixture(fixture, 'market', NOW)).toThrow(`${fixture}: ${message}`);
    expect(() => readFixture(fixture, 'market', NOW)).toThrow(expect.objectContaining({ code: 'E_BAD_REQUEST' }));
  });

  it('a relative time may have blanks around it', () => {
    expect(readFixture(files(`at: " -5m "\nfields: { x: 1 }\n`).fixture, 'market', NOW).reading.at).toBe(NOW - 300_000);
  });

  it('judges as a new alert (not yet active): hysteresis does not hold it', () => {
    const { configFile, fixture } = files(
      `fields: { utilization: 0.85 }\n`,
      CONFIG.replace('rules:\n  inline:\n', 'rules:\n  inline:\n    - { name: hyst, kind: utilization_above, threshold: 0.9, clear_below: 0.8 }\n'),
    );
    expect(judgeFixture(rule(configFile, 'hyst'), readFixture(fixture, 'market', NOW), undefined)).toMatchObject({ status: 'ok', value: 0.85 });
  });

  it('a rule kind that is unknown waits, and one that throws is a data error naming the failure', () => {
    const { configFile, fixture } = files(`fields: { id: p1, value_usd: 5 }\n`);
    const f = readFixture(fixture, 'position', NOW);
    const big = rule(configFile, 'big-position');
    expect(judgeFixture({ ...big, kind: 'nope' }, f, undefined)).toEqual({ status: 'wait', reason: "rule kind 'nope' cannot be evaluated here" });
    const broken = judgeFixture({ ...big, op: 'nope' } as RuleBase, f, undefined);
    expect(broken).toMatchObject({ status: 'data_error' });
    expect((broken as { reason: string }).reason).toMatch(/^evaluate_failed: \S/);
    expect(fixtureAlert(big, f, judgeFixture(big, f, undefined)).fingerprint).toBe('render');
  });

  it('no alerts render an empty group; the preview is dated by the caller’s now', () => {
    const hook = notifier({ type: 'webhook', url: 'http://127.0.0.1:1/h' });
    const empty = renderNotification(hook, [], { now: NOW });
    expect(JSON.parse(empty.slice(empty.indexOf('{')))).toMatchObject({ groupLabels: { rule: '' }, alerts: [] });
    expect(renderNotification(notifier({ type: 'console', color: 'never' }), [alert('util', 'm1')], { now: NOW })).toMatch(/^2025-01-14 12:00:00 UTC FIRING critical util /);
  });

  it('marks the notifiers off this alert’s route, a rule’s own notify list included', async () => {
    const config = CONFIG.replace('rules:', 'notifiers:\n  a: { type: console, color: never }\n  b: { type: console, color: never }\nroutes:\n  - { default: true, notify: [a] }\nrules:').replace(
      'rules:\n  inline:\n',
      'rules:\n  inline:\n    - { name: own, kind: utilization_above, threshold: 0.9, notify: [b] }\n',
    );
    const { configFile, fixture } = files(`fields: { utilization: 0.95 }\n`, config);
    const own = await render(configFile, 'own', fixture);
    expect(own.code, own.err).toBe(0);
    expect(own.out).toContain('=== a (console) — not on this alert’s route ===\n');
    expect(own.out).toContain('=== b (console) ===\n');
    const util = await render(configFile, 'util', fixture);
    expect(util.out).toContain('=== a (console) ===\n');
    expect(util.out).toContain('=== b (console) — not on this alert’s route ===\n');
    expect(util.out).not.toContain('no notifiers configured');
  });
});

it('the firing preview is the notifier’s own, at now, in the rule’s unit', async () => {
  const { configFile, fixture } = files(`fields: { id: p1, value_usd: 5000 }\n`);
  const r = await render(configFile, 'big-position', fixture);
  expect(r.out).toContain('--- firing ---\n2025-01-14 12:00:00 UTC FIRING warning big-position p1: value=$5,000 threshold=$1,000 [lk-render-preview]\n');
});
