/**
 * A cheap exact key of a reading's shape (src/store/codec.ts), for the in-memory cache of shape ids: a save looks
 * up the shape of every reading, changed or not, and building the shape's JSON text (~40 members: the labels, every
 * field's key and whether it is packed, the fixed values) cost ~3 µs a reading in JSON.stringify alone, ~60% of a
 * save of an unchanged position.
 *
 * The key is the SHA-256 digest of a shorter run of bytes that determines the shape all the same: the number of its
 * **layout** (the label keys, the field keys in order, which fields are packed — a handful per kind, recognised by
 * comparing keys, not by text) and, one after another, the label values, the fixed (non-packed) field values and the
 * unreadable map, each written by {@link KeyBytes.part} in a form that says where it ends (a string as a tag, its
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

const isPlain = (v: object): boolean => {
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
};

/** The bytes of one key, written into a buffer reused from key to key (grown when a key needs more). */
export class KeyBytes {
  private buf = new Uint8Array(1024);
  private view = new DataView(this.buf.buffer);
  /** Bytes written since {@link reset}. */
  length = 0;

  reset(): void {
    this.length = 0;
  }

  /** The bytes written, as a view of the buffer (valid until the next write). */
  bytes(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }

  private room(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const grown = new Uint8Array(Math.max(this.buf.length * 2, this.length + n));
    grown.set(this.buf.subarray(0, this.length));
    this.buf = grown;
    this.view = new DataView(grown.buffer);
  }

  byte(b: number): void {
    this.room(1);
    this.buf[this.length++] = b;
  }

  varint(n: number): void {
    this.room(5);
    while (n >= 0x80) {
      this.buf[this.length++] = (n & 0x7f) | 0x80;
      n >>>= 7;
    }
    this.buf[this.length++] = n;
  }

  /** A string: its tag, its length in code units, its units (one byte each when all are ASCII, else two). */
  string(s: string): void {
    const n = s.length;
    this.room(6 + 2 * n);
    const start = this.length;
    this.buf[this.length++] = TAG_ASCII;
    this.varint(n);
    const buf = this.buf;
    let at = this.length;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) {
        this.length = start;
        return this.wide(s);
      }
      buf[at++] = c;
    }
    this.length = at;
  }

  private wide(s: string): void {
    this.buf[this.length++] = TAG_WIDE;
    this.varint(s.length);
    const buf = this.buf;
    let at = this.length;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      buf[at++] = c & 0xff;
      buf[at++] = c >>> 8;
    }
    this.length = at;
  }

  /**
   * A value's part, self-delimiting: a string by {@link string}; a number as its float64; true, false, null,
   * undefined as one tag; a plain object whose members are all of those as its keys and members in JSON's order
   * (`Object.keys`) between two tags; anything else (arrays, nested objects, values with `toJSON`) as its JSON text.
   */
  part(v: unknown): void {
    if (typeof v === 'object' && v !== null && isPlain(v)) {
      const start = this.length;
      const o = v as Record<string, unknown>;
      this.byte(TAG_OBJECT);
      for (const k of Object.keys(o)) {
        this.string(k);
        if (!this.scalar(o[k])) {
          this.length = start;
          return this.json(v);
        }
      }
      this.byte(TAG_END);
      return;
    }
    if (!this.scalar(v)) this.json(v);
  }

  /** A string, number, boolean, null or undefined's part; false (nothing written) for anything else. */
  private scalar(v: unknown): boolean {
    switch (typeof v) {
      case 'string':
        this.string(v);
        return true;
      case 'number':
        this.room(9);
        this.buf[this.length++] = TAG_NUMBER;
        this.view.setFloat64(this.length, v, true);
        this.length += 8;
        return true;
      case 'boolean':
        this.byte(v ? TAG_TRUE : TAG_FALSE);
        return true;
      case 'undefined':
        this.byte(TAG_UNDEFINED);
        return true;
      default:
        if (v !== null) return false;
        this.byte(TAG_NULL);
        return true;
    }
  }

  /** Any value's part as its JSON text (undefined, which JSON leaves out, as its own tag). */
  private json(v: unknown): void {
    const json = JSON.stringify(v) as string | undefined;
    if (json === undefined) return this.byte(TAG_UNDEFINED);
    this.byte(TAG_JSON);
    this.string(json);
  }
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

  const w = new KeyBytes();
  const key = (labels: Record<string, string>, fields: Record<string, unknown>, unreadable: Record<string, string> | undefined): string | undefined => {
    const keys = Object.keys(fields);
    // The fields' layout first: it is the save's to use whether or not the labels give a key.
    dyn.length = keys.length;
    for (let i = 0; i < keys.length; i++) dyn[i] = isPacked(fields[keys[i]!]);
    last.keys = keys;
    const labelKeys = Object.keys(labels);
    w.reset();
    w.varint(layoutOf(labelKeys, keys).no);
    for (let i = 0; i < labelKeys.length; i++) {
      const v = labels[labelKeys[i]!];
      if (typeof v !== 'string') return undefined;
      w.string(v);
    }
    for (let i = 0; i < keys.length; i++) if (!dyn[i]) w.part(fields[keys[i]!]);
    if (unreadable && Object.keys(unreadable).length > 0) w.part(unreadable);
    else w.byte(TAG_NULL);
    // Never the bytes of a shape's text, whose digest the dictionary caches ids under when a reading has no key
    // (Dictionary.idOfCached): a text starts `{"labels"`, and byte 1 here is a tag, never `"`.
    return hash('sha256', w.bytes(), 'binary');
  };
  return Object.assign(key, { last });
}
