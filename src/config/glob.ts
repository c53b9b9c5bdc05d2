/** Expands the `rules.files` patterns (globs like `rules/*.yaml`) relative to the config file's folder. */
import { readdirSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import picomatch from 'picomatch';

/** Files matching `pattern` under `baseDir`, sorted; a pattern without glob characters names one file. */
export function expandGlob(pattern: string, baseDir: string): string[] {
  const abs = isAbsolute(pattern) ? pattern : resolve(baseDir, pattern);
  const scan = picomatch.scan(abs);
  if (!scan.isGlob) return exists(abs) ? [abs] : [];
  const root = scan.base || '/';
  if (!exists(root)) return [];
  const isMatch = picomatch(scan.glob, { dot: false });
  const out: string[] = [];
  const walk = (dir: string, depth: number) => {
    if (depth > 16) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) walk(full, depth + 1);
      else if (entry.isFile() && isMatch(relative(root, full).split(sep).join('/'))) out.push(full);
    }
  };
  walk(root, 0);
  return out.sort();
}

function exists(p: string): boolean {
  try {
    statSync(p);
    return true;
  } catch {
    return false;
  }
}
