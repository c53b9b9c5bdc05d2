/** Errors raised by the SQLite store: each with a stable code and a message that names the database file. */
import { LookoutError } from '../errors.js';

/** Stable codes of {@link StoreError}. */
export type StoreErrorCode =
  /** The file could not be opened (missing for a read-only open, permissions, not a database). */
  | 'E_STORE_OPEN'
  /** The database was written by a newer lookout: its schema version is unknown to this code. */
  | 'E_STORE_SCHEMA_NEWER'
  /** A read-only open found a database whose migrations have not all been applied. */
  | 'E_STORE_SCHEMA_OLDER'
  /** A migration failed to apply, or the migration list itself is malformed. */
  | 'E_STORE_MIGRATION'
  /** The file opened, but only for reading (permissions, an immutable flag, a read-only filesystem): the daemon needs to write. */
  | 'E_STORE_READONLY'
  /** A value handed to the store cannot be stored (e.g. a reading with a non-finite time). */
  | 'E_STORE_INVALID'
  /** A statement from outside a yielding transaction ran while it was open (a path that did not wait for the store gate). */
  | 'E_STORE_BUSY';

/** A failure of the store that a person can act on (upgrade lookout, fix a path, run the daemon once). */
export class StoreError extends LookoutError {
  declare readonly code: StoreErrorCode;
  constructor(code: StoreErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}
