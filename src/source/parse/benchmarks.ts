/**
 * Historical benchmark days of one network and code → one `benchmark` reading: the newest day the
 * lookback returned, plus how many days there were. No days → no reading (and no rejection). When the
 * newest day (the last one, the service sends them oldest first) fails validation, the entity gets a
 * rejection and no reading, so an older day never stands in for it.
 */
import { z } from 'zod';
import type { BenchmarkFields, BenchmarkRate, Reading, Rejection } from '../../model.js';
import { bool, describeIssue, num, time } from '../values.js';

const rateSchema = z.union([z.null(), z.undefined(), z.object({ base: num, reward: num, total: num })]);

const daySchema = z.object({
  timestamp: time.refine((t) => t !== null, 'timestamp is required'),
  isComplete: bool,
  isStale: bool,
  apy: z.union([z.null(), z.undefined(), z.object({ '1day': rateSchema, '7day': rateSchema, '30day': rateSchema })]),
  constituents: z.union([
    z.null(),
    z.undefined(),
    z.object({ '1day': z.array(z.unknown()).nullish(), '7day': z.array(z.unknown()).nullish(), '30day': z.array(z.unknown()).nullish() }),
  ]),
});

type Day = z.output<typeof daySchema>;

function rate(r: { base: number | null; reward: number | null; total: number | null } | null | undefined): BenchmarkRate | null {
  return r ? { base: r.base, reward: r.reward, total: r.total } : null;
}

/** The reading of one network/code from the days its lookback returned; undefined (no reading) when there were none. */
export function benchmarkReading(
  network: string,
  code: string,
  days: readonly unknown[],
): { reading?: Reading; rejected: Rejection[] } {
  const entity = `${network}/${code}`;
  const rejected: Rejection[] = [];
  if (days.length === 0) return { rejected };
  let newest: Day | undefined;
  days.forEach((raw, i) => {
    const parsed = daySchema.safeParse(raw);
    if (!parsed.success) {
      const last = i === days.length - 1;
      rejected.push({
        reason: 'invalid_field',
        ...(last ? { entity } : {}),
        detail: `benchmark ${entity} day #${i}${last ? ' (newest)' : ''}: ${describeIssue(parsed.error)}`,
      });
      return;
    }
    if (!newest || (parsed.data.timestamp as number) > (newest.timestamp as number)) newest = parsed.data;
  });
  if (!newest || rejected.some((r) => r.entity === entity)) return { rejected };
  const d = newest;
  const fields: BenchmarkFields = {
    network,
    code,
    day: d.timestamp as number,
    // A day that does not say it is complete is read as still being indexed.
    isComplete: d.isComplete ?? false,
    isStale: d.isStale ?? false,
    apy: { '1day': rate(d.apy?.['1day']), '7day': rate(d.apy?.['7day']), '30day': rate(d.apy?.['30day']) },
    constituents: {
      '1day': d.constituents?.['1day']?.length ?? 0,
      '7day': d.constituents?.['7day']?.length ?? 0,
      '30day': d.constituents?.['30day']?.length ?? 0,
    },
    days: days.length,
  };
  return { reading: { kind: 'benchmark', entity, at: fields.day, labels: { network, code }, fields: { ...fields } }, rejected };
}
