/**
 * The service's extra fields (the ones lookout has no reader for), normalized so rules and templates see one
 * type whatever form the service chose. The known fields are read field by field by the readers in `read/`.
 */
import { NUMERIC } from './read/result.js';
import { setOwn } from '../own.js';

const INTEGER_TEXT = /^[+-]?\d+$/;

/**
 * An extra field the service sent (one lookout has no schema for), with numeric strings read as
 * numbers — recursively — so a rule or template sees one type whatever form the service chose:
 * "0.25", "2.5e-1" and "0.250" all become 0.25. Integer text is converted only when it is a number's own
 * text (never ids like "007", or amounts beyond 2^53, which a double would round), so nothing is lost.
 */
export function normalizeExtra(v: unknown, depth = 0): unknown {
  if (typeof v === 'string') {
    if (!NUMERIC.test(v)) return v;
    const n = Number(v);
    if (!Number.isFinite(n)) return v;
    return INTEGER_TEXT.test(v) ? (String(n) === v.replace(/^\+/, '') ? n : v) : n;
  }
  if (depth > 8 || v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map((x) => normalizeExtra(x, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) setOwn(out, k, normalizeExtra(x, depth + 1));
  return out;
}
