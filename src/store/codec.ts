/**
 * The compact form of a stored reading. A reading splits into its **shape** — labels, the key order, every value that
 * is not a number (strings, nested objects such as a market's asset info), unreadable fields — which changes rarely
 * and is stored once per distinct shape, and its **values**: the numbers, booleans, nulls and decimal integer strings
 * (token amounts, raw oracle prices) packed into a few bytes each:
 *
 * - a number with a short decimal form (0.644698, 1.386636e-2, 52085279.95) as its digits and scale: 3–6 bytes;
 * - an integer close to the reading's own time (a timestamp, an oracle update) as the difference: 1–4 bytes;
 * - other safe integers as a varint, anything else as the 8-byte double;
 * - a decimal integer string as its digits without trailing zeros, in binary, and the zeros' count
 *   ("1201231211320350000000000000000000000": 9 bytes), kept exactly: decoding gives back the same string.
 *
 * Every value is one tag byte (type in the low 3 bits, a parameter in the high 5) and its payload. Decoding needs the
 * shape and the reading's time. A non-finite number is stored as null, as the JSON form stored it before.
 */

import { setOwn } from '../own.js';

/** What a reading's fields and labels split into. `dyn` marks the keys whose values are in the packed values. */
export interface Shape {
  labels: Record<string, string>;
  keys: string[];
  /** Per key: 1 = packed value, 0 = in `fixed`. */
  dyn: number[];
  fixed: Record<string, unknown>;
  unreadable?: Record<string, string>;
}

const T_NULL = 0;
const T_BOOL = 1; // param: 0 false, 1 true
const T_INT = 2; // zigzag varint
const T_DELTA = 3; // zigzag varint of value − base (the reading's time)
const T_DEC = 4; // param: scale 1..31; zigzag varint mantissa; value = mantissa × 10^−scale
const T_F64 = 5; // 8 bytes little-endian
const T_DIGITS = 6; // param: 0 non-negative, 1 negative; varint trailing zeros, varint byte count, magnitude big-endian
const T_TEXT = 7; // varint byte count, UTF-8 (a value kept as it was when no other form reproduces it)

const DIGITS = /^-?(?:0|[1-9]\d*)$/;
const MAX_ZIG = 2 ** 52;

/** True for the values that go into the packed part: numbers, booleans, null, decimal integer strings. */
export function isPacked(v: unknown): boolean {
  return v === null || typeof v === 'number' || typeof v === 'boolean' || (typeof v === 'string' && v.length <= 200 && startsDigits(v) && DIGITS.test(v));
}

/**
 * Whether a string can be {@link DIGITS}' at all by its first character (a digit or `-`): most strings a save tests
 * are ids, addresses and names, told apart here without running the regex (a call each, five a position).
 */
function startsDigits(s: string): boolean {
  const c = s.charCodeAt(0);
  return c === 45 || (c >= 48 && c <= 57);
}

