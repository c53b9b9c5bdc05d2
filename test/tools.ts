/**
 * The real tools some tests drive (Prometheus, promtool, Alertmanager, Chromium: Debian packages that `.ci/run`
 * installs). On a developer's machine without one, its tests skip and say which package brings it; under CI
 * (`CI` set) a missing tool fails those tests instead, so a broken install step cannot pass as a green run.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** A tool looked up once per test file. */
export interface Tool {
  /** Its path when installed and runnable. */
  path: string | undefined;
  /** Whether its tests should skip: only when it is missing outside CI. */
  skip: boolean;
  /** Words for a test's name: what it needs and where that comes from. */
  needs: string;
  /** Its path, or throws (under CI, where a missing tool is a failed install, not a reason to skip). */
  require(): string;
}

function onPath(name: string, path = process.env.PATH ?? ''): string | undefined {
  for (const dir of ['/usr/bin', ...path.split(delimiter)].filter(Boolean)) {
    const file = join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Finds `name` (e.g. `promtool`), from Debian package `pkg`; `probe: true` also checks that `name --version` runs. */
export function tool(name: string, pkg: string, opts: { probe?: boolean; ci?: boolean } = {}): Tool {
  const found = onPath(name);
  const runs = found !== undefined && (!opts.probe || spawnSync(found, ['--version'], { timeout: 20_000 }).status === 0);
  const path = runs ? found : undefined;
  const ci = opts.ci ?? Boolean(process.env.CI);
  const needs = `needs ${name}, Debian package ${pkg}; CI installs it`;
  return {
    path,
    skip: path === undefined && !ci,
    needs,
    require() {
      if (path === undefined) throw new Error(`${name} is not installed or does not run (${needs} in .ci/run): under CI this test cannot skip`);
      return path;
    },
  };
}
