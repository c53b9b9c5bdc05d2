/**
 * A cheap exact key of a reading's shape (src/store/codec.ts), for the in-memory cache of shape ids: a save looks
 * up the shape of every reading, changed or not, and building the shape's JSON text (~40 members: the labels, every
 * field's key and whether it is packed, the fixed values) cost ~3 µs a reading in JSON.stringify alone, ~60% of a
 * save of an unchanged position.
 *
 * The key is the SHA-256 digest of a shorter text that determines the shape all the same: the number of its
 * **layout** (the label keys, the field keys in order, which fields are packed — a handful per kind, recognised by
 * comparing keys, not by text) and, one after another, the label values, the fixed (non-packed) field values and the
 * unreadable map, each written by {@link keyPart} in a form that says where it ends (a string as its length and its
 * characters: no JSON escaping, which was most of a market's key — its `market` object and addresses). Equal keys
 * mean equal shapes:
 * - a layout number names one layout only (numbers are never reused), and says how many parts follow;
 * - each part is self-delimiting and written from exactly the value the shape's JSON is written from, so equal parts
 *   mean equal JSON there (a part may tell apart values JSON writes alike — NaN and null, an undefined member and
 *   none: that costs a lookup, never a wrong id); a label that is not a string has no key (`undefined`: the caller
 *   builds the shape's text instead).
 * - the text is hashed as UTF-8, which merges lone surrogates: a string that is not well formed is written as its
 *   JSON (which escapes them), never as itself.
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

/** A string's part: its length and its characters, or its JSON when it holds a lone surrogate (UTF-8 would merge it). */
function stringPart(s: string): string {
  return isWellFormed(s) ? `s${s.length}:${s}` : jsonPart(s);
}

/** Any value's part as its JSON text, with the text's length (`u` for undefined, which JSON leaves out). */
function jsonPart(v: unknown): string {
  const json = JSON.stringify(v) as string | undefined;
  return json === undefined ? 'u' : `j${json.length}:${json}`;
}

const isPlain = (v: object): boolean => {
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
};

/**
 * A value's part of the key, self-delimiting: a string by {@link stringPart}; a number as its `String()` (JSON writes
 * it so, or null when not finite); true, false, null, undefined as one letter; a plain object whose members are all
 * of those as its keys and members in JSON's order (`Object.keys`) between `o` and `}`; anything else (arrays, nested
 * objects, values with `toJSON`) by {@link jsonPart}.
 */
export function keyPart(v: unknown): string {
  if (typeof v === 'string') return stringPart(v);
  if (typeof v === 'object' && v !== null && isPlain(v)) {
    const o = v as Record<string, unknown>;
    let text = 'o';
    for (const k of Object.keys(o)) {
      const m = scalarPart(o[k]);
      if (m === undefined) return jsonPart(v);
      text += stringPart(k) + m;
    }
    return `${text}}`;
  }
  return scalarPart(v) ?? jsonPart(v);
}

/** The part of a string, number, boolean, null or undefined; undefined for anything else. */
function scalarPart(v: unknown): string | undefined {
  switch (typeof v) {
    case 'string':
      return stringPart(v);
    case 'number':
      return `n${v};`;
    case 'boolean':
      return v ? 't' : 'f';
    case 'undefined':
      return 'u';
    default:
      return v === null ? 'z' : undefined;
  }
}

/** `String.prototype.isWellFormed` (Node 20; not in the ES2023 lib's types). */
const isWellFormed = (s: string): boolean => (s as string & { isWellFormed(): boolean }).isWellFormed();

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
    let text = '';
    for (let i = 0; i < labelKeys.length; i++) {
      const v = labels[labelKeys[i]!];
      if (typeof v !== 'string') return undefined;
      text += stringPart(v);
    }
    for (let i = 0; i < keys.length; i++) if (!dyn[i]) text += keyPart(fields[keys[i]!]);
    text += unreadable && Object.keys(unreadable).length > 0 ? keyPart(unreadable) : 'z';
    return hash('sha256', `${layoutOf(labelKeys, keys).no}|${text}`, 'binary');
  };
  return Object.assign(key, { last });
}
