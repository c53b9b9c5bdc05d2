/**
 * NODE_OPTIONS read and written as node reads it (`ParseNodeOptionsEnvVar` in node's src/node_options.cc): words split
 * at spaces outside double quotes, the quotes themselves dropped, a backslash inside quotes taking the next character
 * as it is. For the modules that look at, or pass on, the options the process was given.
 */

/** The words of a NODE_OPTIONS value, as node reads them (`"--require" "/opt/a b/x.cjs"` → `--require`, `/opt/a b/x.cjs`). */
export function nodeOptionWords(value: string | undefined): string[] {
  const words: string[] = [];
  let inString = false;
  let startNew = true;
  const s = value ?? '';
  for (let i = 0; i < s.length; i++) {
    let c = s[i]!;
    if (c === '\\' && inString && i + 1 < s.length) c = s[++i]!;
    else if (c === ' ' && !inString) {
      startNew = true;
      continue;
    } else if (c === '"') {
      inString = !inString;
      continue;
    }
    if (startNew) words.push(c);
    else words[words.length - 1] += c;
    startNew = false;
  }
  return words;
}

/** A NODE_OPTIONS value node reads as `words` (each with a space, a quote or a backslash quoted and escaped). */
export function nodeOptionsValue(words: readonly string[]): string {
  return words.map((w) => (/[\s"\\]/.test(w) || w === '' ? `"${w.replace(/["\\]/g, '\\$&')}"` : w)).join(' ');
}