/** A growable byte buffer. */
export class Writer {
  private buf = Buffer.allocUnsafe(256);
  private n = 0;
  /**
   * Views of `buf` by their length, made once each (see {@link view}); dropped when `buf` is replaced. At most one a
   * length up to the buffer's size; in practice a few hundred (a key's and a row's lengths).
   */
  private views: Uint8Array[] = [];
  private room(k: number): void {
    if (this.n + k <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.n + k));
    this.buf.copy(next, 0, 0, this.n);
    this.buf = next;
    this.views = [];
  }
  byte(b: number): void {
    this.room(1);
    this.buf[this.n++] = b;
  }
  varint(v: number): void {
    this.room(8);
    while (v >= 0x80) {
      this.buf[this.n++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[this.n++] = v;
  }
  /** The `n` low bytes of a safe integer, most significant first. */
  bigEndian(v: number, n: number): void {
    this.room(n);
    for (let i = this.n + n - 1; i >= this.n; i--) {
      this.buf[i] = v % 256;
      v = Math.floor(v / 256);
    }
    this.n += n;
  }
  bytes(b: Uint8Array): void {
    this.room(b.length);
    this.buf.set(b, this.n);
    this.n += b.length;
  }
  f64(v: number): void {
    this.room(8);
    this.buf.writeDoubleLE(v, this.n);
    this.n += 8;
  }
  get length(): number {
    return this.n;
  }
  /** Appends the characters `[from, to)` of a one-byte string ({@link takeKey}'s) as the bytes they stand for. */
  latin1(s: string, from: number, to: number): void {
    this.room(to - from);
    for (let i = from; i < to; i++) this.buf[this.n++] = s.charCodeAt(i);
  }
  /**
   * Appends a string's code units one byte each when every one is below 0x80 (true); else writes nothing and returns
   * false (see {@link utf16le}).
   */
  ascii(s: string): boolean {
    const n = s.length;
    this.room(n);
    const buf = this.buf;
    let at = this.n;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) return false;
      buf[at++] = c;
    }
    this.n = at;
    return true;
  }
  /** Appends a string's code units two bytes each, little-endian (lone surrogates as they are). */
  utf16le(s: string): void {
    this.room(2 * s.length);
    const buf = this.buf;
    let at = this.n;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      buf[at++] = c & 0xff;
      buf[at++] = c >>> 8;
    }
    this.n = at;
  }
  /** Drops what was written after the first `n` bytes. */
  truncate(n: number): void {
    this.n = Math.min(n, this.n);
  }
  /**
   * What was written, as a view of the writer's buffer: valid until the next write. One view per length is kept and
   * given again (a shape key's bytes are hashed and a row's values bound where they are, 60,000 a poll: a view made
   * each time was ~80 bytes of garbage each).
   */
  view(): Uint8Array {
    let v = this.views[this.n];
    if (v === undefined) this.views[this.n] = v = this.buf.subarray(0, this.n);
    return v;
  }
  /** {@link view}, and the writer starts over (the view holds what was written until the next write). */
  takeView(): Uint8Array {
    const v = this.view();
    this.n = 0;
    return v;
  }
  /** What was written as a one-byte string (a compact key to compare and keep: no Buffer object per value); the writer starts over. */
  takeKey(): string {
    const out = this.buf.toString('latin1', 0, this.n);
    this.n = 0;
    return out;
  }
  /** A copy of what was written; the writer starts over. */
  take(): Buffer {
    const out = Buffer.from(this.buf.subarray(0, this.n));
    this.n = 0;
    return out;
  }
}

/** Reads what a {@link Writer} wrote. */
export class Reader {
  /**
   * Reads `buf` from `pos` up to `end` (default: all of it): a row's values inside a chunk's body are read where they
   * are, without a view made of them (a view costs ~100 ns, more than decoding the value a rule reads).
   */
  constructor(
    private readonly buf: Uint8Array,
    public pos = 0,
    private readonly end = buf.length,
  ) {}
  get done(): boolean {
    return this.pos >= this.end;
  }
  byte(): number {
    if (this.pos >= this.end) throw new RangeError('packed values end early');
    return this.buf[this.pos++]!;
  }
  varint(): number {
    const buf = this.buf;
    const end = this.end;
    let pos = this.pos;
    // One byte (most ids, lengths, small deltas) without the loop.
    if (pos < end && buf[pos]! < 0x80) {
      this.pos = pos + 1;
      return buf[pos]!;
    }
    let v = 0;
    let mul = 1;
    for (;;) {
      if (pos >= end) throw new RangeError('packed values end early');
      const b = buf[pos++]!;
      v += (b & 0x7f) * mul;
      if (b < 0x80) {
        this.pos = pos;
        return v;
      }
      mul *= 0x80;
    }
  }
  bytes(k: number): Uint8Array {
    if (this.pos + k > this.end) throw new RangeError('packed values end early');
    const out = this.buf.subarray(this.pos, this.pos + k);
    this.pos += k;
    return out;
  }
  /** Moves past `k` bytes (no view made of them). */
  skip(k: number): void {
    if (this.pos + k > this.end) throw new RangeError('packed values end early');
    this.pos += k;
  }
  f64(): number {
    if (this.pos + 8 > this.end) throw new RangeError('packed values end early');
    // Through one scratch view: no view nor DataView made per value.
    for (let i = 0; i < 8; i++) F64_BYTES[i] = this.buf[this.pos + i]!;
    this.pos += 8;
    return F64.getFloat64(0, true);
  }
}

