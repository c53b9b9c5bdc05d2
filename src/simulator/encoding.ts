/**
 * How the simulator writes values on the wire. The interface does not show how the service encodes its
 * numbers (SPEC §6), so the simulator must not agree with lookout's client by construction: every value
 * family has several encodings, chosen per family — or drawn per row and field from a seed (`chaos`).
 * Whatever the encoding, a value denotes the same thing as the canonical one (the world is the same).
 *
 * | family   | encodings |
 * |----------|-----------|
 * | numbers  | `json` 0.91 · `string` "0.91" · `exponent` "9.1e-1" |
 * | amounts  | `base` "1015432098625" (integer base units, text) · `base-number` (the same as a JSON number, exact past 2^53) · `units` "1015432.098625" (decimal token units) · `units-number` |
 * | oracle   | `scaled` (Morpho: × 1e36 × 10^(loan − collateral decimals), text) · `scaled-number` · `unit` 3012.55 (collateral in loan units) · `unit-string` |
 * | times    | `native` (created_at ISO, others Unix s) · `s` · `ms` · `iso` · `iso-offset` (+hh:mm) · `iso-local` (no zone: UTC) |
 * | booleans | `json` true · `string` "true" · `upper` "TRUE" · `digit` "1" · `number` 1 |
 * | optional | a value the world leaves unknown: `null` · `missing` (key left out) · `empty` "" |
 * | extra    | `none` · `some` (unknown extra fields on rows) |
 * | market   | the nested `market` object of a metrics row: `present` · `absent` (null) |
 */
import { hash32 } from './random.js';

/** Every family and its encodings, canonical first. */
export const FAMILIES = {
  numbers: ['json', 'string', 'exponent'],
  amounts: ['base', 'base-number', 'units', 'units-number'],
  oracle: ['scaled', 'scaled-number', 'unit', 'unit-string'],
  times: ['native', 's', 'ms', 'iso', 'iso-offset', 'iso-local'],
  booleans: ['json', 'string', 'upper', 'digit', 'number'],
  optional: ['null', 'missing', 'empty'],
  extra: ['none', 'some'],
  market: ['present', 'absent'],
} as const;

/** A value family. */
export type Family = keyof typeof FAMILIES;
/** The family names, in table order. */
export const FAMILY_NAMES = Object.keys(FAMILIES) as Family[];
/** An encoding of one family, or `chaos`: drawn per row and field. */
export type Choice<F extends Family> = (typeof FAMILIES)[F][number] | 'chaos';

/** The encoding of every family, and the seed chaos draws from. */
export type Encoding = { [F in Family]: Choice<F> } & { seed: number };

const canonicalChoices: Omit<Encoding, 'seed'> = {
  numbers: 'json', amounts: 'base', oracle: 'scaled', times: 'native', booleans: 'json', optional: 'null', extra: 'none', market: 'present',
};
const allChaos = Object.fromEntries(FAMILY_NAMES.map((f) => [f, 'chaos'])) as Omit<Encoding, 'seed'>;

/** Named encodings (`--encoding NAME`); a name may be followed by `,family=choice` overrides. */
export const PRESETS: Readonly<Record<string, Partial<Omit<Encoding, 'seed'>>>> = {
  /** One form per family: numbers as JSON numbers, amounts and the oracle price as integer text, times as the interface's examples. */
  canonical: {},
  /** Numbers sometimes as strings, times as s/ms/ISO: the simulator's long-standing default. */
  mixed: { numbers: 'chaos', times: 'chaos' },
  /** Everything as text: numbers and booleans as strings, times ISO-8601 with an offset. */
  strings: { numbers: 'string', amounts: 'units', oracle: 'unit-string', times: 'iso-offset', booleans: 'string', optional: 'empty' },
  /** The service this issue met: a plain unit oracle price and decimal token units, times in milliseconds. */
  units: { amounts: 'units-number', oracle: 'unit', times: 'ms', booleans: 'digit', optional: 'missing', extra: 'some' },
  /** Every family drawn per row and field from the seed. */
  chaos: allChaos,
};

/** An encoding from a preset name (with the seed); unknown names throw. */
export function preset(name: string, seed: number): Encoding {
  const p = PRESETS[name];
  if (!p) throw new Error(`unknown encoding "${name}" (one of ${Object.keys(PRESETS).join(', ')})`);
  return { ...canonicalChoices, ...p, seed };
}

/**
 * Parses `--encoding`: a preset name, optionally followed by overrides — `chaos`, `units,times=iso`,
 * `times=ms,numbers=string` (a bare list starts from canonical), `seed=7`. Throws with a clear message.
 */
