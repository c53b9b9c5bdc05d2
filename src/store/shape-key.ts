/**
 * A cheap exact key of a reading's shape (src/store/codec.ts), for the in-memory cache of shape ids: a save looks
 * up the shape of every reading, changed or not, and building the shape's JSON text (~40 members: the labels, every
 * field's key and whether it is packed, the fixed values) cost ~3 µs a reading in JSON.stringify alone, ~60% of a
 * save of an unchanged position.
 *
 * The key is the SHA-256 digest of a shorter run of bytes that determines the shape all the same: the number of its
 * **layout** (the label keys, the field keys in order, which fields are packed — a handful per kind, recognised by
 * comparing keys, not by text) and, one after another, the label values, the fixed (non-packed) field values and the
 * unreadable map, each written by {@link keyPart} in a form that says where it ends (a string as a tag, its
 * length and its code units: no JSON escaping, which was most of a market's key — its `market` object and
 * addresses). The bytes are written into one reused buffer and hashed as they are: no text per reading (a key text
 * of ~16 concatenated parts, flattened and encoded again by the hash, was ~6 µs a market reading, half of it the hash's
 * encoding, and ~1 KB of garbage). Equal keys mean equal shapes:
 * - a layout number names one layout only (numbers are never reused), and says how many parts follow;
 * - each part is self-delimiting and written from exactly the value the shape's JSON is written from, so equal parts
 *   mean equal JSON there (a part may tell apart values JSON writes alike — NaN and null, -0 and 0, an undefined
 *   member and none: that costs a lookup, never a wrong id); a label that is not a string has no key (`undefined`:
 *   the caller builds the shape's text instead);
 * - a string is written one byte a code unit when every unit is below 0x80, else two bytes a unit (UTF-16, lone
 *   surrogates and all): each form has its own tag, so no two strings share bytes.
 * - a fixed text that is one of the reading's label values is written as that label's place (its tag and index): the
 *   label's value is already in the key, so equal bytes still mean equal texts.
 * A shape has several keys only in the way the shape's text has several readings (e.g. an empty unreadable map);
 * that costs a lookup in the database, never a wrong id.
 */
import { hash } from 'node:crypto';
import { isPacked, Writer, type PackedLayout } from './codec.js';

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

/** A reading's shape key (undefined when its labels are not all strings), and the layout of its fields. */
export interface ShapeKeyer {
  (labels: Record<string, string>, fields: Record<string, unknown>, unreadable: Record<string, string> | undefined): string | undefined;
  /**
   * The field keys of the reading keyed last, which are packed and their values, valid until the next call: a save
   * packs and remembers the reading's values by them, without testing each value again. `packed` and `values` are
   * the keyer's reused arrays: past `keys.length` they hold an earlier reading's (read only the first `keys.length`).
   */
  readonly last: PackedLayout;
}

// The tags of a key's parts: one byte each, before the part's own bytes.
const TAG_ASCII = 0x61; // a: varint length, one byte a code unit (all below 0x80)
const TAG_WIDE = 0x77; // w: varint length, two bytes a code unit (UTF-16 little-endian)
const TAG_JSON = 0x6a; // j: the value's JSON text as a string part follows
const TAG_NUMBER = 0x6e; // n: the float64's eight bytes
const TAG_TRUE = 0x74;
const TAG_FALSE = 0x66;
const TAG_NULL = 0x7a;
const TAG_UNDEFINED = 0x75;
const TAG_OBJECT = 0x6f; // o: (string part, scalar part) per member, then TAG_END
const TAG_END = 0x7d;
const TAG_LABEL = 0x6c; // l: varint i — a fixed text field whose value is the i-th label's (a position's wallet, chain, …)

const isPlain = (v: object): boolean => {
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
};

/** A string's part: its tag, its length in code units, its units (one byte each when all are ASCII, else two). */
function stringPart(w: Writer, s: string): void {
  const start = w.length;
  w.byte(TAG_ASCII);
  w.varint(s.length);
  if (w.ascii(s)) return;
  w.truncate(start);
  w.byte(TAG_WIDE);
  w.varint(s.length);
  w.utf16le(s);
}

/** A string, number, boolean, null or undefined's part; false (nothing written) for anything else. */
function scalarPart(w: Writer, v: unknown): boolean {
  switch (typeof v) {
    case 'string':
      stringPart(w, v);
      return true;
    case 'number':
      w.byte(TAG_NUMBER);
      w.f64(v);
      return true;
    case 'boolean':
      w.byte(v ? TAG_TRUE : TAG_FALSE);
      return true;
    case 'undefined':
      w.byte(TAG_UNDEFINED);
      return true;
    default:
      if (v !== null) return false;
      w.byte(TAG_NULL);
      return true;
  }
}

/** Any value's part as its JSON text (undefined, which JSON leaves out, as its own tag). */
function jsonPart(w: Writer, v: unknown): void {
  const json = JSON.stringify(v) as string | undefined;
  if (json === undefined) return w.byte(TAG_UNDEFINED);
  w.byte(TAG_JSON);
  stringPart(w, json);
}

/**
 * A value's part, self-delimiting: a string by {@link stringPart}; a number as its float64; true, false, null,
 * undefined as one tag; a plain object whose members are all of those as its keys and members in JSON's order
 * (`Object.keys`) between two tags; anything else (arrays, nested objects, values with `toJSON`) as its JSON text.
 */
