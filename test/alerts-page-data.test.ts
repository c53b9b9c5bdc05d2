/**
 * What an alert's page is drawn from (src/alerts/page-data.ts), in process: the value series from stored readings,
 * the periods, transitions, notifications and silences within the range, and why there is no series when the rule is
 * gone or the alert is source_down. A real SQLite file, the engine and dispatcher as the daemon drives them.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { alertPageView, type AlertPageSources } from '../src/alerts/page-data.js';
import { fingerprint } from '../src/alerts/lifecycle.js';
import { createAlertRepo } from '../src/alerts/repo.js';
import { ManualClock } from '../src/clock.js';
import type { Silence } from '../src/http/types.js';
import { createNotifications } from '../src/notify/index.js';
import type { Store } from '../src/store/index.js';
import { drive, engineFor, eventList, HOUR, market, MIN, outcome, rule, T0, tempDirs, tempStore } from './alerts-helpers.js';
import { slackRecorders } from './fixtures/slack-recorder.js';
import { notifier, route } from './notify-helpers.js';

const dirs = tempDirs();
const startSlack = slackRecorders();
afterEach(() => dirs.cleanup());

const FP = fingerprint('util', 'm1');
const util = rule({ name: 'util', kind: 'utilization_above', threshold: 0.9, clear_below: 0.85 });
const silence = (id: string, startsAt: number, endsAt: number, value = 'm1'): Silence => ({
  id,
  matchers: [{ name: 'market_id', op: '=', value }],
  startsAt,
  endsAt,
  author: 't',
  comment: id,
});

/** m1 calm, firing from minute 1 to minute 3, both messages delivered; the page's sources over that store. */
async function scenario(): Promise<{ store: Store; src: (over?: Partial<AlertPageSources>) => AlertPageSources }> {
  const { store, src, events } = await delivered([{ m1: 0.5 }, { m1: 0.95 }, { m1: 0.96 }, { m1: 0.5 }]);
  expect(events).toEqual(['firing util/m1', 'resolved util/m1']);
  return { store, src };
}

/**
 * One poll a minute from T0, each the utilization of the markets named, its events delivered to Slack (one message a
 * minute at most for the whole rule: group_by rule); the events and the page's sources over that store.
 */
async function delivered(polls: ReadonlyArray<Record<string, number>>): Promise<{ store: Store; src: (over?: Partial<AlertPageSources>) => AlertPageSources; events: string[] }> {
  const store = tempStore(dirs);
  const clock = new ManualClock(T0);
  const engine = engineFor(store, [util], { clock });
  const slack = await startSlack({ clock });
  const n = createNotifications({
    db: store.db,
    config: {
      notifiers: { slack: notifier({ type: 'slack', webhook_url: slack.url }) },
      routes: [route({ default: true, notify: ['slack'], group_wait: '0s', group_interval: '1m', repeat_interval: '4h' })],
      delivery: { backoff: 1000, max_backoff: 60_000, give_up_after: 3_600_000 },
      watchdog: { enabled: false, severity: 'info' },
    },
    clock,
    random: () => 0.5,
    alerts: { firing: () => engine.alerts().filter((a) => a.state === 'firing'), markNotified: () => undefined },
  });
  const events: string[] = [];
  for (const [i, poll] of polls.entries()) {
    const now = T0 + i * MIN;
    clock.set(now);
    const readings = Object.entries(poll).map(([id, u]) => market(id, now, { utilization: u }));
    const r = drive(store, engine, outcome('markets', 'metrics', readings, now));
    events.push(...eventList(r));
    store.transaction(() => n.outbox.enqueue(r.events, now));
    await n.dispatcher.runDue();
  }
  await n.close(0);
  const src = (over: Partial<AlertPageSources> = {}): AlertPageSources => ({
    db: store.db,
    readings: store.readings,
    alertRepo: createAlertRepo(store.db),
    rules: () => [util],
    silences: () => [],
    ...over,
  });
  return { store, src, events };
}

