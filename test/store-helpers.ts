/** Shared fixtures for the store tests: temp directories that are removed afterwards, and reading factories. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Reading, ReadingKind } from '../src/model.js';

/** Creates a fresh temp directory per call (named `${prefix}…`); `cleanup()` removes them all. Shared by every test that needs one. */
export function tempDirs(prefix = 'lookout-store-'): { make(): string; cleanup(): void } {
  const dirs: string[] = [];
  return {
    make() {
      const d = mkdtempSync(join(tmpdir(), prefix));
      dirs.push(d);
      return d;
    },
    cleanup() {
      for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
    },
  };
}

/** A market reading with big decimal strings in its fields. */
export function market(entity: string, at: number, utilization = 0.5, extra: Record<string, unknown> = {}): Reading {
  return reading('market', entity, at, {
    market_id: entity,
    utilization,
    oracle_price: '1000000000000000000000000000000000000123',
    total_borrowed: '98765432109876543210',
    market: { chain: 'base', loan_asset_symbol: 'USDC' },
    ...extra,
  });
}

/** A reading of any kind with labels derived from the entity. */
export function reading(kind: ReadingKind, entity: string, at: number, fields: Record<string, unknown>): Reading {
  return { kind, entity, at, labels: { entity, chain: 'base' }, fields };
}

/** Every column of every alert, as a plain query of the `alerts` view answers (an operator's, `SELECT *`). */
export const allAlertRows = (db: { prepare(sql: string): { all(): unknown[] } }): unknown[] => db.prepare(`SELECT * FROM alerts ORDER BY rule, entity`).all();
