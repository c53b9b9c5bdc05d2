/**
 * Schema version 14: `alert_moving` keyed by an integer row id (its `fingerprint` unique beside it).
 *
 * In an incident every active alert's moving row is updated every poll (SPEC §5: `/api/alerts` shows its value and
 * annotations, and a restart answers what was last written). Found by its 16-character fingerprint in a WITHOUT
 * ROWID table, each update compared texts down the B-tree; found by an integer the engine keeps with its copy of the
 * row (`TrackedAlert.moving_id`, src/alerts/repo.ts), the same update costs ~1.3 µs less (issue 14, B4).
 * AUTOINCREMENT: an id is never given again, so an id kept by a copy that outlived its row finds no row at all.
 * The `alerts` view and its delete are made again over the new table, unchanged.
 */
import type { Migration } from '../store/migrations.js';
import { ALERTS_VIEW, MOVING, MOVING_TYPES } from './moving-migration.js';

/** Version 14; see the module comment. */
export const alertMovingIdMigration = {
  version: 14,
  name: 'alert_moving_row_id',
  up: `
DROP VIEW alerts;
CREATE TABLE alert_moving_by_id (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  fingerprint TEXT NOT NULL,
  ${MOVING_TYPES}
);
INSERT INTO alert_moving_by_id (${MOVING}) SELECT ${MOVING} FROM alert_moving ORDER BY fingerprint;
DROP TABLE alert_moving;
ALTER TABLE alert_moving_by_id RENAME TO alert_moving;
CREATE UNIQUE INDEX alert_moving_fingerprint ON alert_moving (fingerprint);
${ALERTS_VIEW}`,
} satisfies Migration;
