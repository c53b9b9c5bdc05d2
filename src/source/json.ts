/**
 * JSON parsing that keeps big integers exact. `JSON.parse` turns 115792089237316195423570985008687907853
 * into a rounded double; the service's token amounts and oracle prices are such numbers. Integer
 * literals of 16 or more digits are therefore quoted before parsing, so they arrive as exact decimal
 * strings (the value parsers accept numeric strings everywhere a number is expected).
 */
import { setOwn } from '../own.js';

/** Fewest digits of an integer literal that is quoted: 2^53 has 16. */
const LONG_DIGITS = 16;

/** True for the character codes of a JSON number token: digits, `-`, `+`, `.`, `e`, `E`. */
const inNumber = (c: number): boolean => (c >= 48 && c <= 57) || c === 45 || c === 43 || c === 46 || c === 101 || c === 69;

/**
 * The end of the JSON string whose opening quote is at `open` (the index after its closing quote), or -1 when it is
 * not closed. Found by `indexOf`, not character by character: a markets answer is mostly strings.
 */
function stringEnd(text: string, open: number): number {
  for (let from = open + 1; ; ) {
    const q = text.indexOf('"', from);
    if (q < 0) return -1;
    let slashes = 0;
    while (text.charCodeAt(q - 1 - slashes) === 92 /* \ */) slashes++;
    if (slashes % 2 === 0) return q + 1;
    from = q + 1;
  }
}

/**
 * The end of the number token starting at `i` (a digit or `-`); pushes its start and end onto `spans` when it is an
 * integer literal of {@link LONG_DIGITS} or more digits (no fraction, no exponent).
 */
function numberEnd(text: string, i: number, spans: number[]): number {
  let j = i;
  while (j < text.length && inNumber(text.charCodeAt(j))) j++;
  let digits = j - i;
  if (text.charCodeAt(i) === 45 /* - */) digits--;
  if (digits >= LONG_DIGITS) {
    let integer = true;
    for (let k = j - digits; k < j && integer; k++) integer = text.charCodeAt(k) >= 48 && text.charCodeAt(k) <= 57;
    // A leading zero followed by digits is not JSON (`0123`): left as it is, JSON.parse refuses it as it refuses `0123`.
    const leadingZero = text.charCodeAt(j - digits) === 48;
    if (integer && !leadingZero) spans.push(i, j);
  }
  return j;
}

/** `text[from, to)` with the long integer literals at `spans` (start, end pairs, in order) quoted. */
function quoted(text: string, from: number, to: number, spans: readonly number[]): string {
  // The first span starting at or after `from`, by bisection over the pairs.
  let lo = 0;
  for (let hi = spans.length / 2; lo < hi; ) {
    const mid = (lo + hi) >> 1;
    if (spans[2 * mid]! < from) lo = mid + 1;
    else hi = mid;
  }
  let k = 2 * lo;
  if (k >= spans.length || spans[k]! >= to) return text.slice(from, to);
  let out = '';
  let at = from;
  for (; k < spans.length && spans[k]! < to; k += 2) {
    out += `${text.slice(at, spans[k])}"${text.slice(spans[k], spans[k + 1])}"`;
    at = spans[k + 1]!;
  }
  return out + text.slice(at, to);
}

/**
 * Where the long integer literals outside strings are (start, end pairs): one pass over the character codes that
 * skips strings whole (a regex over the 9 MB of a markets answer took a third of JSON.parse's time, and a copy of the
 * text; most answers have no such literal outside a string, and are parsed as they came).
 */
function longIntegers(text: string): number[] {
  const spans: number[] = [];
  for (let i = 0; i < text.length; ) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      i = stringEnd(text, i);
      if (i < 0) break; // not JSON: JSON.parse says so
    } else if ((c >= 48 && c <= 57) || c === 45) i = numberEnd(text, i, spans);
    else i++;
  }
  return spans;
}

/**
 * Whether `text` may hold a long integer literal outside a string: a run of {@link LONG_DIGITS} digits where a JSON value
 * can start — at the text's start or after `:`, `[` or `,`, then whitespace and a sign. In JSON every value is
 * there, so false means there is none (the scan would find none, or the text is not JSON and JSON.parse says so
 * either way). A digit run inside a string rarely follows those: a positions page has hex addresses with 16-digit
 * runs on nearly every page, none after them. A regex over the text: ~0.17 ms a page, where `/\d{16}/` found a run and
 * the scan then took ~0.23 ms.
 */
