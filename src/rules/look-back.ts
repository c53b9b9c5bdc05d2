/** How far back a set of rules looks into history. */

/** The longest `window` (ms) among the rules' parameters (`apy_jump`'s look-back), 0 when none has one. */
export function lookBack(rules: readonly object[]): number {
  let longest = 0;
  for (const r of rules) {
    const w = (r as { window?: unknown }).window;
    if (typeof w === 'number' && Number.isFinite(w) && w > longest) longest = w;
  }
  return longest;
}
