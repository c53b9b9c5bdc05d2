/**
 * How values are written on the wire. `canonical`: numbers as JSON numbers, created_at as
 * ISO-8601, other times as Unix seconds. `mixed` (SPEC §6): per row and field, deterministically,
 * a number may arrive as a numeric string and a time as Unix seconds, milliseconds or ISO-8601 —
 * always denoting the same value as the canonical form.
 */
import { hash32 } from './random.js';

/** The representation knob. */
export type Formats = 'canonical' | 'mixed';

/** Fields that carry times (in canonical form: ISO string for created_at, Unix seconds otherwise). */
export const TIME_FIELDS: ReadonlySet<string> = new Set(['created_at', 'oracle_last_update', 'timestamp']);

/** Unix seconds of a canonical time value. */
export function timeSeconds(v: unknown): number {
  return typeof v === 'string' ? Date.parse(v) / 1000 : Number(v);
}

/** A time (Unix seconds) written one of three ways, chosen by `variant` (0 s, 1 ms, 2 ISO). */
export function writeTime(sec: number, variant: number): number | string {
  if (variant === 0) return sec;
  if (variant === 1) return sec * 1000;
  return new Date(sec * 1000).toISOString();
}

/** The hash a row's representation choices derive from. */
export function rowHash(seed: number, rowKey: number | string): number {
  return hash32(seed, 'row', rowKey);
}

const fieldCodes = new Map<string, number>();
function fieldCode(field: string): number {
  let c = fieldCodes.get(field);
  if (c === undefined) fieldCodes.set(field, (c = hash32(0x5eed, field)));
  return c;
}

function mix(h: number, field: string): number {
  let x = Math.imul(h ^ fieldCode(field), 0x9e3779b1);
  x ^= x >>> 15;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  return x >>> 0;
}

/** One value in mixed form: numbers sometimes as strings, times in one of three encodings. */
export function mixValue(v: unknown, field: string, h: number, timeFields: ReadonlySet<string> = TIME_FIELDS): unknown {
  if (timeFields.has(field) && v !== null && v !== undefined) return writeTime(timeSeconds(v), mix(h, field) % 3);
  if (typeof v === 'number') return mix(h, field) % 3 === 0 ? String(v) : v;
  if (Array.isArray(v)) return v.map((x, i) => mixValue(x, field, mix(h ^ i, field), timeFields));
  if (v !== null && typeof v === 'object') return mixRecord(v as Record<string, unknown>, mix(h, field), timeFields);
  return v;
}

/** A record in mixed form (a new object; nested objects and arrays are mixed too). */
export function mixRecord(rec: Record<string, unknown>, h: number, timeFields: ReadonlySet<string> = TIME_FIELDS): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(rec)) out[k] = mixValue(rec[k], k, h, timeFields);
  return out;
}

/** A record as the knob says: as it is, or mixed (choices fixed by seed and row key). */
export function represent<T extends object>(rec: T, formats: Formats, seed: number, rowKey: number | string, timeFields?: ReadonlySet<string>): T | Record<string, unknown> {
  return formats === 'mixed' ? mixRecord(rec as Record<string, unknown>, rowHash(seed, rowKey), timeFields) : rec;
}