const F64 = new DataView(new ArrayBuffer(8));
const F64_BYTES = new Uint8Array(F64.buffer);

/** Strings of zeros by count, for the trailing zeros of decimal integer strings (token amounts have 6 to 30). */
const ZEROS = Array.from({ length: 64 }, (_, i) => '0'.repeat(i));

/** Exact powers of ten (up to 10^22 a double holds exactly). */
const POW10 = Array.from({ length: 23 }, (_, i) => Number(`1e${i}`));

/**
 * m × 10^−scale as the nearest double: for |m| < 2^53 and scale ≤ 22 both are exact doubles and IEEE division rounds
 * once, to the same double as parsing the decimal text would; past that, the text is parsed.
 */
export function scaled(m: number, scale: number): number {
  return scale <= 22 ? m / POW10[scale]! : Number(`${m}e-${scale}`);
}

/** Zigzag: a signed integer as a non-negative one (small magnitudes stay small), and back. */
export const zig = (v: number): number => (v >= 0 ? v * 2 : -v * 2 - 1);
export const unzig = (z: number): number => (z % 2 === 0 ? z / 2 : -(z + 1) / 2);

/** What {@link decimalOf} gives: one object, filled anew by every call (six numbers a market reading: no object each). */
const DEC = { m: 0, scale: 0 };

/**
 * A number's shortest decimal form as mantissa × 10^−scale with scale 1..31, or null when it has none that small. The
 * form is {@link DEC}, valid until the next call.
 */
function decimalOf(x: number): { m: number; scale: number } | null {
  return decimalByScaling(x) ?? decimalOfText(x);
}

/**
 * The usual case without text: the fewest fraction digits k whose rounding of x × 10^k gives x back (a value the
 * service sent as 0.648 or 4074.24 is found at k = 3 or 2, five times faster than formatting and parsing it). The
 * fewest fraction digits are the shortest form String() gives; where the product's own rounding hides that form (16
 * significant digits), this finds nothing and the text decides.
 */
function decimalByScaling(x: number): { m: number; scale: number } | null {
  const a = Math.abs(x);
  if (Number.isInteger(a)) return null;
  for (let k = 1; k <= 31; k++) {
    const m = Math.round(a * (k <= 22 ? POW10[k]! : 10 ** k));
    if (m >= MAX_ZIG) return null;
    if (scaled(m, k) === a) return found(x < 0 ? -m : m, k);
  }
  return null;
}

/** {@link decimalOf} from the number's shortest text. */
function decimalOfText(x: number): { m: number; scale: number } | null {
  const s = String(Math.abs(x));
  const match = /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(s);
  if (!match) return null;
  const frac = match[2] ?? '';
  const scale = frac.length - Number(match[3] ?? 0);
  if (scale < 1 || scale > 31) return null;
  const m = Number(match[1]! + frac);
  if (!Number.isSafeInteger(m) || m >= MAX_ZIG) return null;
  return found(x < 0 ? -m : m, scale);
}

/** {@link DEC} holding mantissa `m` and `scale`. */
function found(m: number, scale: number): { m: number; scale: number } {
  DEC.m = m;
  DEC.scale = scale;
  return DEC;
}

/**
 * Appends a non-negative decimal integer `s[from, to)` (no leading zeros) as a varint byte count and its magnitude in
 * big-endian bytes, the fewest that hold it (one 0 byte for zero).
 */
function writeMagnitude(w: Writer, s: string, from: number, to: number): void {
  // Up to 15 digits the number is exact as a double: no BigInt, no hex text, no array of its own.
  if (to - from <= 15) {
    let v = 0;
    for (let i = from; i < to; i++) v = v * 10 + (s.charCodeAt(i) - 48);
    let n = 1;
    for (let x = v; x >= 256; x = Math.floor(x / 256)) n++;
    w.varint(n);
    return w.bigEndian(v, n);
  }
  let hex = BigInt(s.slice(from, to)).toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  const b = Buffer.from(hex, 'hex');
  w.varint(b.length);
  w.bytes(b);
}

