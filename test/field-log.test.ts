/** The field-rejection log says a rejection once per (poll, entity, field) until what the service sends changes. */
import { describe, expect, it } from 'vitest';
import type { Rejection } from '../src/model.js';
import { FieldRejectionLog } from '../src/source/field-log.js';

const rej = (entity: string, field: string, sent: string): Rejection => ({ reason: 'not_a_price', entity, field, sent, detail: `${field}: ${sent}` });

describe('FieldRejectionLog', () => {
  it('once per entity and field while the same value keeps coming; again when it changes or after it read again', () => {
    const log = new FieldRejectionLog();
    const entities = ['m1', 'm2'];
    expect(log.news('p', [rej('m1', 'oracle_price', 'x'), rej('m2', 'oracle_price', 'x')], entities)).toHaveLength(2);
    for (let i = 0; i < 5; i++) expect(log.news('p', [rej('m1', 'oracle_price', 'x'), rej('m2', 'oracle_price', 'x')], entities)).toEqual([]);
    // m1 sends something else unreadable: news; m2 reads again, then breaks again: news.
    expect(log.news('p', [rej('m1', 'oracle_price', 'y')], entities).map((r) => r.entity)).toEqual(['m1']);
    expect(log.news('p', [rej('m1', 'oracle_price', 'y'), rej('m2', 'oracle_price', 'x')], entities).map((r) => r.entity)).toEqual(['m2']);
    // Another poll, another field: their own keys; row rejections are not this log's business.
    expect(log.news('q', [rej('m1', 'oracle_price', 'y'), { reason: 'missing_id', detail: 'row' }], entities)).toHaveLength(1);
    expect(log.news('p', [rej('m1', 'utilization', 'y'), rej('m1', 'oracle_price', 'y'), rej('m2', 'oracle_price', 'x')], entities).map((r) => r.field)).toEqual(['utilization']);
  });

  it("reads the run's entities only when a remembered field may have become readable (a positions poll has 50,000)", () => {
    const log = new FieldRejectionLog();
    const untouchable: Iterable<string> = {
      [Symbol.iterator]() {
        throw new Error('entities were read');
      },
    };
    expect(log.news('p', [], untouchable)).toEqual([]);
    expect(log.news('p', [rej('m1', 'oracle_price', 'x')], untouchable)).toHaveLength(1);
    expect(log.news('p', [rej('m1', 'oracle_price', 'x')], untouchable)).toEqual([]);
    // m1's price may read again now: the entities are needed, and m1 is among them.
    expect(() => log.news('p', [], untouchable)).toThrow('entities were read');
    expect(log.news('p', [], ['m1'])).toEqual([]);
    expect(log.news('p', [rej('m1', 'oracle_price', 'x')], ['m1'])).toHaveLength(1);
  });
});
