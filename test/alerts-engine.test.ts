import { afterEach, describe, expect, it } from 'vitest';
import { builtinDescription } from '../src/alerts/builtin.js';
import { AlertEngine } from '../src/alerts/engine.js';
import { fingerprint } from '../src/alerts/lifecycle.js';
import { ManualClock } from '../src/clock.js';
import { silentLogger } from '../src/log.js';
import type { AlertEvent } from '../src/model.js';
import { runPoll } from '../src/poll-runner.js';
import { openStore } from '../src/store/index.js';
import type { RuleKind } from '../src/rules/rule-kind.js';
import { pollSchema } from '../src/source/polls/schemas.js';
import { defaults, drive, engineFor, eventList, HOUR, market, MIN, outcome, pollStages, rule, T0, tempDirs, tempStore } from './alerts-helpers.js';

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

const util = (over: Record<string, unknown> = {}) =>
  rule({
    name: 'util-high',
    kind: 'utilization_above',
    severity: 'critical',
    threshold: 0.95,
    labels: { team: 'risk' },
    annotations: { summary: '{{market.loan_asset_symbol}} utilization {{utilization | pct}}' },
    ...over,
  });

const metrics = (readings: ReturnType<typeof market>[], at: number, ok = true) => outcome('markets', 'metrics', readings, at, ok);

