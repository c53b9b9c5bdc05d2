/**
 * JSON parsing that keeps big integers exact. `JSON.parse` turns 115792089237316195423570985008687907853
 * into a rounded double; the service's token amounts and oracle prices are such numbers. Integer
 * literals of 16 or more digits are therefore quoted before parsing, so they arrive as exact decimal
 * strings (the value parsers accept numeric strings everywhere a number is expected).
 */
import { setOwn } from '../own.js';

// A JSON string (skipped as a whole, so digits inside strings are never touched) or a long integer
// literal not part of a fraction or exponent.
const LONG_INTEGER = /"(?:[^"\\]|\\.)*"|(?<![\w.+-])-?\d{16,}(?![\d.eE])/g;

// The fast way: a long integer literal where JSON puts a value (at the start, or after `:`, `,` or `[`) and followed
// by what ends one. It does not know about strings, so it also quotes such a run inside a string ("a,1234…]"); but
// the quote it puts there ends that string early and a digit or `-` follows it, which JSON never allows after a
// string: the text no longer parses, and the slow way (which skips strings whole) runs instead. So a text that
// parses after the fast way had every long integer outside strings quoted, and nothing else changed.
const LONG_INTEGER_VALUE = /(^|[:,[])(\s*)(-?\d{16,})(?=\s*(?:[,}\]]|$))/g;

/** Parses JSON text; integer literals of 16+ digits become decimal strings. Throws SyntaxError like JSON.parse. */
export function parseJsonExact(text: string): unknown {
  if (!/\d{16}/.test(text)) return JSON.parse(text);
  try {
    // One native replace: the slow way's callback for each of a markets answer's ~450,000 strings took 4× JSON.parse.
    return JSON.parse(text.replace(LONG_INTEGER_VALUE, '$1$2"$3"'));
  } catch {
    // A long run of digits inside a string after `:`, `,` or `[` (see above), or a text that is not JSON at all: the
    // slow way says what is wrong with the latter, with JSON.parse's own SyntaxError.
  }
  return JSON.parse(text.replace(LONG_INTEGER, (m) => (m.charCodeAt(0) === 34 /* " */ ? m : `"${m}"`)));
}

/** Texts shorter than this are parsed in one go (a list page of 500 rows is about 150 KB). */
const CHUNK_FROM = 1 << 20;
/** Fewest elements that make an array worth parsing in parts. */
const MIN_ELEMENTS = 256;
/** Elements of the big array parsed per JSON.parse call. */
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
 * Finds the biggest array by one pass over the text that skips strings whole; undefined when there is none worth it or
 * the brackets do not match (the caller then parses the text in one go, which says what is wrong with it).
 */
function* findBigArray(text: string): Generator<void, BigArray | undefined, void> {
  const stack: Array<{ array: boolean; start: number; starts: number[] | null }> = [];
  let best: BigArray | undefined;
  let pause = SCAN_STEP;
  for (let i = 0; i < text.length; i++) {
    if (i >= pause) {
      yield;
      pause = i + SCAN_STEP;
    }
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      for (let from = i + 1; ; ) {
        const q = text.indexOf('"', from);
        if (q < 0) return undefined;
        let slashes = 0;
        while (text.charCodeAt(q - 1 - slashes) === 92 /* \ */) slashes++;
        if (slashes % 2 === 0) {
          i = q;
          break;
        }
        from = q + 1;
      }
    } else if (c === 91 /* [ */) stack.push({ array: true, start: i, starts: stack.length < 4 ? [i + 1] : null });
    else if (c === 123 /* { */) stack.push({ array: false, start: i, starts: null });
    else if (c === 44 /* , */) stack[stack.length - 1]?.starts?.push(i + 1);
    else if (c === 93 /* ] */ || c === 125 /* } */) {
      const top = stack.pop();
      if (!top || top.array !== (c === 93)) return undefined;
      if (top.starts && top.starts.length >= Math.max(MIN_ELEMENTS, (best?.starts.length ?? 0) + 1)) best = { start: top.start, end: i, starts: top.starts };
    }
  }
  return stack.length === 0 ? best : undefined;
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
export function* parseJsonExactSteps(text: string, chunkFrom = CHUNK_FROM): Generator<void, unknown, void> {
  if (text.length < chunkFrom) return parseJsonExact(text);
  const big = yield* findBigArray(text);
  if (!big) return parseJsonExact(text);
  const sentinel = `\u0000lookout-parts-${Math.random().toString(36).slice(2)}`;
  try {
    const skeleton = parseJsonExact(text.slice(0, big.start) + JSON.stringify(sentinel) + text.slice(big.end + 1));
    const elements: unknown[] = [];
    const { starts } = big;
    for (let i = 0; i < starts.length; i += ELEMENTS_PER_PARSE) {
      yield;
      const j = Math.min(starts.length, i + ELEMENTS_PER_PARSE);
      const part = parseJsonExact(`[${text.slice(starts[i], j < starts.length ? starts[j]! - 1 : big.end)}]`) as unknown[];
      if (part.length !== j - i) return parseJsonExact(text);
      for (const e of part) elements.push(e);
    }
    const placed = place(skeleton, sentinel, elements);
    return placed.found === 1 ? placed.value : parseJsonExact(text);
  } catch {
    return parseJsonExact(text);
  }
}