export function mayHoldLongInteger(text: string): boolean {
  // Two regexes: one alternation of `^` and the three characters took a third longer.
  return /[:[,][ \t\n\r]*-?\d{16}/.test(text) || /^[ \t\n\r]*-?\d{16}/.test(text);
}

/** Parses JSON text; integer literals of 16+ digits become decimal strings. Throws SyntaxError like JSON.parse. */
export function parseJsonExact(text: string): unknown {
  if (!mayHoldLongInteger(text)) return JSON.parse(text);
  const spans = longIntegers(text);
  return spans.length === 0 ? JSON.parse(text) : parseQuoted(text, quoted(text, 0, text.length, spans));
}

/** JSON.parse of `exact` (the text with long integers quoted); a text that is not JSON fails with its own SyntaxError. */
function parseQuoted(text: string, exact: string): unknown {
  try {
    return JSON.parse(exact);
  } catch (err) {
    JSON.parse(text); // what is wrong with the text as it came
    throw err;
  }
}

/** Texts shorter than this are parsed in one go (a list page of 500 rows is about 150 KB). */
export const PARSED_IN_PARTS_FROM = 1 << 20;
/** Fewest elements that make an array worth parsing in parts. */
const MIN_ELEMENTS = 256;
/** Elements of the big array parsed between pauses. */
const ELEMENTS_PER_PARSE = 250;
/** Characters scanned between pauses. */
const SCAN_STEP = 1 << 16;

/** The array with the most elements (at most four levels deep): where its `[` and `]` are, and where each element starts. */
interface BigArray {
  start: number;
  end: number;
  starts: number[];
}

/**
 * Finds the biggest array by one pass over the text that skips strings whole, and the long integer literals outside
 * strings on the way (start, end pairs); undefined when there is no array worth it or the brackets do not match (the
 * caller then parses the text in one go, which says what is wrong with it).
 */
function* findBigArray(text: string): Generator<void, { big: BigArray; spans: number[] } | undefined, void> {
  const stack: Array<{ array: boolean; start: number; starts: number[] | null }> = [];
  const spans: number[] = [];
  let best: BigArray | undefined;
  let pause = SCAN_STEP;
  for (let i = 0; i < text.length; i++) {
    if (i >= pause) {
      yield;
      pause = i + SCAN_STEP;
    }
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      const end = stringEnd(text, i);
      if (end < 0) return undefined;
      i = end - 1;
    } else if ((c >= 48 && c <= 57) || c === 45 /* - */) i = numberEnd(text, i, spans) - 1;
    else if (c === 91 /* [ */) stack.push({ array: true, start: i, starts: stack.length < 4 ? [i + 1] : null });
    else if (c === 123 /* { */) stack.push({ array: false, start: i, starts: null });
    else if (c === 44 /* , */) stack[stack.length - 1]?.starts?.push(i + 1);
    else if (c === 93 /* ] */ || c === 125 /* } */) {
      const top = stack.pop();
      if (!top || top.array !== (c === 93)) return undefined;
      if (top.starts && top.starts.length >= Math.max(MIN_ELEMENTS, (best?.starts.length ?? 0) + 1)) best = { start: top.start, end: i, starts: top.starts };
    }
  }
  return stack.length === 0 && best ? { big: best, spans } : undefined;
}

/** Puts `value` where the skeleton holds the string `sentinel`; returns the result and how many places held it. */
function place(skeleton: unknown, sentinel: string, value: unknown): { value: unknown; found: number } {
  if (skeleton === sentinel) return { value, found: 1 };
  let found = 0;
  const visit = (v: unknown): void => {
    if (v === null || typeof v !== 'object') return;
    for (const k of Object.keys(v)) {
      const member = (v as Record<string, unknown>)[k];
      if (member === sentinel) {
        setOwn(v as Record<string, unknown>, k, value); // a member named __proto__ stays an own member, as JSON.parse made it
        found++;
      } else visit(member);
    }
  };
  visit(skeleton);
  return { value: skeleton, found };
}

/**
 * {@link parseJsonExact} in steps that pause between parts: a text of a megabyte or more whose biggest array holds
 * hundreds of elements (the markets query's `data.metrics`) is parsed as the rest of the document with that array
 * left out, then its elements a few hundred at a time. The result is the same value; a text that is not valid JSON
 * (or one the parts cannot be cut from) is parsed in one go, so it fails with the same SyntaxError.
 */
export function* parseJsonExactSteps(text: string, chunkFrom = PARSED_IN_PARTS_FROM): Generator<void, unknown, void> {
  if (text.length < chunkFrom) return parseJsonExact(text);
  const found = yield* findBigArray(text);
  if (!found) return parseJsonExact(text);
  const { big, spans } = found;
  const sentinel = `\u0000lookout-parts-${Math.random().toString(36).slice(2)}`;
  try {
    const skeleton = parseJsonExact(text.slice(0, big.start) + JSON.stringify(sentinel) + text.slice(big.end + 1));
    const elements: unknown[] = [];
    const { starts } = big;
    for (let k = 0; k < starts.length; k++) {
      if (k % ELEMENTS_PER_PARSE === 0) yield;
      // Each element parsed from its own slice of the text (a view, no copy: `[` + part + `]` copied the whole array,
      // 9 MB a markets poll, in pieces too big for the young generation), the long integers found by the scan quoted
      // where they are (only then is the element's text copied). JSON.parse refuses a slice that is not one value.
      elements.push(JSON.parse(quoted(text, starts[k]!, k + 1 < starts.length ? starts[k + 1]! - 1 : big.end, spans)));
    }
    const placed = place(skeleton, sentinel, elements);
    return placed.found === 1 ? placed.value : parseJsonExact(text);
  } catch {
    return parseJsonExact(text);
  }
}