describe('AlertEngine', () => {
  it('fires with the rule, alertname, severity, entity and rule labels, and rendered annotations', () => {
    const store = tempStore(dirs);
    const engine = engineFor(store, [util()]);
    const r = drive(store, engine, metrics([market('m1', T0, { utilization: 0.97 }), market('m2', T0)], T0));
    expect(eventList(r)).toEqual(['firing util-high/m1']);
    expect(r.evaluated).toBe(2);
    const a = engine.repo.get(fingerprint('util-high', 'm1'))!;
    expect(a).toMatchObject({ state: 'firing', severity: 'critical', kind: 'utilization_above', value: 0.97, threshold: 0.95, block: 100, data_at: T0 });
    expect(a.labels).toEqual({
      rule: 'util-high',
      alertname: 'util-high',
      severity: 'critical',
      team: 'risk',
      market_id: 'm1',
      chain: 'base',
      loan_asset_symbol: 'USDC',
      collateral_asset_symbol: 'WETH',
      protocol: 'morpho',
    });
    expect(a.annotations).toEqual({ summary: 'USDC utilization 97%' });
    expect(engine.repo.events(a.fingerprint).map((e) => e.type)).toEqual(['firing']);
    expect(engine.repo.get(fingerprint('util-high', 'm2'))).toBeUndefined(); // nothing stored for a quiet pair
    store.close();
  });

  it('writes alert state in the caller transaction: a rollback leaves nothing', () => {
    const store = tempStore(dirs);
    const engine = engineFor(store, [util()]);
    expect(() =>
      store.transaction(() => {
        engine.applyPoll(metrics([market('m1', T0, { utilization: 0.99 })], T0), T0);
        throw new Error('crash after evaluation');
      }),
    ).toThrow('crash');
    expect(engine.alerts()).toEqual([]);
    expect(engine.repo.events()).toEqual([]);
    store.close();
  });

  it('applies hysteresis through the kind: firing holds inside the clear_below band', () => {
    const store = tempStore(dirs);
    const engine = engineFor(store, [util({ clear_below: 0.92 })]);
    const seq = [0.97, 0.93, 0.92, 0.91].map((u, i) => drive(store, engine, metrics([market('m1', T0 + i * MIN, { utilization: u })], T0 + i * MIN)));
    expect(eventList(seq)).toEqual(['firing util-high/m1', 'resolved util-high/m1']);
    expect(seq[3]!.events[0]!.at).toBe(T0 + 3 * MIN);
    store.close();
  });

  it('a failed poll changes no alert; source_down fires after `after` failures and resolves on success', () => {
    const store = tempStore(dirs);
    const engine = engineFor(store, [util()]);
    drive(store, engine, metrics([market('m1', T0, { utilization: 0.99 })], T0));
    const fails = [1, 2, 3, 4].map((i) => drive(store, engine, metrics([], T0 + i * MIN, false)));
    expect(eventList(fails)).toEqual(['firing source_down/markets']);
    expect(fails[2]!.events[0]!.alert).toMatchObject({
      labels: { rule: 'source_down', alertname: 'source_down', severity: 'warning', poll: 'markets' },
      annotations: { summary: 'poll markets failed 3 times in a row', description: 'last error (http_5xx): GET /graphql: 503' },
    });
    expect(engine.repo.get(fingerprint('util-high', 'm1'))!.state).toBe('firing');
    const back = drive(store, engine, metrics([market('m1', T0 + 5 * MIN, { utilization: 0.99 })], T0 + 5 * MIN));
    expect(eventList(back)).toEqual(['resolved source_down/markets']);
    store.close();
  });

  it('resolves an entity missing from absent_for successful polls, on the last of them', () => {
    const store = tempStore(dirs);
    const engine = engineFor(store, [util({ absent_for: 3 })]);
    drive(store, engine, metrics([market('m1', T0, { utilization: 0.99 }), market('m2', T0)], T0));
    const polls = [1, 2, 3].map((i) => drive(store, engine, metrics([market('m2', T0 + i * MIN)], T0 + i * MIN)));
    expect(eventList(polls)).toEqual(['resolved util-high/m1']);
    expect(polls[2]!.events[0]!.at).toBe(T0 + 3 * MIN);
    store.close();
  });

  it('does not count failed polls, rejected rows or other polls\u2019 entities as absence', () => {
    const store = tempStore(dirs);
    const engine = engineFor(store, [util({ absent_for: 2 })]);
    drive(store, engine, metrics([market('m1', T0, { utilization: 0.99 })], T0));
    drive(store, engine, metrics([], T0 + MIN, false));
    drive(store, engine, metrics([], T0 + 2 * MIN, false));
    const rejected = outcome('markets', 'metrics', [], T0 + 3 * MIN, true, { rejected: [{ reason: 'invalid_field', entity: 'm1', detail: 'utilization: "abc"' }] });
    drive(store, engine, rejected);
    drive(store, engine, rejected);
    // a second metrics poll that never saw m1 is not the poll m1 went missing from
    drive(store, engine, outcome('markets-eth', 'metrics', [market('m9', T0 + 4 * MIN)], T0 + 4 * MIN));
    drive(store, engine, outcome('markets-eth', 'metrics', [market('m9', T0 + 5 * MIN)], T0 + 5 * MIN));
    expect(engine.repo.get(fingerprint('util-high', 'm1'))!.state).toBe('firing');
    store.close();
  });

  it('an entity that stops matching select counts as absent', () => {
    const store = tempStore(dirs);
    const engine = engineFor(store, [util({ absent_for: 1, select: { loan_asset_symbol: 'USDC' } })]);
    drive(store, engine, metrics([market('m1', T0, { utilization: 0.99 })], T0));
    const moved = market('m1', T0 + MIN, { utilization: 0.99 });
    moved.labels.loan_asset_symbol = 'DAI';
    (moved.fields.market as Record<string, unknown>).loan_asset_symbol = 'DAI';
    expect(eventList(drive(store, engine, metrics([moved], T0 + MIN)))).toEqual(['resolved util-high/m1']);
    store.close();
  });

  it('a reading older than max_reading_age is a data error, not a breach', () => {
    const store = tempStore(dirs);
    const engine = engineFor(store, [util()]);
    const now = T0 + 7 * HOUR;
    const r = drive(store, engine, metrics([market('m1', T0, { utilization: 0.99 })], now));
    expect(r.events).toEqual([]);
    expect(r.dataErrors).toEqual([{ rule: 'util-high', entity: 'm1', reason: 'stale_reading' }]);
    const own = engineFor(store, [util({ name: 'u2', max_reading_age: '8h' })]);
    expect(eventList(store.transaction(() => own.applyPoll(metrics([market('m1', T0, { utilization: 0.99 })], now), now)))).toEqual(['firing u2/m1']);
    store.close();
  });

  it('reports a kind\u2019s data_error verdict and changes nothing', () => {
    const store = tempStore(dirs);
    const engine = engineFor(store, [util()]);
    drive(store, engine, metrics([market('m1', T0, { utilization: 0.99 })], T0));
    const r = drive(store, engine, metrics([market('m1', T0 + MIN, { utilization: 1.5 })], T0 + MIN));
    expect(r.events).toEqual([]);
    expect(r.dataErrors).toHaveLength(1);
    expect(r.dataErrors[0]!.reason).toMatch(/outside/);
    expect(engine.repo.get(fingerprint('util-high', 'm1'))!.state).toBe('firing');
    store.close();
  });

  it('tick fires a pending alert when `for` elapses and resolves when keep_firing_for runs out', () => {
    const store = tempStore(dirs);
    const engine = engineFor(store, [util({ for: '10m', keep_firing_for: '5m' })]);
    expect(eventList(drive(store, engine, metrics([market('m1', T0, { utilization: 0.99 })], T0)))).toEqual(['pending util-high/m1']);
    expect(engine.nextDeadline()).toBe(T0 + 10 * MIN);
    expect(eventList(store.transaction(() => engine.tick(T0 + 10 * MIN - 1)))).toEqual([]);
    expect(eventList(store.transaction(() => engine.tick(T0 + 10 * MIN)))).toEqual(['firing util-high/m1']);
    drive(store, engine, metrics([market('m1', T0 + 11 * MIN, { utilization: 0.5 })], T0 + 11 * MIN));
    expect(engine.nextDeadline()).toBe(T0 + 16 * MIN);
    expect(eventList(store.transaction(() => engine.tick(T0 + 16 * MIN)))).toEqual(['resolved util-high/m1']);
    expect(engine.nextDeadline()).toBeUndefined();
    store.close();
  });

  it('keeps the watchdog firing once, without repeating the firing event', () => {
    const store = tempStore(dirs);
    const engine = engineFor(store, [], { watchdog: { enabled: true, severity: 'info' } });
    expect(eventList(store.transaction(() => engine.tick(T0)))).toEqual(['firing watchdog/lookout']);
    expect(eventList(store.transaction(() => engine.tick(T0 + 5000)))).toEqual([]);
    engine.reload({ watchdog: { enabled: false, severity: 'info' } });
    expect(eventList(store.transaction(() => engine.tick(T0 + 10_000)))).toEqual(['resolved watchdog/lookout']);
    store.close();
  });

  it('on reload keeps the alerts of a changed rule and judges them by the new values; a removed rule\u2019s alerts resolve', () => {
    const store = tempStore(dirs);
    const engine = engineFor(store, [util(), util({ name: 'util-other', threshold: 0.9 })]);
    drive(store, engine, metrics([market('m1', T0, { utilization: 0.97 })], T0));
    engine.reload({ rules: [util({ threshold: 0.98 })] });
    const r = drive(store, engine, metrics([market('m1', T0 + MIN, { utilization: 0.97 })], T0 + MIN));
    expect(eventList(r)).toEqual(['resolved util-other/m1', 'resolved util-high/m1']);
    expect(r.events[1]!.alert.threshold).toBe(0.98);
    store.close();
  });

  it('a disabled rule is not evaluated and its alerts resolve', () => {
    const store = tempStore(dirs);
    const engine = engineFor(store, [util()]);
    drive(store, engine, metrics([market('m1', T0, { utilization: 0.97 })], T0));
    engine.reload({ rules: [util({ enabled: false })] });
    expect(eventList(store.transaction(() => engine.tick(T0 + MIN)))).toEqual(['resolved util-high/m1']);
    expect(drive(store, engine, metrics([market('m1', T0 + 2 * MIN, { utilization: 0.97 })], T0 + 2 * MIN)).evaluated).toBe(0);
    store.close();
  });

  it('a kind that throws is a data error, not a crash', () => {
    const boom: RuleKind = { kind: 'boom', description: 'throws', reads: ['market'], context: [], params: {}, evaluate: () => { throw new Error('bug'); } };
    const store = tempStore(dirs);
    const engine = engineFor(store, [{ ...util(), name: 'b', kind: 'boom' }], { kinds: [boom] });
    const r = drive(store, engine, metrics([market('m1', T0)], T0));
    expect(r.dataErrors).toEqual([{ rule: 'b', entity: 'm1', reason: 'evaluate_failed' }]);
    store.close();
  });

  it('restart: a firing alert persisted in the file is still firing for a new engine, with no second firing event', () => {
    const dir = dirs.make();
    const file = `${dir}/state.db`;
    let store = openStore(file);
    let engine = engineFor(store, [util({ for: '2m' })]);
    for (let i = 0; i <= 3; i++) drive(store, engine, metrics([market('m1', T0 + i * MIN, { utilization: 0.99 })], T0 + i * MIN));
    expect(engine.repo.events().map((e) => e.type)).toEqual(['pending', 'firing']);
    store.close();

    store = openStore(file);
    engine = new AlertEngine({ store, rules: [util({ for: '2m' })], ...defaults, clock: new ManualClock(T0), log: silentLogger });
    expect(engine.repo.firing().map((a) => a.entity)).toEqual(['m1']);
    const after = [4, 5, 6].map((i) => drive(store, engine, metrics([market('m1', T0 + i * MIN, { utilization: 0.99 })], T0 + i * MIN)));
    after.push(store.transaction(() => engine.tick(T0 + 7 * MIN)));
    expect(eventList(after)).toEqual([]);
    expect(engine.repo.events().map((e) => e.type)).toEqual(['pending', 'firing']);
    const resolved = drive(store, engine, metrics([market('m1', T0 + 8 * MIN, { utilization: 0.5 })], T0 + 8 * MIN));
    expect(eventList(resolved)).toEqual(['resolved util-high/m1']);
    expect(resolved.events[0]!.alert.firing_since).toBe(T0 + 2 * MIN);
    store.close();
  });

  it('markNotified keeps the newest time, and a later save does not overwrite it', () => {
    const store = tempStore(dirs);
    const engine = engineFor(store, [util()]);
    drive(store, engine, metrics([market('m1', T0, { utilization: 0.99 })], T0));
    const fp = fingerprint('util-high', 'm1');
    engine.repo.markNotified(fp, T0 + 5000);
    engine.repo.markNotified(fp, T0 + 1000);
    drive(store, engine, metrics([market('m1', T0 + MIN, { utilization: 0.98 })], T0 + MIN));
    expect(engine.repo.get(fp)!.last_notified_at).toBe(T0 + 5000);
    expect(engine.repo.list({ state: 'firing', rule: 'util-high' })).toHaveLength(1);
    expect(engine.repo.list({ state: ['resolved'] })).toHaveLength(0);
    store.close();
  });
});

