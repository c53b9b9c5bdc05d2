/** Reader of booleans: true/false in any case, "1"/"0", 1/0. */
import { READ_ABSENT, fieldRead, isAbsent, type FieldRead, type ReadCode, type ReadSlot } from './result.js';

/** A boolean, into a slot. */
export function leanBoolean(v: unknown, slot: ReadSlot): ReadCode {
  if (typeof v === 'boolean') return slot.put(v, 'boolean');
  if (isAbsent(v)) return READ_ABSENT;
  if (v === 1 || v === 0) return slot.put(v === 1, 'number 1/0');
  if (typeof v !== 'string') return slot.reject('not_a_boolean', 'a boolean');
  const s = v.trim().toLowerCase();
  if (s === 'true' || s === 'false') return slot.put(s === 'true', 'string true/false');
  if (s === '1' || s === '0') return slot.put(s === '1', 'string "1"/"0"');
  return slot.reject('not_a_boolean', 'a boolean');
}

/** A boolean. */
export const readBoolean = (v: unknown): FieldRead<boolean> => fieldRead(v, leanBoolean);
