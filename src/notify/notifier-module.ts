/** The extension seam for notifiers: one module per type exports `{ type, create, render }`; the registry lists them. */
import type Database from 'better-sqlite3';
import type { Dispatcher } from 'undici';
import type { Clock } from '../clock.js';
import type { Logger } from '../log.js';
import type { NotificationMessage, Notifier } from './message.js';
import type { NotifierConfig } from './schema.js';
import type { TransactionGate } from '../store/gate.js';

/** The store's gate, as notify uses it: database work after an await waits while a poll's transaction is open. */
export type StoreGate = Pick<TransactionGate, 'busy' | 'idle' | 'exclusive' | 'whenFree'>;

/** Runs `fn` (database work) through the store's gate when there is one (at once while no poll's transaction is open). */
export function whenStoreFree<T>(gate: StoreGate | undefined, fn: () => T): T | Promise<T> {
  return gate ? gate.whenFree(fn) : fn();
}

/** What a notifier may use: passed in, never reached for globally. */
export interface NotifierDeps {
  clock: Clock;
  log: Logger;
  /** The undici dispatcher for HTTP notifiers (default: undici's global one). */
  dispatcher?: Dispatcher;
  /** The store, for notifiers that keep state of their own (the Slack bot mode's parent messages); absent in previews. */
  db?: Database.Database;
  /** The store's gate, for notifiers that touch `db` after an await. */
  gate?: StoreGate;
  /** Where the console notifier writes (default: process.stdout). */
  stdout?: { write(text: string): unknown; isTTY?: boolean };
}

/** One notifier type. `render` shows what `create(...).send` would deliver, without sending. */
export interface NotifierModule<T extends NotifierConfig['type'] = NotifierConfig['type']> {
  type: T;
  create(name: string, cfg: Extract<NotifierConfig, { type: T }>, deps: NotifierDeps): Notifier;
  render(name: string, cfg: Extract<NotifierConfig, { type: T }>, message: NotificationMessage, deps: NotifierDeps): string;
}
