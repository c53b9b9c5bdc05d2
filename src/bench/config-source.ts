/** Where a bench config is read from, as plain data: without the config's loader, for a process that loads it in another. */
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import type { ConfigSource } from '../config/load.js';

/** The repository root (dist/bench/ → ../../), where `rules/` lives. */
export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** The YAML of a bench config (see benchConfigYaml) as if read from bench.config.yaml at the root, with no environment. */
export function benchConfigSource(yaml: string): ConfigSource {
  return { file: join(repoRoot, 'bench.config.yaml'), text: yaml, dir: repoRoot, env: {} };
}
