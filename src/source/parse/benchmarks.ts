/**
 * Historical benchmark days of one network and code → one `benchmark` reading: the newest day the
 * lookback returned, plus how many days there were. No days → no reading (and no rejection). A day is
 * attributed by its timestamp; when the newest day (the last one, the service sends them oldest first) has
 * none readable, the entity gets a rejection and no reading, so an older day never stands in for it. Every
 * other field is read on its own (SPEC §6).
 */
import type { BenchmarkFields, BenchmarkRate, Reading, Rejection } from '../../model.js';
import { leanBoolean } from '../read/booleans.js';
import { RowReader, isObject, unreadableOf } from '../read/fields.js';
import { leanNumber } from '../read/numbers.js';
import { FormCounts, type SeenForms } from '../read/seen.js';
import { leanTime, toEpochMs } from '../read/times.js';

const WINDOWS = ['1day', '7day', '30day'] as const;

/** One day read field by field; its `timestamp` is its key, so without one the day is rejected. */
interface Day {
  timestamp: number;
  isComplete: boolean | null;
  isStale: boolean | null;
  apy: BenchmarkFields['apy'];
  constituents: BenchmarkFields['constituents'];
}

function readRate(raw: unknown, path: string, fr: RowReader): BenchmarkRate | null {
  if (!isObject(raw)) return null;
  const n = (k: string) => fr.read(`${path}.${k}`, raw[k], leanNumber) as number | null;
  return { base: n('base'), reward: n('reward'), total: n('total') };
}

/** The newest day, read in full (its timestamp readable: `toEpochMs`). */
function readDay(raw: Record<string, unknown>, fr: RowReader): Day {
  const timestamp = fr.read('timestamp', raw.timestamp, leanTime) as number;
  const apy = isObject(raw.apy) ? raw.apy : {};
  const cons = isObject(raw.constituents) ? raw.constituents : {};
  return {
    timestamp,
    isComplete: fr.read('isComplete', raw.isComplete, leanBoolean) as boolean | null,
    isStale: fr.read('isStale', raw.isStale, leanBoolean) as boolean | null,
    apy: { '1day': readRate(apy['1day'], 'apy.1day', fr), '7day': readRate(apy['7day'], 'apy.7day', fr), '30day': readRate(apy['30day'], 'apy.30day', fr) },
    constituents: Object.fromEntries(WINDOWS.map((w) => [w, Array.isArray(cons[w]) ? (cons[w] as unknown[]).length : 0])) as Day['constituents'],
  };
}

/** The reading of one network/code from the days its lookback returned; undefined (no reading) when there were none. */
export function benchmarkReading(
  network: string,
  code: string,
  days: readonly unknown[],
): { reading?: Reading; rejected: Rejection[]; seen: SeenForms } {
  const entity = `${network}/${code}`;
  const rejected: Rejection[] = [];
  if (days.length === 0) return { rejected, seen: {} };
  let newest: { raw: Record<string, unknown>; t: number } | undefined;
  let newestUnreadable = false;
  days.forEach((raw, i) => {
    // Read without recording anything: which day is the newest is decided before one is read in full.
    const t = isObject(raw) ? toEpochMs(raw.timestamp) : undefined;
    const last = i === days.length - 1;
    if (t === undefined) {
      if (last) newestUnreadable = true;
      rejected.push({
        reason: 'missing_id',
        ...(last ? { entity } : {}),
        detail: `benchmark ${entity} day #${i}${last ? ' (newest)' : ''}: no readable timestamp, so no day to attribute it to`,
      });
      return;
    }
    if (!newest || t > newest.t) newest = { raw: raw as Record<string, unknown>, t };
  });
  // The service sends days oldest first: an unreadable newest day never lets an older one stand in for it.
  if (!newest || newestUnreadable) return { rejected, seen: {} };
  const counts = new FormCounts();
  const fr = new RowReader(counts);
  fr.start(entity);
  const d = readDay(newest.raw, fr);
  rejected.push(...fr.rejected);
  fr.keep();
  const seen: SeenForms = counts.toSeenForms();
  const fields: BenchmarkFields = {
    network,
    code,
    day: d.timestamp,
    // Unknown stays unknown (SPEC §6): a day whose flags were absent or unreadable is neither complete nor incomplete.
    isComplete: d.isComplete,
    isStale: d.isStale,
    apy: d.apy,
    constituents: d.constituents,
    days: days.length,
  };
  return { reading: { kind: 'benchmark', entity, at: fields.day, labels: { network, code }, fields: { ...fields }, ...unreadableOf(fr.rejected) }, rejected, seen };
}
