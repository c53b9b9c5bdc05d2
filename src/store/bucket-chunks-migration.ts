/** Schema version 11: sealed 5-minute buckets as one chunk per entity and hour. */
import type { Migration } from './migrations.js';

/**
 * Version 11. A bucket was one row of `reading_buckets` with its index (about 248 bytes a bucket at SPEC §8, 28.7 GB
 * for 30 days). Buckets of hours that are over now go into `reading_bucket_chunks`: one row per entity and hour
 * (src/store/bucket-chunks.ts), its key and index entries shared by the hour's twelve buckets. `reading_buckets` stays
 * for the buckets of the last hour or so, still being folded into; downsampling seals them. Existing buckets are not
 * sealed here (30 days of them would hold the start-up for many minutes in one transaction): they answer from
 * `reading_buckets` as before, and the daemon's downsample turns seal them in the background, a batch a turn, none
 * dropped (test/store-migration.test.ts).
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
} satisfies Migration;