export function parseEncoding(text: string, seed: number): Encoding {
  const parts = text.split(',').map((s) => s.trim()).filter(Boolean);
  const first = parts[0];
  const enc = first !== undefined && !first.includes('=') ? preset(parts.shift() as string, seed) : preset('canonical', seed);
  for (const part of parts) {
    const [key, value] = part.split('=').map((s) => s.trim()) as [string, string | undefined];
    if (value === undefined || value === '') throw new Error(`encoding "${part}": expected family=choice`);
    if (key === 'seed') {
      if (!/^\d+$/.test(value)) throw new Error(`encoding seed must be a non-negative integer, got "${value}"`);
      enc.seed = Number(value);
      continue;
    }
    if (!(key in FAMILIES)) throw new Error(`encoding: unknown family "${key}" (one of ${FAMILY_NAMES.join(', ')}, seed)`);
    const options: readonly string[] = [...FAMILIES[key as Family], 'chaos'];
    if (!options.includes(value)) throw new Error(`encoding: ${key} is one of ${options.join(', ')}; got "${value}"`);
    (enc as Record<string, unknown>)[key] = value;
  }
  return enc;
}

/** The canonical encoding. */
export const CANONICAL: Encoding = preset('canonical', 0);

/** The encoding as `family=choice` text, for banners and failure messages. */
export function describeEncoding(e: Encoding): string {
  return [...FAMILY_NAMES.map((f) => `${f}=${e[f]}`), `seed=${e.seed}`].join(',');
}

/** True when no family is drawn per row (every value of a family is written one way). */
export function isFixed(e: Encoding): boolean {
  return FAMILY_NAMES.every((f) => e[f] !== 'chaos');
}

// ---- drawing ---------------------------------------------------------------------------------------

const fieldCodes = new Map<string, number>();
function fieldCode(field: string): number {
  let c = fieldCodes.get(field);
  if (c === undefined) fieldCodes.set(field, (c = hash32(0x5eed, field)));
  return c;
}

/** A well-mixed 32-bit hash of a row hash and a field name. */
export function mix(h: number, field: string): number {
  let x = Math.imul(h ^ fieldCode(field), 0x9e3779b1);
  x ^= x >>> 15;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  return x >>> 0;
}

/** The hash a row's chaos draws derive from. */
export function rowHash(seed: number, rowKey: number | string): number {
  return hash32(seed, 'row', rowKey);
}

/** The encoding of `family` for one field of one row (`h`: the row's hash). */
export function choose<F extends Family>(e: Encoding, family: F, h: number, field: string): (typeof FAMILIES)[F][number] {
  const c = e[family];
  if (c !== 'chaos') return c as (typeof FAMILIES)[F][number];
  const options = FAMILIES[family];
  return options[mix(h, `${family}:${field}`) % options.length] as (typeof FAMILIES)[F][number];
}

// ---- raw JSON numbers -------------------------------------------------------------------------------

/** Marks a string to be written as a bare JSON number (JSON.stringify cannot write one past 2^53). */
const RAW_MARK = '\u001fnum:';
const RAW_IN_JSON = /"\\u001fnum:(-?[0-9][0-9.eE+-]*)"/g;

/** A value JSON.stringify writes as a string, which {@link writeJson} turns into the bare number `digits`. */
export function rawNumber(digits: string): string {
  return RAW_MARK + digits;
}

/** JSON text of a body, with {@link rawNumber} values written as bare numbers. */
export function writeJson(body: unknown): string {
  const text = JSON.stringify(body);
  return text.includes('\\u001fnum:') ? text.replace(RAW_IN_JSON, '$1') : text;
}

// ---- value writers ----------------------------------------------------------------------------------

/** Shifts the decimal point of an integer text left by `places`: ("1015432098625", 6) → "1015432.098625". */
export function shiftLeft(integer: string, places: number): string {
  const neg = integer.startsWith('-');
  const digits = (neg ? integer.slice(1) : integer).padStart(places + 1, '0');
  const whole = digits.slice(0, digits.length - places);
  const frac = places > 0 ? digits.slice(digits.length - places).replace(/0+$/, '') : '';
  return (neg ? '-' : '') + whole + (frac ? '.' + frac : '');
}

/** A number in a `numbers` encoding. */
export function writeNumber(v: number, how: (typeof FAMILIES)['numbers'][number]): number | string {
  if (how === 'string') return String(v);
  if (how === 'exponent') return v.toExponential();
  return v;
}

/** A token amount (integer base units as text) in an `amounts` encoding; `decimals` of its token. */
export function writeAmount(base: string, decimals: number, how: (typeof FAMILIES)['amounts'][number]): number | string {
  if (how === 'base-number') return rawNumber(base);
  if (how === 'units') return shiftLeft(base, decimals);
  if (how === 'units-number') return Number(shiftLeft(base, decimals));
  return base;
}

/** An oracle price (Morpho-scaled integer text) in an `oracle` encoding; `shift` = 36 + loan − collateral decimals. */
export function writeOracle(scaled: string, shift: number, how: (typeof FAMILIES)['oracle'][number]): number | string {
  if (how === 'scaled-number') return rawNumber(scaled);
  if (how === 'unit') return Number(shiftLeft(scaled, shift));
  if (how === 'unit-string') return shiftLeft(scaled, shift);
  return scaled;
}

const OFFSETS_MIN = [120, -300, 330, -210, 60, 545, -60];

