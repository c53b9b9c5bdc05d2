/** What every poll kind gets to run with and gives back. */
import { setMaxListeners } from 'node:events';
import type { Logger } from '../../log.js';
import type { MarketInfo, Reading, Rejection } from '../../model.js';
import type { DataServiceClient } from '../client.js';
import type { OraclePriceMode } from '../read/oracle.js';
import type { SeenForms } from '../read/seen.js';
import { DataServiceError, SOURCE_CODES } from '../errors.js';
import { inShard, shardKey, type Shard } from '../shard.js';

/** The world of one poll run. */
export interface PollContext {
  client: DataServiceClient;
  /** Aborted when the run must stop (shutdown, the run's deadline): every request and backoff wait ends. */
  signal: AbortSignal;
  /** Time of the run, ms; readings without a time of their own get it. */
  now: number;
  log: Logger;
  /** This replica's share of markets and wallets (SPEC §8); absent = everything. */
  shard?: Shard;
  /** `source.oracle_price` (default auto). */
  oraclePrice?: OraclePriceMode;
  /** What is known of each market seen so far, kept across runs (see MarketParseOptions.known). */
  marketInfo?: Map<string, MarketInfo>;
}

/** What a successful run produced. A failed run throws a SourceError instead. */
export interface PollData {
  readings: Reading[];
  /** Rows that could not be attributed, and (with `field`) fields that could not be read. */
  rejected: Rejection[];
  /** How each field was sent (for `lookout probe`). */
  seen?: SeenForms;
}

/** Keeps the readings (and the rejections naming an entity) that belong to this replica. */
export function keepShard(data: PollData, shard: Shard | undefined): PollData {
  if (!shard || shard.total <= 1) return data;
  const entityWallets = new Map(data.readings.map((r) => [r.entity, shardKey(r)]));
  return {
    readings: data.readings.filter((r) => inShard(shardKey(r), shard)),
    rejected: data.rejected.filter((r) => r.entity === undefined || inShard(entityWallets.get(r.entity) ?? r.entity, shard)),
    ...(data.seen ? { seen: data.seen } : {}),
  };
}

/**
 * Runs tasks concurrently (the client bounds the requests in flight) and resolves with all results,
 * or rejects with the first failure after aborting the others: one failed part fails the whole run.
 */
export async function allOrNothing<T>(tasks: readonly ((signal: AbortSignal) => Promise<T>)[], signal: AbortSignal): Promise<T[]> {
  const stop = new AbortController();
  const linked = AbortSignal.any([signal, stop.signal]);
  // Every task's requests listen on it; hundreds at once are expected, not a leak.
  setMaxListeners(0, linked);
  try {
    return await Promise.all(
      tasks.map((task) =>
        task(linked).catch((err: unknown) => {
          stop.abort(new Error('another part of the poll failed'));
          throw err;
        }),
      ),
    );
  } finally {
    stop.abort(new Error('poll finished'));
  }
}

/**
 * Fails the run when the service sent rows and not one of them passed validation: that is schema
 * drift, not an empty world, and must not read as "every entity is gone".
 */
export function failIfAllRejected(endpoint: string, rowCount: number, data: PollData): PollData {
  if (rowCount === 0 || data.readings.length > 0 || data.rejected.length === 0) return data;
  const first = data.rejected[0]?.detail ?? '';
  throw new DataServiceError(SOURCE_CODES.schema, `${endpoint}: all ${rowCount} rows failed validation (first: ${first.slice(0, 200)})`, {
    endpoint,
    reason: 'schema',
  });
}
