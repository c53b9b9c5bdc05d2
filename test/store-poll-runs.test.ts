import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PollOutcome } from '../src/model.js';
import { openStore, type Store } from '../src/store/index.js';
import { market, tempDirs } from './store-helpers.js';

const dirs = tempDirs();
let store: Store;
let path: string;
beforeEach(() => {
  path = join(dirs.make(), 'lookout.db');
  store = openStore(path);
});
afterEach(() => {
  store.close();
  dirs.cleanup();
});

function outcome(poll: string, ok: boolean, started_at: number, extra: Partial<PollOutcome> = {}): PollOutcome {
  return {
    poll,
    kind: poll === 'markets' ? 'metrics' : poll,
    ok,
    readings: ok ? [market('m1', started_at)] : [],
    rejected: [],
    started_at,
    finished_at: started_at + 250,
    ...(ok ? {} : { error: `GET /x: 503 at ${started_at}`, errorReason: 'http_5xx' }),
    ...extra,
  };
}

describe('poll runs', () => {
  it('records a run with its counts, error and rejection reasons, and returns its id', () => {
    const id = store.polls.record(
      outcome('markets', true, 1000, {
        rejected: [
          { reason: 'invalid_field', detail: 'utilization' },
          { reason: 'invalid_field', detail: 'borrow_apy' },
          { reason: 'missing_id', detail: '' },
        ],
      }),
    );
    expect(store.polls.last('markets')).toEqual({
      id,
      poll: 'markets',
      kind: 'metrics',
      started_at: 1000,
      finished_at: 1250,
      duration_ms: 250,
      ok: true,
      error: null,
      error_reason: null,
      rows: 1,
      rejected: 3,
      rejected_reasons: { invalid_field: 2, missing_id: 1 },
    });
    const failed = store.polls.record(outcome('markets', false, 2000));
    expect(failed).toBeGreaterThan(id);
    expect(store.polls.last('markets')).toMatchObject({ id: failed, ok: false, error: 'GET /x: 503 at 2000', error_reason: 'http_5xx', rows: 0 });
    expect(store.polls.recent('markets', 5).map((r) => r.id)).toEqual([failed, id]);
    expect(store.polls.last('other')).toBeUndefined();
  });

  // Each row: the sequence of run results, and the consecutive failures after each.
  it.each([
    ['all successes', [true, true, true], [0, 0, 0]],
    ['failures count up', [false, false, false], [1, 2, 3]],
    ['a success resets the count', [false, false, true, false], [1, 2, 0, 1]],
    ['recovery after a long outage', [true, false, false, false, false, true], [0, 1, 2, 3, 4, 0]],
  ])('consecutive failures: %s', (_name, results, expected) => {
    const seen = results.map((ok, i) => {
      store.polls.record(outcome('positions', ok, 1000 * (i + 1)));
      return store.polls.consecutiveFailures('positions');
    });
    expect(seen).toEqual(expected);
  });

  it('counts failures per poll, independently', () => {
    store.polls.record(outcome('markets', false, 1000));
    store.polls.record(outcome('positions', true, 1000));
    store.polls.record(outcome('markets', false, 2000));
    expect(store.polls.consecutiveFailures('markets')).toBe(2);
    expect(store.polls.consecutiveFailures('positions')).toBe(0);
    expect(store.polls.consecutiveFailures('never-ran')).toBe(0);
  });

  it('summarises every poll: last run, last success, last error, failures, duration', () => {
    store.polls.record(outcome('markets', true, 1000));
    store.polls.record(outcome('markets', false, 2000));
    store.polls.record(outcome('markets', false, 3000, { finished_at: 3900 }));
    store.polls.record(outcome('benchmarks', false, 1500));
    store.polls.record(outcome('benchmarks', true, 2500));
    const [benchmarks, markets] = store.polls.lastAll();
    expect(markets).toEqual({
      poll: 'markets',
      kind: 'metrics',
      last: expect.objectContaining({ started_at: 3000, ok: false }),
      last_success_at: 1250,
      last_error: 'GET /x: 503 at 3000',
      last_error_reason: 'http_5xx',
      last_error_at: 3900,
      consecutive_failures: 2,
      duration_ms: 900,
      runs: 3,
      failures: 2,
    });
    // the last error stays visible after a recovery; the failure streak does not
    expect(benchmarks).toMatchObject({
      last_success_at: 2750,
      last_error: 'GET /x: 503 at 1500',
      last_error_at: 1750,
      consecutive_failures: 0,
      runs: 2,
      failures: 1,
    });
  });

  it('a failure without a message still records one', () => {
    store.polls.record({ poll: 'p', kind: 'positions', ok: false, readings: [], rejected: [], started_at: 1, finished_at: 2 });
    expect(store.polls.last('p')).toMatchObject({ error: 'failed', error_reason: 'unknown' });
  });

  it('prunes old runs but keeps each poll newest run and its summary', () => {
    for (const t of [1000, 2000, 3000]) store.polls.record(outcome('markets', t !== 1000, t));
    store.polls.record(outcome('retired', false, 500));
    expect(store.polls.prune(2500)).toBe(2);
    expect(store.polls.recent('markets').map((r) => r.started_at)).toEqual([3000]);
    expect(store.polls.last('retired')?.started_at).toBe(500);
    expect(store.polls.lastAll().map((s) => [s.poll, s.runs, s.consecutive_failures])).toEqual([
      ['markets', 3, 0],
      ['retired', 1, 1],
    ]);
  });

  it('forgets a poll that left the config', () => {
    store.polls.record(outcome('retired', false, 500));
    store.polls.record(outcome('markets', true, 500));
    expect(store.polls.forget('retired')).toBe(1);
    expect(store.polls.lastAll().map((s) => s.poll)).toEqual(['markets']);
    expect(store.polls.consecutiveFailures('retired')).toBe(0);
  });

  it('survives a restart: the failure streak is read back from the file', () => {
    store.polls.record(outcome('markets', false, 1000));
    store.polls.record(outcome('markets', false, 2000));
    store.close();
    store = openStore(path);
    expect(store.polls.consecutiveFailures('markets')).toBe(2);
    store.polls.record(outcome('markets', false, 3000));
    expect(store.polls.consecutiveFailures('markets')).toBe(3);
  });

  it('one poll in one transaction: readings and its run together, or neither', () => {
    const o = outcome('markets', true, 1000);
    store.transaction(() => {
      store.readings.savePoll(o.poll, o.readings, o.finished_at);
      store.polls.record(o);
    });
    expect(store.polls.last('markets')?.rows).toBe(1);
    expect(store.readings.latestForPoll('markets')).toHaveLength(1);
    const o2 = outcome('markets', true, 2000);
    expect(() =>
      store.transaction(() => {
        store.readings.savePoll(o2.poll, o2.readings, o2.finished_at);
        store.polls.record({ ...o2, started_at: Number.NaN }); // NOT NULL constraint fails
      }),
    ).toThrow();
    expect(store.polls.recent('markets')).toHaveLength(1);
    expect(store.readings.latest('market', 'm1')?.at).toBe(1000);
  });
});