describe('AlertEngine source_down', () => {
  /**
   * One poll run a minute (step i at T0 + i·1m) through the daemon's own path: the real poll runner (`runPoll`:
   * record the run, save readings, engine.applyPoll, in one transaction) over a real store; only the fetch is given.
   *   fail      the `markets` poll fails (a 503)
   *   ok        `markets` succeeds with a reading
   *   empty     `markets` succeeds with nothing (a 404 list: nothing matched)
   *   rejected  `markets` succeeds, but every row it sent failed validation (rejected, no readings)
   *   abort     a `markets` run cut short by shutdown: the runner records nothing, so it is not a failure
   *   other-fail / other-ok  the same for a second poll, `other`
   */
  type Step = 'fail' | 'ok' | 'empty' | 'rejected' | 'abort' | 'other-fail' | 'other-ok';

  async function sourceDownRun(steps: Step[], after: number, alerting: Partial<typeof defaults.alerting> = {}): Promise<string[]> {
    const store = tempStore(dirs);
    const clock = new ManualClock(T0);
    const engine = engineFor(store, [util()], { sourceDown: { after, severity: 'warning' }, alerting: { ...defaults.alerting, ...alerting }, clock });
    const events: AlertEvent[] = [];
    let step: Step = 'ok';
    let abort = new AbortController();
    const stages = pollStages(store, clock, engine, {
      fetch: async (poll, signal, now) => {
        if (step === 'abort') {
          abort.abort(new Error('shutting down'));
          throw signal.reason;
        }
        if (step.endsWith('fail')) throw new Error('GET /graphql: 503');
        if (step === 'rejected') return { readings: [], rejected: [{ reason: 'invalid_field', entity: 'm1', detail: 'utilization: "abc"' }] };
        return { readings: step === 'empty' ? [] : [market(poll.name === 'markets' ? 'm1' : 'm9', now)], rejected: [] };
      },
      enqueue: (evs) => void events.push(...(evs as AlertEvent[])),
    });
    try {
      for (const [i, s] of steps.entries()) {
        step = s;
        clock.set(T0 + (i + 1) * MIN);
        const poll = pollSchema.parse({ name: s.startsWith('other') ? 'other' : 'markets', kind: 'metrics', cron: '* * * * *' });
        await runPoll(poll, abort.signal, stages);
        if (abort.signal.aborted) abort = new AbortController(); // the daemon restarts
      }
      expect(events.every((e) => e.alert.rule === 'source_down' && e.alert.labels.poll === e.alert.entity)).toBe(true);
      return events.map((e) => `${e.type} ${e.alert.entity} @${(e.at - T0) / MIN}m`);
    } finally {
      store.close();
    }
  }

  const steps = (s: string) => s.split(' ') as Step[];
  const flappy = { flap_threshold: 2, flap_window: 3 * MIN };
  it.each<[name: string, after: number, steps: string, events: string[], alerting?: Partial<typeof defaults.alerting>]>([
    ['after: 1 fires on the first failure, resolves on the next success', 1, 'fail ok', ['firing markets @1m', 'resolved markets @2m']],
    ['after − 1 failures: no event', 3, 'fail fail', []],
    ['the `after`-th consecutive failure fires', 3, 'fail fail fail', ['firing markets @3m']],
    ['more failures while firing fire nothing again', 3, 'fail fail fail fail fail fail', ['firing markets @3m']],
    ['a success between failures resets the count', 3, 'fail fail ok fail fail', []],
    ['a successful poll that rejected rows is a success: it resets the count', 3, 'fail fail rejected fail fail', []],
    ['a successful poll that rejected rows is a success: it resolves', 2, 'fail fail rejected', ['firing markets @2m', 'resolved markets @3m']],
    ['an empty successful poll (nothing matched) resolves', 2, 'fail fail empty', ['firing markets @2m', 'resolved markets @3m']],
    ['the resolve comes on the first success, once', 2, 'fail fail fail ok ok', ['firing markets @2m', 'resolved markets @4m']],
    ['after a resolve the count starts again from zero', 2, 'fail fail ok fail fail', ['firing markets @2m', 'resolved markets @3m', 'firing markets @5m']],
    ['each poll counts its own failures', 2, 'fail other-fail fail other-fail', ['firing markets @3m', 'firing other @4m']],
    ['another poll’s success neither resets nor resolves', 2, 'fail other-ok fail other-ok', ['firing markets @3m']],
    ['an aborted run (shutdown) is not a failure and does not reset the count', 3, 'fail abort fail abort abort fail', ['firing markets @6m']],
    // Settling needs the success to reach a resolved-but-flapping source_down: the engine passes it the ok.
    ['a flapping source_down settles on a success once flap_window is quiet', 1, 'fail ok fail ok ok ok ok', ['firing markets @1m', 'resolved markets @2m', 'flapping markets @3m', 'settled markets @7m'], flappy],
  ])('%s', async (_name, after, s, events, alerting) => {
    expect(await sourceDownRun(steps(s), after, alerting)).toEqual(events);
  });

  it('source_down carries its severity and the failure count against `after`, and its resolve says the poll answers again', () => {
    const store = tempStore(dirs);
    const engine = engineFor(store, [], { sourceDown: { after: 2, severity: 'critical' } });
    const r = [1, 2, 3].map((i) => drive(store, engine, metrics([], T0 + i * MIN, false)));
    expect(r[1]!.events.map((e) => e.alert)).toMatchObject([{ severity: 'critical', value: 2, threshold: 2, annotations: { summary: 'poll markets failed 2 times in a row' } }]);
    const back = drive(store, engine, metrics([], T0 + 4 * MIN));
    expect(back.events.map((e) => e.alert)).toMatchObject([{ state: 'resolved', annotations: { summary: 'poll markets is answering again' } }]);
    store.close();
  });
});

