/**
 * The shell commands a README section shows, read out of README.md, so a test that runs them fails when the
 * README drifts from what works.
 */
import { readFileSync } from 'node:fs';

/** One `lookout …` command line: its arguments and the file its stdout is redirected to, if any. */
export interface ReadmeCommand {
  /** The line as the README has it (comment removed). */
  line: string;
  /** Arguments after `lookout`. */
  args: string[];
  stdoutTo?: string;
}

/**
 * Every `lookout …` line in the ```sh blocks of the README section whose heading is `heading` (up to the next heading
 * of that level or higher), in order. Lines of other programs (npm, alias) are left out: the tests run the built CLI.
 * Throws when the section or its commands are missing.
 */
export function readmeCommands(heading: string, readme = readFileSync('README.md', 'utf8')): ReadmeCommand[] {
  const lines = readme.split('\n');
  const start = lines.findIndex((l) => /^#+ /.test(l) && l.replace(/^#+ /, '').trim() === heading);
  if (start < 0) throw new Error(`README.md has no section "${heading}"`);
  const level = /^#+/.exec(lines[start]!)![0].length;
  const commands: ReadmeCommand[] = [];
  let inSh = false;
  for (const l of lines.slice(start + 1)) {
    const h = /^(#+) /.exec(l);
    if (h && !inSh && h[1]!.length <= level) break;
    if (/^```/.test(l)) {
      inSh = !inSh && /^```(sh|bash|shell)\s*$/.test(l);
      continue;
    }
    if (!inSh) continue;
    const line = l.replace(/\s+#.*$/, '').trim();
    if (!line.startsWith('lookout ')) continue;
    const redirect = /^(.*?)\s+>\s*(\S+)$/.exec(line);
    const words = (redirect ? redirect[1]! : line).split(/\s+/).slice(1);
    commands.push({ line, args: words, ...(redirect ? { stdoutTo: redirect[2]! } : {}) });
  }
  if (commands.length === 0) throw new Error(`README.md section "${heading}" shows no lookout command in a sh block`);
  return commands;
}