describe('an alert’s page data', () => {
  it('over a range that holds the episode: the series, the periods, the transitions and both notifications', async () => {
    const { store, src } = await scenario();
    const now = T0 + 4 * MIN;
    const v = alertPageView(src({ version: '1.2.3' }), FP, '1h', now)!;
    expect(v).toMatchObject({ now, range: '1h', threshold: 0.9, clearBelow: 0.85, version: '1.2.3' });
    expect(v.alert).toMatchObject({ fingerprint: FP, rule: 'util', entity: 'm1', state: 'resolved' });
    expect(v.series.map((p) => p.v)).toEqual([0.5, 0.95, 0.96, 0.5]);
    expect(v.periods).toEqual([{ kind: 'firing', from: T0 + MIN, to: T0 + 3 * MIN }]);
    expect(v.transitions).toEqual([
      { at: T0 + MIN, type: 'firing', value: 0.95 },
      { at: T0 + 3 * MIN, type: 'resolved', value: 0.5 },
    ]);
    expect(v.notifications).toEqual([
      { at: T0 + MIN, notifier: 'slack', status: 'firing' },
      { at: T0 + 3 * MIN, notifier: 'slack', status: 'resolved' },
    ]);
    expect(v).not.toHaveProperty('noSeries');
    store.close();
  });

  it('a range that ends before the episode keeps nothing of it; no version given, none shown', async () => {
    const { store, src } = await scenario();
    const now = T0 + 3 * MIN + HOUR + 1; // the 1 h range starts just after the resolve
    const v = alertPageView(src(), FP, '1h', now)!;
    expect([v.series, v.periods, v.transitions, v.notifications]).toEqual([[], [], [], []]);
    expect(v).not.toHaveProperty('version');
    // The last minute of the range still holds the resolve and the period it closed.
    const edge = alertPageView(src(), FP, '1h', T0 + 3 * MIN + HOUR)!;
    expect(edge.periods).toHaveLength(1);
    expect(edge.transitions.map((t) => t.type)).toEqual(['resolved']);
    expect(edge.notifications.map((t) => t.status)).toEqual(['resolved']);
    expect(edge.series.map((p) => p.v)).toEqual([0.5]);
    store.close();
  });

  it('lists the silences in force now that match the alert, not expired, later or other ones', async () => {
    const { store, src } = await scenario();
    const now = T0 + 4 * MIN;
    const sil = [silence('now', now - MIN, now + MIN), silence('starts-now', now, now + MIN), silence('ended', now - 2 * MIN, now), silence('later', now + 1, now + MIN), silence('other', now - MIN, now + MIN, 'm2')];
    const v = alertPageView(src({ silences: () => sil }), FP, '1h', now)!;
    expect(v.silences.map((s) => s.id)).toEqual(['now', 'starts-now']);
    store.close();
  });

  it('no such alert: nothing; a rule no longer configured or a source_down alert: no series, and why', async () => {
    const { store, src } = await scenario();
    const now = T0 + 4 * MIN;
    expect(alertPageView(src(), fingerprint('util', 'm9'), '1h', now)).toBeUndefined();
    const gone = alertPageView(src({ rules: () => [] }), FP, '1h', now)!;
    expect(gone).toMatchObject({ series: [], noSeries: "rule 'util' is no longer configured: its value cannot be drawn.", clearBelow: null });
    expect(gone.periods).toHaveLength(1);
    const repo = createAlertRepo(store.db);
    const downFp = fingerprint('source_down', 'markets');
    const down = { ...repo.getTracked(FP)!.alert, fingerprint: downFp, rule: 'source_down', kind: 'source_down', entity: 'markets' };
    store.transaction(() => repo.saveTracked({ alert: down, cleared_at: null }));
    expect(alertPageView(src(), downFp, '1h', now)).toMatchObject({ series: [], noSeries: 'source_down has no value to draw: it counts failed polls.' });
    store.close();
  });

  it('a rule whose entity has no readings in the range draws an empty series without a reason', async () => {
    const { store, src } = await scenario();
    const repo = createAlertRepo(store.db);
    const fp7 = fingerprint('util', 'm7');
    store.transaction(() => repo.saveTracked({ alert: { ...repo.getTracked(FP)!.alert, fingerprint: fp7, entity: 'm7' }, cleared_at: null }));
    const v = alertPageView(src(), fp7, '1h', T0 + 4 * MIN)!;
    expect(v.series).toEqual([]);
    expect(v).not.toHaveProperty('noSeries');
    store.close();
  });

  it('a message about several alerts gives each its own status; one that only names the fingerprint elsewhere is not about it', async () => {
    // A market whose id holds m1's fingerprint: its messages carry that text, though never m1.
    const other = `0x${FP}`;
    const { store, src, events } = await delivered([
      { m1: 0.95, m2: 0.5, [other]: 0.5 },
      { m1: 0.5, m2: 0.95, [other]: 0.95 }, // one message: m1 resolved, m2 and the other firing
      { m1: 0.5, m2: 0.95, [other]: 0.5 }, // one message: the other resolved, m2 still firing; m1 not in it
    ]);
    expect(events).toEqual(['firing util/m1', 'resolved util/m1', 'firing util/m2', `firing util/${other}`, `resolved util/${other}`]);
    const now = T0 + 3 * MIN;
    const notes = (fp: string) => alertPageView(src(), fp, '1h', now)!.notifications;
    expect(notes(FP)).toEqual([
      { at: T0, notifier: 'slack', status: 'firing' },
      { at: T0 + MIN, notifier: 'slack', status: 'resolved' },
    ]);
    expect(notes(fingerprint('util', 'm2'))).toEqual([
      { at: T0 + MIN, notifier: 'slack', status: 'firing' },
      { at: T0 + 2 * MIN, notifier: 'slack', status: 'firing' },
    ]);
    expect(notes(fingerprint('util', other))).toEqual([
      { at: T0 + MIN, notifier: 'slack', status: 'firing' },
      { at: T0 + 2 * MIN, notifier: 'slack', status: 'resolved' },
    ]);
    store.close();
  });
});