function keyPart(w: Writer, v: unknown): void {
  if (typeof v === 'object' && v !== null && isPlain(v)) {
    const start = w.length;
    const o = v as Record<string, unknown>;
    w.byte(TAG_OBJECT);
    // for…in with an own-member test: Object.keys' order without an array of them per object.
    for (const k in o) {
      if (!Object.hasOwn(o, k)) continue;
      stringPart(w, k);
      if (!scalarPart(w, o[k])) {
        w.truncate(start);
        return jsonPart(w, v);
      }
    }
    w.byte(TAG_END);
    return;
  }
  if (!scalarPart(w, v)) jsonPart(w, v);
}

/** Builds a keyer; its state is only the layouts it has seen, and its scratch. */
export function shapeKeyer(): ShapeKeyer {
  const recent: Layout[] = [];
  const numbered = new Map<string, number>();
  let next = 0;
  // The reading being keyed, in scratch arrays every call reuses (an array of keys and one of values per reading and
  // object was ~860 bytes of garbage a market reading): its field keys, values and which are packed, its label keys
  // and values. Only the first `nKeys` and `nLabels` are this reading's: every loop stops there.
  const keys: string[] = [];
  const values: unknown[] = [];
  const dyn: boolean[] = [];
  const labelKeys: string[] = [];
  const labelValues: unknown[] = [];
  let nKeys = 0;
  let nLabels = 0;
  const last: { keys: readonly string[]; packed: boolean[]; values: unknown[] } = { keys: [], packed: dyn, values };

  /** Whether `l` is the layout of the reading in the scratch. */
  function matches(l: Layout): boolean {
    if (l.keys.length !== nKeys || l.labelKeys.length !== nLabels) return false;
    for (let i = 0; i < nKeys; i++) if (l.keys[i] !== keys[i] || l.dyn[i] !== dyn[i]) return false;
    for (let i = 0; i < nLabels; i++) if (l.labelKeys[i] !== labelKeys[i]) return false;
    return true;
  }

  function layoutOf(): Layout {
    for (let i = 0; i < recent.length; i++) {
      const l = recent[i]!;
      if (!matches(l)) continue;
      if (i > 0) {
        recent.splice(i, 1);
        recent.unshift(l);
      }
      return l;
    }
    const l: Layout = { no: 0, labelKeys: labelKeys.slice(0, nLabels), keys: keys.slice(0, nKeys), dyn: dyn.slice(0, nKeys) };
    const text = JSON.stringify([l.labelKeys, l.keys, l.dyn]);
    let no = numbered.get(text);
    if (no === undefined) {
      if (numbered.size >= NUMBERED_LIMIT) numbered.clear();
      no = next++;
      numbered.set(text, no);
    }
    l.no = no;
    recent.unshift(l);
    if (recent.length > RECENT) recent.pop();
    return l;
  }

  /** The place of `v` among the reading's label values, or −1. */
  function labelPlace(v: string): number {
    for (let j = 0; j < nLabels; j++) if (labelValues[j] === v) return j;
    return -1;
  }

  // One writer for every key: its buffer is reused, the bytes hashed where they are.
  const w = new Writer();
  const key = (labels: Record<string, string>, fields: Record<string, unknown>, unreadable: Record<string, string> | undefined): string | undefined => {
    // Members by for…in with an own-member test: Object.keys' order, and V8 loads each by its place in the object
    // (a load by a name taken from an array is its generic lookup).
    nKeys = 0;
    for (const k in fields) {
      if (!Object.hasOwn(fields, k)) continue;
      const v = fields[k];
      keys[nKeys] = k;
      values[nKeys] = v;
      dyn[nKeys] = isPacked(v);
      nKeys++;
    }
    nLabels = 0;
    for (const k in labels) {
      if (!Object.hasOwn(labels, k)) continue;
      labelKeys[nLabels] = k;
      labelValues[nLabels] = labels[k];
      nLabels++;
    }
    // The fields' layout first: it is the save's to use whether or not the labels give a key.
    const layout = layoutOf();
    last.keys = layout.keys;
    w.truncate(0);
    w.varint(layout.no);
    for (let i = 0; i < nLabels; i++) {
      const v = labelValues[i];
      if (typeof v !== 'string') return undefined;
      stringPart(w, v);
    }
    for (let i = 0; i < nKeys; i++) {
      if (dyn[i]) continue;
      const v = values[i];
      // A text that is a label's value already in the key: that label's place, not the text again.
      const j = typeof v === 'string' ? labelPlace(v) : -1;
      if (j < 0) keyPart(w, v);
      else {
        w.byte(TAG_LABEL);
        w.varint(j);
      }
    }
    if (unreadable && Object.keys(unreadable).length > 0) keyPart(w, unreadable);
    else w.byte(TAG_NULL);
    // Never the bytes of a shape's text, whose digest the dictionary caches ids under when a reading has no key
    // (Dictionary.idOfCached): a text starts `{"labels"`, and byte 1 here is a tag, never `"`.
    return hash('sha256', w.view(), 'binary');
  };
  return Object.assign(key, { last });
}
