/** Reader of booleans: true/false in any case, "1"/"0", 1/0. */
import { ABSENT, isAbsent, seen, unreadable, type FieldRead } from './result.js';

/** A boolean. */
export function readBoolean(v: unknown): FieldRead<boolean> {
  if (isAbsent(v)) return ABSENT;
  if (typeof v === 'boolean') return seen(v, 'boolean');
  if (v === 1 || v === 0) return seen(v === 1, 'number 1/0');
  if (typeof v !== 'string') return unreadable('not_a_boolean', 'a boolean', v);
  const s = v.trim().toLowerCase();
  if (s === 'true' || s === 'false') return seen(s === 'true', 'string true/false');
  if (s === '1' || s === '0') return seen(s === '1', 'string "1"/"0"');
  return unreadable('not_a_boolean', 'a boolean', v);
}
