/**
 * Versioned schema migrations: an ordered list, each applied once in its own transaction and
 * recorded in `schema_migrations`. To add one, write `export const myMigration = {...} satisfies Migration`
 * in your own module and append it to {@link migrations} with the next version number.
 */
import type Database from 'better-sqlite3';
import type { Clock } from '../clock.js';
import type { Logger } from '../log.js';
import { baseMigration } from './base-migration.js';
import { StoreError } from './errors.js';
import { alertsMigration } from '../alerts/migration.js';
import { notifyMigration } from '../notify/migration.js';
import { revisionsMigration } from './revisions-migration.js';
import { historyRowidMigration } from './history-rowid-migration.js';
import { partsSentMigration } from '../notify/parts-migration.js';
import { slackThreadsMigration } from '../notify/threads-migration.js';
import { compactHistoryMigration } from './compact-history-migration.js';
import { packedLatestMigration } from './packed-latest-migration.js';
import { latestEntitiesMigration } from './latest-entities-migration.js';
import { bucketChunksMigration } from './bucket-chunks-migration.js';
import { rawChunksMigration } from './raw-chunks-migration.js';
import { alertMovingMigration } from '../alerts/moving-migration.js';
import { alertMovingIdMigration } from '../alerts/moving-id-migration.js';

/** One schema change. `up` is SQL run with `db.exec` inside a transaction (so no VACUUM or journal_mode in it). */
export interface Migration {
  /** 1, 2, 3, ...: strictly increasing along the list, never reused or renumbered once shipped. */
  version: number;
  /** Short snake_case description, recorded beside the version. */
  name: string;
  up: string;
  /** Work SQL cannot do (re-encoding rows), run after `up` in the same transaction. */
  run?: (db: Database.Database) => void;
}

/** Every migration lookout knows, in order. Append one line per new migration. */
export const migrations: readonly Migration[] = [
  baseMigration, // 1: meta, readings (latest + history), poll runs
  alertsMigration, // 2: alerts, alert_events (src/alerts/migration.ts)
  notifyMigration, // 3: outbox, groups, messages, silences (src/notify/migration.ts)
  revisionsMigration, // 4: reading_history keeps every revision a poll saw, with seen_at
  historyRowidMigration, // 5: readings (history, latest) as rowid tables (a market row fits on its page)
  partsSentMigration, // 6: notify_messages.parts_sent, so a split Slack message resumes after its accepted parts (src/notify/parts-migration.ts)
  slackThreadsMigration, // 7: notify_slack_threads, the message a Slack bot-mode notifier edits per incident (src/notify/threads-migration.ts)
  compactHistoryMigration, // 8: compact history rows (ids + packed values), 5-minute buckets (src/store/compact-history-migration.ts)
  packedLatestMigration, // 9: the latest reading per entity packed like history (shape id + values), not JSON (src/store/packed-latest-migration.ts)
  latestEntitiesMigration, // 10: per entity only the poll that returned it last; the latest reading is history's newest (src/store/latest-entities-migration.ts)
  bucketChunksMigration, // 11: buckets of past hours as one chunk per entity and hour (src/store/bucket-chunks-migration.ts)
  rawChunksMigration, // 12: full-resolution history of past hours as one chunk per entity and hour (src/store/raw-chunks-migration.ts)
  alertMovingMigration, // 13: an alert's row in two tables, the columns a judged reading moves apart, `alerts` a view of both (src/alerts/moving-migration.ts)
  alertMovingIdMigration, // 14: `alert_moving` keyed by an integer id the engine keeps, its fingerprint unique beside it (src/alerts/moving-id-migration.ts)
];

/** One row of `schema_migrations`. */
export interface AppliedMigration {
  version: number;
  name: string;
  applied_at: number;
}

