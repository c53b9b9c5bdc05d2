/**
 * The retry stage's parts on their own (src/notify/delivery.ts): the backoff's doubling, cap and jitter, the token
 * bucket's refill, and the messages table over a real SQLite file — which message goes next, when the next attempt is,
 * what each mark writes, and what a prune deletes. The dispatcher tests drive these only through whole deliveries.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { backoffDelay, MessageStore, TokenBucket } from '../src/notify/delivery.js';
import type { Store } from '../src/store/index.js';
import { tempStores } from './notify-helpers.js';

const T0 = 1_700_000_000_000;
const stores = tempStores();
afterEach(() => stores.cleanup());

describe('backoffDelay', () => {
  const policy = { backoff: 1000, max_backoff: 10_000, give_up_after: 3_600_000 };

  it('doubles from backoff per attempt, caps at max_backoff, and jitters in [base/2, base]', () => {
    const at = (attempt: number, r: number) => backoffDelay(attempt, policy, () => r);
    expect([1, 2, 3, 4, 5, 6].map((n) => at(n, 1))).toEqual([1000, 2000, 4000, 8000, 10_000, 10_000]);
    expect([1, 2, 3, 4, 5].map((n) => at(n, 0))).toEqual([500, 1000, 2000, 4000, 5000]);
    expect(at(3, 0.5)).toBe(3000);
    expect(at(1, 0.0011)).toBe(501); // rounded to whole ms
    expect(at(0, 1)).toBe(1000); // attempt 0 (or less) counts as the first
    expect(at(-3, 1)).toBe(1000);
  });
});

describe('TokenBucket', () => {
  it('starts full, spends one token a take, and refills at rate tokens a second up to burst', () => {
    const b = new TokenBucket(2, 3, T0);
    expect([b.take(T0), b.take(T0), b.take(T0), b.take(T0)]).toEqual([true, true, true, false]);
    expect(b.ready(T0)).toBe(false);
    expect(b.nextAt(T0)).toBe(T0 + 500);
    expect(b.ready(T0 + 250)).toBe(false);
    expect(b.nextAt(T0 + 250)).toBe(T0 + 500); // half a token there, half to come
    expect(b.ready(T0 + 499)).toBe(false);
    expect(b.ready(T0 + 500)).toBe(true);
    expect(b.nextAt(T0 + 500)).toBe(T0 + 500);
    expect(b.take(T0 + 500)).toBe(true);
    // A long quiet spell refills to burst, not beyond.
    const later = T0 + 60_000;
    expect([b.take(later), b.take(later), b.take(later), b.take(later)]).toEqual([true, true, true, false]);
  });

  it('a time before the last one neither refills nor moves the clock back', () => {
    const b = new TokenBucket(1, 1, T0);
    expect(b.take(T0)).toBe(true);
    expect(b.ready(T0 - 5000)).toBe(false);
    expect(b.nextAt(T0 - 5000)).toBe(T0 - 5000 + 1000);
    expect(b.ready(T0 + 999)).toBe(false);
    expect(b.take(T0 + 1000)).toBe(true);
  });

  it('a rate under one a second waits whole seconds for the token', () => {
    const b = new TokenBucket(0.25, 1, T0);
    expect(b.take(T0)).toBe(true);
    expect(b.nextAt(T0)).toBe(T0 + 4000);
    expect(b.nextAt(T0 + 1000)).toBe(T0 + 4000);
    expect(b.take(T0 + 3999)).toBe(false);
    expect(b.take(T0 + 4000)).toBe(true);
  });
});

describe('MessageStore', () => {
  function setup(): { store: Store; ms: MessageStore; add(row: { key: string; notifier?: string; group?: string; at?: number; next?: number; status?: string }): number } {
    const store = stores.open();
    const ms = new MessageStore(store.db);
    const insert = store.db.prepare(
      `INSERT INTO notify_messages (dedup_key, notifier, group_key, status, payload, created_at, next_attempt_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    return {
      store,
      ms,
      add: (r) =>
        Number(
          insert.run(r.key, r.notifier ?? 'slack', r.group ?? 'g1', r.status ?? 'pending', JSON.stringify({ dedupKey: r.key }), r.at ?? T0, r.next ?? r.at ?? T0)
            .lastInsertRowid,
        ),
    };
  }

  it('the next due message is the oldest pending one of the notifier whose group has nothing pending before it', () => {
    const { ms, add } = setup();
    const a = add({ key: 'a', group: 'g1', next: T0 + 5000 });
    add({ key: 'b', group: 'g1', next: T0 }); // due, but behind a in its group
    const c = add({ key: 'c', group: 'g2', next: T0 });
    add({ key: 'd', notifier: 'email', group: 'g3', next: T0 });
    expect(ms.nextDue('slack', T0)?.dedup_key).toBe('c');
    expect(ms.nextDue('slack', T0 - 1)).toBeUndefined();
    expect(ms.nextDue('email', T0)?.dedup_key).toBe('d');
    ms.markSent(c, T0);
    expect(ms.nextDue('slack', T0)).toBeUndefined(); // b still waits for a
    expect(ms.nextDue('slack', T0 + 5000)?.dedup_key).toBe('a');
    ms.markSent(a, T0 + 5000);
    expect(ms.nextDue('slack', T0 + 5000)?.dedup_key).toBe('b');
  });

  it('due notifiers and the earliest next attempt count pending messages only, skipping held notifiers', () => {
    const { ms, add } = setup();
    expect(ms.nextAttemptAt()).toBeUndefined();
    expect(ms.dueNotifiers(T0)).toEqual([]);
    const s1 = add({ key: 's1', notifier: 'slack', group: 'g1', next: T0 + 3000 });
    add({ key: 's2', notifier: 'slack', group: 'g2', next: T0 + 2000 });
    add({ key: 'e1', notifier: 'email', group: 'g3', next: T0 + 1000 });
    add({ key: 'w1', notifier: 'hook', group: 'g4', next: T0 - 9000, status: 'sent' });
    expect(ms.nextAttemptAt()).toBe(T0 + 1000);
    expect(ms.nextAttemptAt(new Set(['email']))).toBe(T0 + 2000);
    expect(ms.nextAttemptAt(new Set(['email', 'slack']))).toBeUndefined();
    expect(ms.dueNotifiers(T0 + 999)).toEqual([]);
    expect(ms.dueNotifiers(T0 + 1000)).toEqual(['email']);
    expect(ms.dueNotifiers(T0 + 3000).sort()).toEqual(['email', 'slack']);
    ms.markFailed(s1, T0, 'boom');
    expect(ms.nextAttemptAt(new Set(['email']))).toBe(T0 + 2000);
  });

  it('each mark writes its status, attempt count, times and error', () => {
    const { ms, add } = setup();
    const id = add({ key: 'k1' });
    const row = () => ms.list()[0]!;
    ms.markAttempt(id, T0 + 10);
    expect(row()).toMatchObject({ status: 'pending', attempts: 0, last_attempt_at: T0 + 10, next_attempt_at: T0, sent_at: null, error: null });
    ms.markRetry(id, T0 + 20, T0 + 1020, 'HTTP 500');
    expect(row()).toMatchObject({ status: 'pending', attempts: 1, last_attempt_at: T0 + 20, next_attempt_at: T0 + 1020, error: 'HTTP 500' });
    ms.markPartsSent(id, 2);
    ms.markPartsSent(id, 1); // never goes back
    expect(row().parts_sent).toBe(2);
    ms.markSent(id, T0 + 30);
    expect(row()).toMatchObject({ status: 'sent', attempts: 2, last_attempt_at: T0 + 30, sent_at: T0 + 30, error: null, message: { dedupKey: 'k1' } });

    const f = add({ key: 'k2' });
    ms.markFailed(f, T0 + 40, 'HTTP 403 (not retried)');
    expect(ms.list({ status: 'failed' })).toMatchObject([{ id: f, status: 'failed', attempts: 1, last_attempt_at: T0 + 40, error: 'HTTP 403 (not retried)' }]);
    const d = add({ key: 'k3' });
    ms.markFailed(d, T0 + 50, 'gone', 'dropped');
    expect(ms.list({ status: 'dropped' }).map((r) => r.id)).toEqual([d]);
  });

  it('lists newest first, by status, at most `limit`', () => {
    const { ms, add } = setup();
    for (let i = 0; i < 5; i++) add({ key: `k${i}`, group: `g${i}` });
    ms.markSent(1, T0);
    ms.markSent(3, T0);
    expect(ms.list().map((r) => r.dedup_key)).toEqual(['k4', 'k3', 'k2', 'k1', 'k0']);
    expect(ms.list({ limit: 2 }).map((r) => r.dedup_key)).toEqual(['k4', 'k3']);
    expect(ms.list({ status: 'sent' }).map((r) => r.dedup_key)).toEqual(['k2', 'k0']);
    expect(ms.list({ status: 'pending', limit: 1 }).map((r) => r.dedup_key)).toEqual(['k4']);
    expect(ms.list()[0]).not.toHaveProperty('payload');
  });

  it('a prune deletes finished messages created before the cut, never a pending one', () => {
    const { ms, add } = setup();
    const old = [add({ key: 'sent-old', group: 'a', at: T0 - 2000 }), add({ key: 'failed-old', group: 'b', at: T0 - 2000 }), add({ key: 'dropped-old', group: 'c', at: T0 - 2000 })];
    add({ key: 'pending-old', group: 'd', at: T0 - 2000 });
    const atCut = add({ key: 'sent-at-cut', group: 'e', at: T0 });
    ms.markSent(old[0]!, T0);
    ms.markFailed(old[1]!, T0, 'x');
    ms.markFailed(old[2]!, T0, 'x', 'dropped');
    ms.markSent(atCut, T0);
    expect(ms.prune(T0)).toBe(3);
    expect(ms.list().map((r) => r.dedup_key).sort()).toEqual(['pending-old', 'sent-at-cut']);
    expect(ms.prune(T0)).toBe(0);
  });
});

describe('TokenBucket with tokens to spare', () => {
  it('a bucket holding more than one token can send now', () => {
    const b = new TokenBucket(2, 3, T0);
    expect(b.nextAt(T0)).toBe(T0);
    expect(b.take(T0)).toBe(true);
    expect(b.nextAt(T0)).toBe(T0);
  });
});
