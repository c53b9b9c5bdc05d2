/**
 * Durations as people write them in YAML: `500ms`, `30s`, `5m`, `2h`, `7d`, `1w`, or combined like `1h30m`. Free of
 * zod: the daemon formats durations without loading the config's schemas (their zod forms: ./duration-schema.ts).
 */

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/g;
const WHOLE = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h|d|w))+$/;

/** Parses a duration string to milliseconds; `0` alone is allowed. Returns undefined when it isn't one. */
export function parseDuration(text: string): number | undefined {
  const s = text.trim();
  if (s === '0') return 0;
  if (!WHOLE.test(s)) return undefined;
  let ms = 0;
  for (const m of s.matchAll(PART)) ms += Number(m[1]) * UNIT_MS[m[2]!]!;
  return Math.round(ms);
}

/** Formats milliseconds compactly (`1h30m`, `45s`, `250ms`), the inverse of {@link parseDuration}. */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  const neg = ms < 0;
  let rest = Math.abs(Math.round(ms));
  if (rest < 1000) return `${neg ? '-' : ''}${rest}ms`;
  const parts: string[] = [];
  for (const [unit, size] of [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1000]] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  return (neg ? '-' : '') + parts.join('');
}
