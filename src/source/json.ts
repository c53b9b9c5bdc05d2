/**
 * JSON parsing that keeps big integers exact. `JSON.parse` turns 115792089237316195423570985008687907853
 * into a rounded double; the service's token amounts and oracle prices are such numbers. Integer
 * literals of 16 or more digits are therefore quoted before parsing, so they arrive as exact decimal
 * strings (the value parsers accept numeric strings everywhere a number is expected).
 */

// A JSON string (skipped as a whole, so digits inside strings are never touched) or a long integer
// literal not part of a fraction or exponent.
const LONG_INTEGER = /"(?:[^"\\]|\\.)*"|(?<![\w.+-])-?\d{16,}(?![\d.eE])/g;

/** Parses JSON text; integer literals of 16+ digits become decimal strings. Throws SyntaxError like JSON.parse. */
export function parseJsonExact(text: string): unknown {
  if (!/\d{16}/.test(text)) return JSON.parse(text);
  const quoted = text.replace(LONG_INTEGER, (m) => (m.charCodeAt(0) === 34 /* " */ ? m : `"${m}"`));
  return JSON.parse(quoted);
}