describe('AlertEngine.nextDeadline', () => {
  it('is the earliest pending `for` among the live alerts, whatever order they are stored in', () => {
    for (const fors of [['5m', '10m', '15m'], ['15m', '10m', '5m']]) {
      const store = tempStore(dirs);
      const engine = engineFor(store, ['a', 'b', 'c'].map((name, i) => util({ name, for: fors[i] })));
      drive(store, engine, metrics([market('m1', T0, { utilization: 0.99 })], T0));
      expect(engine.nextDeadline()).toBe(T0 + 5 * MIN);
      store.transaction(() => engine.tick(T0 + 5 * MIN));
      expect(engine.nextDeadline()).toBe(T0 + 10 * MIN);
      store.close();
    }
  });

  it('has nothing due for a firing alert that still breaches, nor for a pending one its poll stopped returning', () => {
    const store = tempStore(dirs);
    const engine = engineFor(store, [util(), util({ name: 'slow', for: '10m' })]);
    drive(store, engine, metrics([market('m1', T0, { utilization: 0.99 })], T0));
    expect(engine.repo.get(fingerprint('util-high', 'm1'))!.state).toBe('firing');
    expect(engine.repo.get(fingerprint('slow', 'm1'))!.state).toBe('pending');
    drive(store, engine, metrics([market('m2', T0 + MIN, { utilization: 0.5 })], T0 + MIN)); // m1 absent once
    expect(engine.repo.get(fingerprint('slow', 'm1'))!).toMatchObject({ state: 'pending', absent_polls: 1 });
    expect(engine.nextDeadline()).toBeUndefined();
    store.close();
  });

  it('sees alerts another engine on the same file wrote since it last asked (it answers from its kept rows)', () => {
    const store = tempStore(dirs);
    const rules = [util({ name: 'slow', for: '10m' })];
    const engine = engineFor(store, rules);
    drive(store, engine, metrics([market('m1', T0, { utilization: 0.5 })], T0));
    expect(engine.nextDeadline()).toBeUndefined();
    // Another process (a second connection, its own engine) makes m2 pending; then this one writes nothing.
    const other = openStore(store.path);
    const otherEngine = engineFor(other, rules);
    drive(other, otherEngine, metrics([market('m2', T0 + MIN, { utilization: 0.99 })], T0 + MIN));
    other.close();
    expect(engine.nextDeadline()).toBe(T0 + 11 * MIN);
    // And in this connection: a row this engine did not write itself (a tick of the other engine's alert).
    store.transaction(() => engine.tick(T0 + 11 * MIN));
    expect(engine.repo.get(fingerprint('slow', 'm2'))!.state).toBe('firing');
    expect(engine.nextDeadline()).toBeUndefined();
    store.close();
  });
});

