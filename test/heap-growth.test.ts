/**
 * The daemon's heap growing factor (src/heap-growth.ts): `lookout run` sets it, V8 uses it at its next full
 * collection although the process is already running, and a value given to node on its command line wins.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DaemonProcess } from './fixtures/daemon/harness.js';
import { daemonScope } from './fixtures/daemon/scope.js';
import { writeConfig } from './fixtures/daemon/world.js';

const { dirs, startSim } = daemonScope();

const MODULE = pathToFileURL(join(import.meta.dirname, '..', 'dist', 'heap-growth.js')).href;

/**
 * A node process that applies the daemon's setting once running, then makes garbage past a few full collections
 * while keeping ~20 MB live; V8's verbose GC trace prints each new old-generation limit with its factor.
 */
function run(nodeArgs: string[]): { applied: string; factors: string[] } {
  const script = `
    const { applyDaemonHeapGrowth } = await import(${JSON.stringify(MODULE)});
    console.log('applied=' + String(applyDaemonHeapGrowth()));
    let keep = [];
    for (let i = 0; i < 4e6; i++) { keep.push({ i }); if (keep.length > 4e5) keep = []; }`;
  const r = spawnSync(process.execPath, ['--trace-gc-verbose', ...nodeArgs, '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000, maxBuffer: 64 * 1024 * 1024 });
  expect(r.status, r.stderr).toBe(0);
  const applied = /^applied=(.*)$/m.exec(r.stdout)?.[1] ?? '';
  // "[HeapController] Limit: old size: 22748 KB, new limit: 107102 KB (4.0)"
  const factors = [...r.stdout.matchAll(/\[HeapController\] Limit: .*\((\d+\.\d)\)/g)].map((m) => m[1]!);
  return { applied, factors };
}

describe('the heap growing factor', () => {
  it('is set once the process runs, and V8 sets its next limits at 1.5× the live heap', () => {
    const { applied, factors } = run([]);
    expect(applied).toBe('--heap-growing-percent=50');
    expect(factors.length).toBeGreaterThan(0);
    expect(new Set(factors)).toEqual(new Set(['1.5']));
  });

  it('is left as node was told when its command line gives one', () => {
    const { applied, factors } = run(['--heap-growing-percent=0']);
    expect(applied).toBe('undefined');
    expect(factors.length).toBeGreaterThan(0);
    expect(factors).not.toContain('1.5');
  });

  it('is what `lookout run` sets, as its started line says', async () => {
    const sim = await startSim({ scenario: 'calm' });
    const dir = dirs.make();
    const file = writeConfig(join(dir, 'lookout.yaml'), { sim, db: join(dir, 'lookout.db') });
    const { daemon } = await DaemonProcess.start(file);
    const started = daemon.logs().find((l) => l.msg === 'started') as { heap_growth?: unknown } | undefined;
    expect(started?.heap_growth, daemon.diag()).toBe('--heap-growing-percent=50');
  });
});
