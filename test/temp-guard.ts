/**
 * vitest globalSetup: the run gets a TMPDIR of its own (test workers and the commands they start inherit it), so what
 * is left there at the end is found. A folder named `lookout-…` — what lookout's commands and these tests make — fails
 * the run, named; then the private TMPDIR is removed whatever it holds, so a run never litters the machine's /tmp.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'vitest-run-'));
  const before = process.env.TMPDIR;
  process.env.TMPDIR = dir;
  return () => {
    const left = readdirSync(dir).filter((f) => f.startsWith('lookout-'));
    rmSync(dir, { recursive: true, force: true });
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
    if (left.length > 0) {
      // vitest reports an error thrown here but still exits 0: the exit code is set, and the message printed, here.
      process.stderr.write(`\ntemp-guard: the test run left ${left.length} temp folder(s) behind: ${left.join(', ')} — every test removes what it makes\n`);
      process.exitCode = 1;
    }
  };
}
