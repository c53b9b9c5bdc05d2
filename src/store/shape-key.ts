/**
 * A cheap exact key of a reading's shape (src/store/codec.ts), for the in-memory cache of shape ids: a save looks
 * up the shape of every reading, changed or not, and building the shape's JSON text (~40 members: the labels, every
 * field's key and whether it is packed, the fixed values) cost ~3 µs a reading in JSON.stringify alone, ~60% of a
 * save of an unchanged position.
 *
 * The key is the SHA-256 digest of a shorter text that determines the shape all the same: the number of its
 * **layout** (the label keys, the field keys in order, which fields are packed — a handful per kind, recognised by
 * comparing keys, not by text) and the JSON of an array of the label values, the fixed (non-packed) field values and
 * the unreadable map. Equal keys mean equal shapes:
 * - a layout number names one layout only (numbers are never reused);
 * - each array element is the JSON of exactly what the shape's JSON holds there (a fixed value that JSON leaves out —
 *   undefined — is `null` in the array, and left out of the shape in both cases: no fixed value is ever null, null is
 *   packed); a label that is not a string has no key (`undefined`: the caller builds the shape's text instead).
 * A shape has several keys only in the way the shape's text has several readings (e.g. an empty unreadable map);
 * that costs a lookup in the database, never a wrong id.
 */
import { hash } from 'node:crypto';
import { isPacked, type PackedLayout } from './codec.js';

interface Layout {
  no: number;
  labelKeys: string[];
  keys: string[];
  dyn: boolean[];
}

/** Layouts kept for matching, most recently used first. */
const RECENT = 8;
/** Layout texts remembered for their numbers; past that they are forgotten (a layout seen again gets a new number). */
const NUMBERED_LIMIT = 10_000;

const sameKeys = (a: readonly string[], b: readonly string[]) => {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
};

/** A reading's shape key (undefined when its labels are not all strings), and the layout of its fields. */
export interface ShapeKeyer {
  (labels: Record<string, string>, fields: Record<string, unknown>, unreadable: Record<string, string> | undefined): string | undefined;
  /**
   * The field keys of the reading keyed last and which are packed, valid until the next call: a save packs and
   * remembers the reading's values by them, without testing each value again.
   */
  readonly last: PackedLayout;
}

/** Builds a keyer; its state is only the layouts it has seen. */
export function shapeKeyer(): ShapeKeyer {
  const recent: Layout[] = [];
  const numbered = new Map<string, number>();
  let next = 0;
  const dyn: boolean[] = [];
  const last = { keys: [] as string[], packed: dyn };

  function layoutOf(labelKeys: string[], keys: string[]): Layout {
    for (let i = 0; i < recent.length; i++) {
      const l = recent[i]!;
      if (!sameKeys(l.labelKeys, labelKeys) || !sameKeys(l.keys, keys)) continue;
      let same = true;
      for (let j = 0; j < dyn.length && same; j++) same = l.dyn[j] === dyn[j];
      if (!same) continue;
      if (i > 0) {
        recent.splice(i, 1);
        recent.unshift(l);
      }
      return l;
    }
    const copy = dyn.slice(0, keys.length);
    const text = JSON.stringify([labelKeys, keys, copy]);
    let no = numbered.get(text);
    if (no === undefined) {
      if (numbered.size >= NUMBERED_LIMIT) numbered.clear();
      no = next++;
      numbered.set(text, no);
    }
    const l: Layout = { no, labelKeys, keys, dyn: copy };
    recent.unshift(l);
    if (recent.length > RECENT) recent.pop();
    return l;
  }

  const key = (labels: Record<string, string>, fields: Record<string, unknown>, unreadable: Record<string, string> | undefined): string | undefined => {
    const keys = Object.keys(fields);
    // The fields' layout first: it is the save's to use whether or not the labels give a key.
    dyn.length = keys.length;
    for (let i = 0; i < keys.length; i++) dyn[i] = isPacked(fields[keys[i]!]);
    last.keys = keys;
    const labelKeys = Object.keys(labels);
    const values: unknown[] = [];
    for (let i = 0; i < labelKeys.length; i++) {
      const v = labels[labelKeys[i]!];
      if (typeof v !== 'string') return undefined;
      values.push(v);
    }
    for (let i = 0; i < keys.length; i++) if (!dyn[i]) values.push(fields[keys[i]!]);
    values.push(unreadable && Object.keys(unreadable).length > 0 ? unreadable : null);
    const layout = layoutOf(labelKeys, keys);
    return hash('sha256', `${layout.no}${JSON.stringify(values)}`, 'binary');
  };
  return Object.assign(key, { last });
}
