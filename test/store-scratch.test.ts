/**
 * A scratch store (a backtest's or a rule test's alert state) starts from a copy of a migrated empty file
 * (src/store/index.ts, openScratchStore): it must be what `openStore(':memory:')` gives — the same schema and
 * version, foreign keys on — and each one its own, whatever another wrote.
 */
import { describe, expect, it } from 'vitest';
import { openScratchStore, openStore, type Store } from '../src/store/index.js';

const schemaOf = (s: Store) => s.db.prepare<[], { type: string; name: string; sql: string | null }>(`SELECT type, name, sql FROM sqlite_master ORDER BY type, name`).all();

describe('a scratch store', () => {
  it('has the schema, version and pragmas of a migrated in-memory store, the first and every later one', () => {
    const ref = openStore(':memory:');
    const stores = [openScratchStore(), openScratchStore(), openScratchStore()];
    try {
      for (const s of stores) {
        expect(schemaOf(s)).toEqual(schemaOf(ref));
        expect(s.version).toBe(ref.version);
        expect(s.db.pragma('foreign_keys', { simple: true })).toBe(1);
        expect(s.db.prepare(`SELECT version FROM schema_migrations ORDER BY version`).pluck().all()).toEqual(
          ref.db.prepare(`SELECT version FROM schema_migrations ORDER BY version`).pluck().all(),
        );
      }
    } finally {
      for (const s of [ref, ...stores]) s.close();
    }
  });

  it('is its own: what one writes, another opened before or after does not hold', () => {
    const a = openScratchStore();
    const b = openScratchStore();
    try {
      a.meta.set('who', 'a');
      a.polls.record({ poll: 'markets', kind: 'metrics', ok: true, readings: [], rejected: [], started_at: 1, finished_at: 2 });
      const c = openScratchStore();
      try {
        for (const other of [b, c]) {
          expect(other.meta.get('who')).toBeUndefined();
          expect(other.db.prepare('SELECT count(*) FROM poll_runs').pluck().get()).toBe(0);
        }
        b.meta.set('who', 'b');
        expect(a.meta.get('who')).toBe('a');
      } finally {
        c.close();
      }
    } finally {
      a.close();
      b.close();
    }
  });
});