/** Appends a number in the shortest of the forms above (a non-finite one as null, as JSON stored it). */
function writeNumber(w: Writer, v: number, base: number): void {
  if (!Number.isFinite(v)) return w.byte(T_NULL);
  if (Number.isInteger(v) && Math.abs(v) < MAX_ZIG) {
    const d = v - base;
    if (Math.abs(d) < Math.abs(v) && Math.abs(d) < MAX_ZIG) {
      w.byte(T_DELTA);
      return w.varint(zig(d));
    }
    w.byte(T_INT);
    return w.varint(zig(v));
  }
  const dec = decimalOf(v);
  if (dec && scaled(dec.m, dec.scale) === v) {
    w.byte(T_DEC | (dec.scale << 3));
    return w.varint(zig(dec.m));
  }
  w.byte(T_F64);
  return w.f64(v);
}

/** Appends a decimal integer string ({@link DIGITS}, not "-0"): its sign, its trailing zeros' count, the rest's magnitude. */
function writeDigits(w: Writer, v: string): void {
  const neg = v.charCodeAt(0) === 45; /* - */
  const from = neg ? 1 : 0;
  // Trailing zeros off, down to the first digit ("0" stays "0": no leading zeros, so nothing else trims to nothing).
  let to = v.length;
  while (to > from + 1 && v.charCodeAt(to - 1) === 48 /* 0 */) to--;
  w.byte(T_DIGITS | ((neg ? 1 : 0) << 3));
  w.varint(v.length - to);
  writeMagnitude(w, v, from, to);
}

/** Appends one value (anything {@link isPacked} accepts; other values are kept as text of their JSON). */
export function writeValue(w: Writer, v: unknown, base: number): void {
  if (typeof v === 'string' ? DIGITS.test(v) : v === null || v === undefined || typeof v === 'boolean' || typeof v === 'number') writePacked(w, v, base);
  else writeText(w, v);
}

/**
 * Appends a value {@link isPacked} accepted, without testing it again: a string is a decimal integer (a save knows which
 * fields are packed from its shape key, and its memo and packed values write them by that).
 */
export function writePacked(w: Writer, v: unknown, base: number): void {
  if (v === null || v === undefined) return w.byte(T_NULL);
  if (typeof v === 'boolean') return w.byte(T_BOOL | ((v ? 1 : 0) << 3));
  if (typeof v === 'number') return writeNumber(w, Object.is(v, -0) ? 0 : v, base); // -0 as JSON stored it
  // "-0" is the one decimal integer string its digits cannot give back: kept as text.
  if (typeof v === 'string' && v !== '-0') return writeDigits(w, v);
  writeText(w, v);
}

/** Appends a value as text: a string as it is, anything else as its JSON. */
function writeText(w: Writer, v: unknown): void {
  const text = Buffer.from(typeof v === 'string' ? v : JSON.stringify(v), 'utf8');
  w.byte(T_TEXT | ((typeof v === 'string' ? 0 : 1) << 3));
  w.varint(text.length);
  w.bytes(text);
}

/** Reads one value written by {@link writeValue}. */
export function readValue(r: Reader, base: number): unknown {
  const tag = r.byte();
  const param = tag >> 3;
  switch (tag & 7) {
    case T_NULL:
      return null;
    case T_BOOL:
      return param === 1;
    case T_INT:
      return unzig(r.varint());
    case T_DELTA:
      return base + unzig(r.varint());
    case T_DEC:
      return scaled(unzig(r.varint()), param);
    case T_F64:
      return r.f64();
    case T_DIGITS: {
      const zeros = r.varint();
      const b = r.bytes(r.varint());
      let head: string;
      if (b.length <= 6) {
        // Up to 48 bits: exact as a double, no BigInt or hex text.
        let v = 0;
        for (let i = 0; i < b.length; i++) v = v * 256 + b[i]!;
        head = String(v);
      } else head = BigInt(`0x${Buffer.from(b).toString('hex')}`).toString();
      const digits = head + (zeros < ZEROS.length ? ZEROS[zeros]! : '0'.repeat(zeros));
      return param === 1 ? `-${digits}` : digits;
    }
    default: {
      const text = Buffer.from(r.bytes(r.varint())).toString('utf8');
      return param === 1 ? JSON.parse(text) : text;
    }
  }
}