describe('built-in alert descriptions', () => {
  it('source_down says the poll succeeded when it answers again, and "unknown" for a failure that named no error', () => {
    const o = outcome('markets', 'metrics', [], T0);
    expect(builtinDescription.sourceDown(o, 'warning', { status: 'ok', value: 0, threshold: 3 }).annotations).toEqual({
      summary: 'poll markets is answering again',
      description: 'poll markets succeeded',
    });
    const bare = { ...outcome('markets', 'metrics', [], T0), ok: false };
    expect(builtinDescription.sourceDown(bare, 'warning', { status: 'breach', value: 3, threshold: 3 }).annotations.description).toBe('last error: unknown');
  });

  it('the watchdog carries its labels and says what its silence means', () => {
    expect(builtinDescription.watchdog('info')).toEqual({
      labels: { rule: 'watchdog', alertname: 'watchdog', severity: 'info' },
      annotations: {
        summary: 'lookout is running and its alerts reach you',
        description: 'This alert always fires. If it stops arriving, lookout or its notification path is broken.',
      },
    });
  });
});

describe('AlertEngine flapping', () => {
  it('an alert that flips too often sends one flapping event, stays quiet, and a tick settles it', () => {
    const store = tempStore(dirs);
    const engine = engineFor(store, [util({ flap_threshold: 3, flap_window: '10m' })]);
    const results = [];
    for (let i = 0; i < 10; i++) {
      results.push(drive(store, engine, metrics([market('m1', T0 + i * MIN, { utilization: i % 2 === 0 ? 0.99 : 0.5 })], T0 + i * MIN)));
    }
    expect(eventList(results)).toEqual(['firing util-high/m1', 'resolved util-high/m1', 'firing util-high/m1', 'flapping util-high/m1']);
    const a = engine.repo.get(fingerprint('util-high', 'm1'))!;
    expect(a).toMatchObject({ flapping: true, state: 'resolved' });
    // last change at 9m: settles once 10 quiet minutes have passed
    expect(engine.nextDeadline()).toBe(T0 + 19 * MIN);
    expect(eventList(store.transaction(() => engine.tick(T0 + 19 * MIN - 1)))).toEqual([]);
    const settled = store.transaction(() => engine.tick(T0 + 19 * MIN));
    expect(eventList(settled)).toEqual(['settled util-high/m1']);
    expect(settled.events[0]!.alert).toMatchObject({ state: 'resolved', flapping: false });
    expect(engine.repo.events(a.fingerprint).map((e) => e.type)).toEqual(['firing', 'resolved', 'firing', 'flapping', 'settled']);
    store.close();
  });
});

