/** NODE_OPTIONS read as node reads it, for the modules that look at the options the process was given. */

/**
 * The words of a NODE_OPTIONS value: split at whitespace, each without the double quotes around it that node accepts
 * (`"--max-semi-space-size=8"`). Quoted words holding spaces are not joined: no option this code looks for has one.
 */
export function nodeOptionWords(value: string | undefined): string[] {
  return (value ?? '')
    .split(/\s+/)
    .filter(Boolean)
    .map((w) => w.replace(/^"(.*)"$/, '$1'));
}