/** Reads past one value written by {@link writeValue} without building it. */
export function skipValue(r: Reader): void {
  const tag = r.byte();
  switch (tag & 7) {
    case T_NULL:
    case T_BOOL:
      return;
    case T_INT:
    case T_DELTA:
    case T_DEC:
      r.varint();
      return;
    case T_F64:
      r.skip(8);
      return;
    case T_DIGITS:
      r.varint();
      r.skip(r.varint());
      return;
    default:
      r.skip(r.varint());
  }
}

/** Splits a reading's labels and fields into its shape (as stable JSON text) and its packed values. */
export function packReading(
  w: Writer,
  labels: Record<string, string>,
  fields: Record<string, unknown>,
  unreadable: Record<string, string> | undefined,
  at: number,
): { shape: string; vals: Buffer } {
  return { shape: shapeText(labels, fields, unreadable), vals: packValues(w, fields, at) };
}

/** A reading's shape as stable JSON text (what {@link packReading} stores it as). */
export function shapeText(labels: Record<string, string>, fields: Record<string, unknown>, unreadable: Record<string, string> | undefined): string {
  const keys = Object.keys(fields);
  const dyn: number[] = new Array(keys.length);
  const fixed: Record<string, unknown> = {};
  for (let i = 0; i < keys.length; i++) {
    const v = fields[keys[i]!];
    if (isPacked(v)) dyn[i] = 1;
    else {
      dyn[i] = 0;
      setOwn(fixed, keys[i]!, v);
    }
  }
  const shape: Shape = { labels, keys, dyn, fixed, ...(unreadable && Object.keys(unreadable).length ? { unreadable } : {}) };
  return JSON.stringify(shape);
}

/**
 * A reading's field keys in order and which of them are packed ({@link isPacked}), as a save's shape key found them.
 * `packed` (and `values`) may be longer than `keys`: only their first `keys.length` entries are this reading's.
 */
export interface PackedLayout {
  keys: readonly string[];
  packed: readonly boolean[];
  /**
   * The reading's values in the order of `keys`, where the layout was made from the reading being written (the shape
   * key's): taken from here, not loaded by a changing name per field (V8's generic lookup).
   */
  values?: readonly unknown[];
}

/**
 * A reading's packed values (what {@link packReading} stores them as); `layout`, when given, says which fields they are
 * (its `values` are not used here: this is the path of a reading written once, not a save's hot loop).
 */
export function packValues(w: Writer, fields: Record<string, unknown>, at: number, layout?: PackedLayout): Buffer {
  if (layout) {
    const { keys, packed } = layout;
    for (let i = 0; i < keys.length; i++) if (packed[i]) writePacked(w, fields[keys[i]!], at);
  } else
    for (const k of Object.keys(fields)) {
      const v = fields[k];
      if (isPacked(v)) writePacked(w, v, at);
    }
  return w.take();
}

/**
 * Appends a reading's packed values but the fields `leaveOut` names, against base 0 (what a save's memo holds), and
 * notes where each one's bytes sit in the writer — `spans[2i]` to `spans[2i + 1]` for key i, −1 for one not written —
 * so that {@link packValuesFrom} can take them from the memo instead of encoding the values again.
 */
export function writeMemoValues(w: Writer, fields: Record<string, unknown>, { keys, packed, values }: PackedLayout, leaveOut: ReadonlySet<string>, spans: number[]): void {
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    if (!packed[i] || leaveOut.has(k)) {
      spans[2 * i] = -1;
      continue;
    }
    spans[2 * i] = w.length;
    writePacked(w, values ? values[i] : fields[k], 0);
    spans[2 * i + 1] = w.length;
  }
}

