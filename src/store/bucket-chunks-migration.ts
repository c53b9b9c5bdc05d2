/** Schema version 11: sealed 5-minute buckets as one chunk per entity and hour. */
import type Database from 'better-sqlite3';
import type { Migration } from './migrations.js';
import { createBucketSealer } from './readings.js';

/**
 * Version 11. A bucket was one row of `reading_buckets` with its index (about 248 bytes a bucket at SPEC §8, 28.7 GB
 * for 30 days). Buckets of hours that are over now go into `reading_bucket_chunks`: one row per entity and hour
 * (src/store/bucket-chunks.ts), its key and index entries shared by the hour's twelve buckets. `reading_buckets` stays
 * for the buckets of the last hour or so, still being folded into; downsampling seals them. Every existing bucket is
 * sealed here, none dropped (test/store-migration.test.ts).
 */
export const bucketChunksMigration = {
  version: 11,
  name: 'bucket_chunks',
  up: `
CREATE TABLE reading_bucket_chunks (
  id INTEGER PRIMARY KEY,
  start INTEGER NOT NULL,
  entity INTEGER NOT NULL,
  poll INTEGER NOT NULL,
  shape INTEGER NOT NULL,
  n INTEGER NOT NULL, -- its buckets that no earlier chunk of the entity and hour has
  data BLOB NOT NULL
);
CREATE INDEX reading_bucket_chunks_start ON reading_bucket_chunks (start, entity, n); -- n: counted without reading the chunks
CREATE INDEX reading_bucket_chunks_entity ON reading_bucket_chunks (entity, start, shape); -- shape: pruneShapes reads it here
`,
  run(db: Database.Database) {
    const seal = createBucketSealer(db);
    while (seal(Number.MAX_SAFE_INTEGER, 5000) > 0);
  },
} satisfies Migration;