/** A time (Unix seconds) in a `times` encoding; `native` is `nativeValue` itself. `h` picks the offset. */
export function writeTime(sec: number, nativeValue: unknown, how: (typeof FAMILIES)['times'][number], h: number): unknown {
  switch (how) {
    case 'native':
      return nativeValue;
    case 's':
      return sec;
    case 'ms':
      return sec * 1000;
    case 'iso':
      return new Date(sec * 1000).toISOString();
    case 'iso-local':
      return new Date(sec * 1000).toISOString().slice(0, 19);
    case 'iso-offset': {
      const off = OFFSETS_MIN[h % OFFSETS_MIN.length] as number;
      const local = new Date((sec + off * 60) * 1000).toISOString().slice(0, 19);
      const a = Math.abs(off);
      return `${local}${off < 0 ? '-' : '+'}${String(Math.floor(a / 60)).padStart(2, '0')}:${String(a % 60).padStart(2, '0')}`;
    }
  }
}

/** A boolean in a `booleans` encoding. */
export function writeBoolean(v: boolean, how: (typeof FAMILIES)['booleans'][number]): unknown {
  switch (how) {
    case 'string':
      return v ? 'true' : 'false';
    case 'upper':
      return v ? 'TRUE' : 'FALSE';
    case 'digit':
      return v ? '1' : '0';
    case 'number':
      return v ? 1 : 0;
    default:
      return v;
  }
}

/** Unix seconds of a native time value (an ISO string or Unix seconds). */
export function timeSeconds(v: unknown): number {
  return typeof v === 'string' ? Date.parse(v) / 1000 : Number(v);
}

// ---- records ----------------------------------------------------------------------------------------

/** What the encoder must know about a record's fields beyond their JSON types. */
export interface RecordHints {
  /** Fields holding times (native form: ISO string or Unix seconds). */
  times?: ReadonlySet<string>;
  /** Token-amount fields (integer base units as text) → their token's decimals. */
  amounts?: Readonly<Record<string, number>>;
  /** The oracle-price field (Morpho-scaled integer text) and its shift, 36 + loan − collateral decimals. */
  oracle?: { field: string; shift: number };
}

/** GraphQL answers every selected field (missing → null) and nothing else (no extra fields). */
export type Transport = 'rest' | 'graphql';

const EXTRA_FIELDS: readonly [string, (h: number) => unknown][] = [
  ['indexer', (h) => `indexer-${h % 7}`],
  ['meta', (h) => ({ source: 'chain', revision: h % 1000, tags: ['v2'] })],
  ['schema_version', (h) => 2 + (h % 3)],
  ['flags', () => []],
];

/** One value in the encoding; `undefined` means "leave the key out". */
export function encodeValue(v: unknown, field: string, e: Encoding, h: number, hints: RecordHints, transport: Transport): unknown {
  if (v === null || v === undefined) {
    const how = choose(e, 'optional', h, field);
    return how === 'empty' ? '' : how === 'missing' && transport === 'rest' ? undefined : null;
  }
  const amountDecimals = hints.amounts?.[field];
  if (amountDecimals !== undefined && typeof v === 'string') return writeAmount(v, amountDecimals, choose(e, 'amounts', h, field));
  if (hints.oracle?.field === field && typeof v === 'string') return writeOracle(v, hints.oracle.shift, choose(e, 'oracle', h, field));
  if (hints.times?.has(field)) return writeTime(timeSeconds(v), v, choose(e, 'times', h, field), mix(h, field));
  if (typeof v === 'number') return writeNumber(v, choose(e, 'numbers', h, field));
  if (typeof v === 'boolean') return writeBoolean(v, choose(e, 'booleans', h, field));
  if (Array.isArray(v)) return v.map((x, i) => encodeValue(x, field, e, mix(h ^ i, field), {}, transport) ?? null);
  if (typeof v === 'object') return encodeRecord(v as Record<string, unknown>, e, mix(h, field), {}, transport);
  return v;
}

/** A record in the encoding (a new object; nested objects and arrays too). `h`: the row's hash. */
export function encodeRecord(rec: object, e: Encoding, h: number, hints: RecordHints = {}, transport: Transport = 'rest'): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(rec)) {
    const w = encodeValue(v, k, e, h, hints, transport);
    if (w !== undefined) out[k] = w;
  }
  if (transport === 'rest' && choose(e, 'extra', h, '') === 'some') {
    const [name, make] = EXTRA_FIELDS[h % EXTRA_FIELDS.length] as [string, (h: number) => unknown];
    if (!(name in out)) out[name] = make(h);
  }
  return out;
}

/** A record as the encoding says; the canonical encoding returns it as it is. */
export function represent(rec: object, e: Encoding, rowKey: number | string, hints: RecordHints = {}): object {
  return e === CANONICAL || isCanonical(e) ? rec : encodeRecord(rec, e, rowHash(e.seed, rowKey), hints);
}

/** True when every family is written canonically. */
export function isCanonical(e: Encoding): boolean {
  return FAMILY_NAMES.every((f) => e[f] === canonicalChoices[f]);
}