/**
 * The same bytes as {@link packValues} with `layout`, where a value's bytes do not depend on the base taken from the
 * memo {@link writeMemoValues} wrote (as its one-byte string, `spans` as it left them). Only an integer number's
 * bytes depend on the base (a difference from one near it, {@link writeNumber}): those, and the values the memo
 * left out, are encoded here.
 */
export function packValuesFrom(w: Writer, fields: Record<string, unknown>, at: number, { keys, packed, values }: PackedLayout, memo: string, spans: readonly number[]): Uint8Array {
  for (let i = 0; i < keys.length; i++) {
    if (!packed[i]) continue;
    const v = values ? values[i] : fields[keys[i]!];
    const from = spans[2 * i]!;
    if (from < 0 || (typeof v === 'number' && Number.isInteger(v))) writePacked(w, v, at);
    else w.latin1(memo, from, spans[2 * i + 1]!);
  }
  // A view, not a copy: the statement it is bound to copies it (better-sqlite3 binds blobs SQLITE_TRANSIENT).
  return w.takeView();
}

/**
 * Which fields of a reading a read builds: these top-level names (a reader that judges `utilization` needs no token
 * amounts decoded); every field when a read is given none. Sets are compared by identity: one pick per replay.
 */
export type FieldPick = ReadonlySet<string>;

/**
 * What decoding a shape's readings with a pick needs, worked out once per shape and pick: the decoder of the picked
 * keys' layout and the values of those that are fixed (by the key's place among the picked, in the shape's order).
 */
export interface PickPlan {
  /** Builds the picked fields from a reader at the first packed value, leaving it after the last picked one ({@link decoderOf}). */
  decode: Decode;
  fixed: unknown[];
  /** Packed values `decode` reads or reads past. */
  consumed: number;
  /** Packed values in all (to read past those after the last picked one). */
  packed: number;
}
const pickPlans = new WeakMap<FieldPick, WeakMap<Shape, PickPlan>>();
/** The plan of a shape and pick (made once; a caller reading many rows may keep it by shape id, see {@link unpackPlanned}). */
export function pickPlanOf(shape: Shape, pick: FieldPick): PickPlan {
  let byShape = pickPlans.get(pick);
  if (!byShape) pickPlans.set(pick, (byShape = new WeakMap()));
  let p = byShape.get(shape);
  if (!p) {
    const keys: string[] = [];
    const ord: number[] = [];
    const fixed: unknown[] = [];
    let packed = 0;
    shape.keys.forEach((k, i) => {
      if (pick.has(k)) {
        keys.push(k);
        ord.push(shape.dyn[i] ? packed : -1);
        fixed.push(shape.dyn[i] ? undefined : shape.fixed[k]);
      }
      if (shape.dyn[i]) packed++;
    });
    p = pickPlan(keys, ord, fixed, packed);
    byShape.set(shape, p);
  }
  return p;
}

/** A plan of these picked keys (in the shape's order), their packed ordinals (−1: fixed) and fixed values. */
function pickPlan(keys: string[], ord: number[], fixed: unknown[], packed: number): PickPlan {
  let consumed = 0;
  for (const o of ord) if (o >= 0) consumed = o + 1;
  return { decode: decoderOf(keys, ord, keys.includes('__proto__')), fixed, consumed, packed };
}

/** Reads a reading's picked fields (see {@link PickPlan.decode}); `fixed` is the plan's. */
type Decode = (r: Reader, at: number, fixed: readonly unknown[]) => Record<string, unknown>;

/**
 * Decoders by layout (the picked keys and their ordinals), made once per layout: every market of one service has the
 * same few layouts, so a replay of 10,000 markets shares a handful. Bounded: a service whose rows come in ever new
 * layouts gets the generic loop past {@link MAX_DECODERS}.
 */
const decoders = new Map<string, Decode>();
const MAX_DECODERS = 256;
/** Layouts wider than this take the generic loop (an object literal that large is no faster). */
const MAX_DECODED_KEYS = 64;

