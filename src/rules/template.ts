/**
 * Annotation templates: `{{name}}`, `{{market.loan_asset_symbol}}`, `{{utilization | pct}}`, `{{x | default "none"}}`.
 * Compiled once at load; rendering never throws and shows a missing value as `n/a`.
 */
import { num } from './coerce.js';
import { formatGrouped } from '../text-format.js';

/** A filter: takes the value (and the optional argument written after its name) and returns the new value. */
export type Filter = (value: unknown, arg: string | number | undefined) => unknown;

const DURATION_UNITS: Array<[string, number]> = [['d', 86_400], ['h', 3_600], ['m', 60], ['s', 1]];

function trimZeros(s: string): string {
  return s.includes('.') ? s.replace(/\.?0+$/, '') : s;
}

function numeric(f: (n: number, arg: string | number | undefined) => unknown): Filter {
  return (v, arg) => {
    if (v === null || v === undefined) return v;
    const n = num(v);
    return n === null ? v : f(n, arg);
  };
}

function digits(arg: string | number | undefined, fallback: number): number {
  const n = typeof arg === 'number' ? arg : Number(arg ?? NaN);
  return Number.isInteger(n) && n >= 0 && n <= 12 ? n : fallback;
}

/** The filters a template may use, by name. */
export const filters: Readonly<Record<string, Filter>> = {
  /** A fraction as a percentage: 0.953 → 95.3% (`pct 1` for at most one decimal). */
  pct: numeric((n, arg) => `${trimZeros((n * 100).toFixed(digits(arg, 2)))}%`),
  /** A fraction in basis points: 0.0123 → 123 bps. */
  bps: numeric((n, arg) => `${trimZeros((n * 10_000).toFixed(digits(arg, 1))).replace(/^-0$/, '0')} bps`),
  /** US dollars with thousands separators: $1,234,567 (cents below $100). */
  usd: numeric((n) => {
    const abs = Math.abs(n);
    // Intl.NumberFormat('en-US')'s text, without ICU (src/text-format.ts).
    const text = abs >= 100 ? formatGrouped(abs, 0, 0) : formatGrouped(abs, 2, 2);
    return `${n < 0 ? '-' : ''}$${text}`;
  }),
  /** Seconds as a duration, two largest units: 3900 → 1h 5m, 95340 → 1d 2h; `duration "ms"` for milliseconds (rule.for, rule.window). */
  duration: numeric((n0, arg) => {
    const n = arg === 'ms' ? n0 / 1000 : n0;
    let rest = Math.round(Math.abs(n));
    if (rest === 0) return '0s';
    const parts: string[] = [];
    for (const [unit, size] of DURATION_UNITS) {
      if (rest >= size && parts.length < 2) {
        parts.push(`${Math.floor(rest / size)}${unit}`);
        rest %= size;
      } else if (parts.length > 0) break;
    }
    return (n < 0 ? '-' : '') + parts.join(' ');
  }),
  /** A time in ms as a UTC date: 2025-01-14. */
  date: numeric((n) => (Number.isFinite(new Date(n).getTime()) ? new Date(n).toISOString().slice(0, 10) : n)),
  /** A time in ms as UTC date and minute: 2025-01-14 12:05 UTC. */
  time: numeric((n) => (Number.isFinite(new Date(n).getTime()) ? `${new Date(n).toISOString().slice(0, 16).replace('T', ' ')} UTC` : n)),
  /** A long id or address shortened: 0x1234…abcd. */
  short: (v) => {
    if (typeof v !== 'string' || v.length <= 13) return v;
    return `${v.slice(0, 6)}…${v.slice(-4)}`;
  },
  /** Upper case. */
  upper: (v) => (typeof v === 'string' ? v.toUpperCase() : v),
  /** Lower case. */
  lower: (v) => (typeof v === 'string' ? v.toLowerCase() : v),
  /** A number rounded to `arg` decimals (default 0). */
  round: numeric((n, arg) => trimZeros(n.toFixed(digits(arg, 0)))),
  /** The argument when the value is missing (null, undefined or ''). */
  default: (v, arg) => (v === null || v === undefined || v === '' ? (arg ?? '') : v),
};

/** One `{{ ... }}` of a template: the name it reads and whether a `default` filter covers its absence. */
export interface TemplateRef {
  name: string;
  optional: boolean;
}

