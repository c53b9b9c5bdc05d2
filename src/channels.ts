/**
 * The names of lookout's diagnostics channels (`node:diagnostics_channel`): process-wide observers (src/heap-growth.ts)
 * listen without the module that publishes being loaded first, or at all.
 */

/** A data-service response read whole: `{ bytes }`, its body's size (src/source/http.ts). */
export const RESPONSE_BYTES_CHANNEL = 'lookout:source:response-bytes';

/** A poll's rows fetched, before its transaction: `{ poll, rows }`, its readings' count (src/poll-runner.ts). */
export const POLL_ROWS_CHANNEL = 'lookout:poll:rows';