describe('sharding: an entity that moves to another replica', () => {
  it('is forgotten without a RESOLVED on the replica that gave it away; one it keeps is untouched', () => {
    const store = tempStore(dirs);
    let mine = new Set(['m1', 'm2']);
    const engine = engineFor(store, [rule({ name: 'util', kind: 'utilization_above', threshold: 0.9 })], { owns: (a) => mine.has(a.entity) });
    const fired = drive(store, engine, outcome('markets', 'metrics', [market('m1', T0, { utilization: 0.95 }), market('m2', T0, { utilization: 0.95 })], T0));
    expect(eventList(fired)).toEqual(['firing util/m1', 'firing util/m2']);
    // A resize: m1 now belongs to another replica (the config reload that changes `shard`).
    mine = new Set(['m2']);
    engine.reload({});
    const after = engine.tick(T0 + MIN);
    expect(eventList(after)).toEqual([]);
    expect(engine.alerts().map((a) => `${a.entity} ${a.state}`)).toEqual(['m2 firing']);
    // Its next polls no longer carry m1 (the shard filter drops it): nothing about m1, ever.
    const later = [1, 2, 3, 4].map((i) => drive(store, engine, outcome('markets', 'metrics', [market('m2', T0 + i * MIN, { utilization: 0.95 })], T0 + i * MIN)));
    expect(eventList(later)).toEqual([]);
  });
});