const bootstrapSql = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  applied_at INTEGER NOT NULL
)`;

/** Throws unless versions are positive integers, strictly increasing along the list. */
export function validateMigrations(list: readonly Migration[]): void {
  let prev = 0;
  for (const m of list) {
    if (!Number.isInteger(m.version) || m.version <= prev) {
      throw new StoreError(
        'E_STORE_MIGRATION',
        `migration list is malformed: version ${m.version} (${m.name}) must be an integer greater than ${prev}` +
          ' (two migrations share a version, or the list is out of order)',
      );
    }
    prev = m.version;
  }
}

function tableExists(db: Database.Database, name: string): boolean {
  return db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(name) !== undefined;
}

/** The migrations recorded as applied in `db`, oldest first (empty for a fresh database). */
export function appliedMigrations(db: Database.Database): AppliedMigration[] {
  if (!tableExists(db, 'schema_migrations')) return [];
  return db
    .prepare(`SELECT version, name, applied_at FROM schema_migrations ORDER BY version`)
    .all() as AppliedMigration[];
}

/** The highest applied version, 0 for a fresh database. */
export function schemaVersion(db: Database.Database): number {
  const applied = appliedMigrations(db);
  return applied.length === 0 ? 0 : applied[applied.length - 1]!.version;
}

/** Refuses a database whose schema is newer than `list` knows; returns the applied rows. */
function checkNotNewer(db: Database.Database, file: string, list: readonly Migration[]): AppliedMigration[] {
  const applied = appliedMigrations(db);
  const known = list.length === 0 ? 0 : list[list.length - 1]!.version;
  const newest = applied.length === 0 ? 0 : applied[applied.length - 1]!.version;
  if (newest > known) {
    throw new StoreError(
      'E_STORE_SCHEMA_NEWER',
      `${file}: database schema version ${newest} is newer than this lookout knows (${known}); ` +
        'it was written by a newer lookout: upgrade lookout, or point storage.path at another file',
    );
  }
  return applied;
}

/** Options of {@link migrate}. */
export interface MigrateOptions {
  /** Names the database in errors and logs. */
  file: string;
  clock: Clock;
  log: Logger;
  list?: readonly Migration[];
}

/** Applies every migration of the list not yet recorded in `db`, each in its own transaction; returns the versions applied. */
export function migrate(db: Database.Database, opts: MigrateOptions): number[] {
  const list = opts.list ?? migrations;
  validateMigrations(list);
  db.exec(bootstrapSql);
  const applied = checkNotNewer(db, opts.file, list);
  const byVersion = new Map(applied.map((a) => [a.version, a]));
  const record = db.prepare(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`);
  const done: number[] = [];
  for (const m of list) {
    const prior = byVersion.get(m.version);
    if (prior) {
      if (prior.name !== m.name) {
        opts.log.warn('store_migration_name_mismatch', { file: opts.file, version: m.version, db: prior.name, code: m.name });
      }
      continue;
    }
    try {
      db.transaction(() => {
        db.exec(m.up);
        m.run?.(db);
        record.run(m.version, m.name, opts.clock.now());
      })();
    } catch (err) {
      throw new StoreError(
        'E_STORE_MIGRATION',
        `${opts.file}: migration ${m.version} (${m.name}) failed: ${(err as Error).message}`,
        { cause: err },
      );
    }
    opts.log.info('store_migrated', { file: opts.file, version: m.version, name: m.name });
    done.push(m.version);
  }
  return done;
}

/** For read-only opens: refuses a database that is newer than the code, or that misses migrations. */
export function checkSchema(db: Database.Database, file: string, list: readonly Migration[] = migrations): void {
  validateMigrations(list);
  const applied = new Set(checkNotNewer(db, file, list).map((a) => a.version));
  const missing = list.filter((m) => !applied.has(m.version)).map((m) => m.version);
  if (missing.length > 0) {
    throw new StoreError(
      'E_STORE_SCHEMA_OLDER',
      `${file}: database is missing schema version(s) ${missing.join(', ')}; ` +
        'open it once read-write (e.g. start `lookout run`) to migrate it',
    );
  }
}