/**
 * The decoder of a layout: a function made for it whose object literal names the keys, so every reading of the layout
 * is built with one hidden class at once — where the generic loop stored each field by a key it looked up (a keyed
 * store per field, ~2× the decode). The keys come from the service: each is written into the code as
 * `JSON.stringify(key)`, a string literal (quotes, backslashes, control characters and lone surrogates escaped), never
 * as code; `__proto__` as a computed key, which makes an own member where the literal form would set the prototype.
 */
function decoderOf(keys: readonly string[], ord: readonly number[], proto: boolean): Decode {
  if (keys.length > MAX_DECODED_KEYS) return genericDecode(keys, ord, proto);
  const layout = JSON.stringify([keys, ord]);
  let d = decoders.get(layout);
  if (d) return d;
  if (decoders.size >= MAX_DECODERS) return genericDecode(keys, ord, proto);
  let body = '';
  const members: string[] = [];
  let next = 0;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const name = k === '__proto__' ? '["__proto__"]' : JSON.stringify(k);
    const o = ord[i]!;
    if (o < 0) {
      members.push(`${name}: fixed[${i}]`);
      continue;
    }
    for (; next < o; next++) body += 'skip(r);\n';
    body += `const v${i} = read(r, at);\n`;
    next++;
    members.push(`${name}: v${i}`);
  }
  const make = new Function('skip', 'read', `"use strict";\nreturn function decode(r, at, fixed) {\n${body}return { ${members.join(', ')} };\n};`) as (
    skip: typeof skipValue,
    read: typeof readValue,
  ) => Decode;
  d = make(skipValue, readValue);
  decoders.set(layout, d);
  return d;
}

/** The decode of a layout as a loop over its keys (no code made). */
function genericDecode(keys: readonly string[], ord: readonly number[], proto: boolean): Decode {
  return (r, at, fixed) => {
    const fields: Record<string, unknown> = {};
    let next = 0; // the ordinal of the packed value the reader is at
    for (let i = 0; i < keys.length; i++) {
      const o = ord[i]!;
      let v: unknown;
      if (o < 0) v = fixed[i];
      else {
        for (; next < o; next++) skipValue(r);
        v = readValue(r, at);
        next++;
      }
      if (proto) setOwn(fields, keys[i]!, v);
      else fields[keys[i]!] = v;
    }
    return fields;
  };
}

/**
 * The fields of a reading from its shape and packed values (the reader is left after the last value). With `pick`,
 * only the picked fields, the others' values read past; `toEnd` false leaves the reader after the last picked value
 * instead (for a caller that reads nothing after the values).
 */
export function unpackFields(shape: Shape, r: Reader, at: number, pick?: FieldPick, toEnd = true): Record<string, unknown> {
  return unpackPlanned(pick ? pickPlanOf(shape, pick) : fullPlanOf(shape), r, at, toEnd);
}

/** The plan that decodes every field of a shape's readings (made once per shape). */
const fullPlans = new WeakMap<Shape, PickPlan>();
function fullPlanOf(shape: Shape): PickPlan {
  let p = fullPlans.get(shape);
  if (!p) {
    const ord: number[] = [];
    let packed = 0;
    for (let i = 0; i < shape.keys.length; i++) ord.push(shape.dyn[i] ? packed++ : -1);
    p = pickPlan(shape.keys, ord, shape.keys.map((k, i) => (shape.dyn[i] ? undefined : shape.fixed[k])), packed);
    fullPlans.set(shape, p);
  }
  return p;
}

/** {@link unpackFields} with a pick, by its plan ({@link pickPlanOf}). */
export function unpackPlanned(p: PickPlan, r: Reader, at: number, toEnd: boolean): Record<string, unknown> {
  const fields = p.decode(r, at, p.fixed);
  if (toEnd) for (let next = p.consumed; next < p.packed; next++) skipValue(r);
  return fields;
}

/** The number a packed value compares by (decimal strings by their value), or null when it is not a number. */
export function numeric(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'string' && DIGITS.test(v)) return Number(v);
  return null;
}