describe('adoption: taking over an alert another replica had firing (read from Alertmanager)', () => {
  const util = rule({ name: 'util', kind: 'utilization_above', threshold: 0.9, for: '10m' });
  const found = (entity: string, startsAt: number, r = 'util') => ({ rule: r, entity, labels: { rule: r, alertname: r, market_id: entity }, startsAt });

  it('fires on its first breaching reading here, without waiting for `for` again, and only for entities it owns', () => {
    const store = tempStore(dirs);
    const engine = engineFor(store, [util], { owns: (a) => a.entity !== 'theirs' });
    const now = T0 + HOUR;
    const taken = store.transaction(() => engine.adopt([found('m1', T0), found('theirs', T0), found('m9', T0, 'no-such-rule')], now));
    expect(taken.map((a) => a.entity)).toEqual(['m1']);
    // No message yet: the next tick does not fire it on the other replica's word alone.
    expect(eventList(store.transaction(() => engine.tick(now + 1000)))).toEqual([]);
    expect(engine.repo.get(fingerprint('util', 'm1'))).toMatchObject({ state: 'pending', pending_since: T0 - 10 * MIN });
    // Its first reading here breaches: firing at once, with this replica's value.
    const first = drive(store, engine, outcome('markets', 'metrics', [market('m1', now + 5000, { utilization: 0.97 })], now + 5000));
    expect(eventList(first)).toEqual(['firing util/m1']);
    expect(first.events[0]!.alert).toMatchObject({ value: 0.97, firing_since: now + 5000 });
  });

  it('a newly owned entity without adoption waits the whole `for` (what adoption saves)', () => {
    const store = tempStore(dirs);
    const engine = engineFor(store, [util]);
    const now = T0 + HOUR;
    const first = drive(store, engine, outcome('markets', 'metrics', [market('m1', now, { utilization: 0.97 })], now));
    expect(eventList(first)).toEqual(['pending util/m1']);
  });

  it('an adopted alert whose first reading here no longer breaches is cancelled without a message', () => {
    const store = tempStore(dirs);
    const engine = engineFor(store, [util]);
    const now = T0 + HOUR;
    store.transaction(() => engine.adopt([found('m1', T0)], now));
    const first = drive(store, engine, outcome('markets', 'metrics', [market('m1', now + 5000, { utilization: 0.5 })], now + 5000));
    expect(eventList(first)).toEqual(['cancelled util/m1']);
  });

  it('leaves an alert it already holds active alone', () => {
    const store = tempStore(dirs);
    const engine = engineFor(store, [rule({ name: 'util', kind: 'utilization_above', threshold: 0.9 })]);
    drive(store, engine, outcome('markets', 'metrics', [market('m1', T0, { utilization: 0.95 })], T0));
    const before = engine.repo.get(fingerprint('util', 'm1'));
    expect(store.transaction(() => engine.adopt([found('m1', T0 - HOUR)], T0 + MIN))).toEqual([]);
    expect(engine.repo.get(fingerprint('util', 'm1'))).toEqual(before);
  });
});