/** A compiled template. */
export interface CompiledTemplate {
  /** Renders against a scope of names; never throws. */
  render(scope: Record<string, unknown>): string;
  /** Names read, in order of appearance (duplicates removed). */
  names: string[];
  refs: TemplateRef[];
  /** Syntax problems and unknown filters; empty when the template is sound. */
  errors: string[];
}

type Part = string | { name: string; segments: readonly string[]; pipes: Array<{ filter: Filter; arg: string | number | undefined }> };

const NAME = /^[A-Za-z_][\w-]*(?:\.[\w-]+)*$/;
const PIPE = /^([A-Za-z_]\w*)(?:\s+(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|([-+]?\d+(?:\.\d+)?)))?$/;

function splitPipes(expr: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quote: string | null = null;
  for (const ch of expr) {
    if (quote) {
      if (ch === quote) quote = null;
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '|') {
      out.push(cur.trim());
      cur = '';
      continue;
    }
    cur += ch;
  }
  out.push(cur.trim());
  return out;
}

/** Compiles a template; problems are returned in `errors`, never thrown. */
export function compileTemplate(text: string): CompiledTemplate {
  const parts: Part[] = [];
  const refs: TemplateRef[] = [];
  const errors: string[] = [];
  let pos = 0;
  while (pos < text.length) {
    const open = text.indexOf('{{', pos);
    if (open < 0) break;
    const close = text.indexOf('}}', open + 2);
    if (close < 0) {
      errors.push(`unclosed '{{' at character ${open + 1}`);
      break;
    }
    parts.push(text.slice(pos, open));
    pos = close + 2;
    const [head = '', ...rest] = splitPipes(text.slice(open + 2, close));
    if (!NAME.test(head)) {
      errors.push(head === '' ? `empty '{{ }}' at character ${open + 1}` : `'${head}' is not a field name`);
      continue;
    }
    const pipes: Array<{ filter: Filter; arg: string | number | undefined }> = [];
    let optional = false;
    for (const p of rest) {
      const m = PIPE.exec(p);
      const filter = m ? filters[m[1]!] : undefined;
      if (!m || !filter || !Object.prototype.hasOwnProperty.call(filters, m[1]!)) {
        errors.push(`unknown filter '${m?.[1] ?? p}' (known: ${Object.keys(filters).join(', ')})`);
        continue;
      }
      if (m[1] === 'default') optional = true;
      const arg = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : m[3] !== undefined ? m[3] : m[4] !== undefined ? Number(m[4]) : undefined;
      pipes.push({ filter, arg });
    }
    parts.push({ name: head, segments: head.split('.'), pipes });
    refs.push({ name: head, optional });
  }
  parts.push(text.slice(pos));
  return {
    render: (scope) => {
      let out = '';
      for (const p of parts) out += typeof p === 'string' ? p : renderPart(p, scope);
      return out;
    },
    names: [...new Set(refs.map((r) => r.name))],
    refs,
    errors,
  };
}

function lookup(scope: Record<string, unknown>, segments: readonly string[]): unknown {
  let cur: unknown = scope;
  for (const seg of segments) {
    if (cur === null || typeof cur !== 'object' || !Object.prototype.hasOwnProperty.call(cur, seg)) return undefined;
    cur = (cur as Record<string, unknown>)[seg];
  }
  return cur;
}

function renderPart(p: Exclude<Part, string>, scope: Record<string, unknown>): string {
  try {
    let v = lookup(scope, p.segments);
    for (const { filter, arg } of p.pipes) v = filter(v, arg);
    return formatValue(v);
  } catch {
    return 'n/a';
  }
}

/** How a value shows without a filter: null/undefined as n/a, numbers without float noise (whole numbers in full), objects as JSON. */
export function formatValue(v: unknown): string {
  if (v === null || v === undefined) return 'n/a';
  // 12 significant digits drop float noise (0.1 + 0.2); a whole number has none, and a ms time has 13 digits.
  if (typeof v === 'number') return !Number.isFinite(v) ? 'n/a' : Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(12)));
  if (typeof v === 'object') {
    try {
      return JSON.stringify(v);
    } catch {
      return 'n/a';
    }
  }
  return String(v);
}
