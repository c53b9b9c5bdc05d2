/**
 * The daemon's heap settings (src/heap-growth.ts): the process that runs the daemon sets them at its entry (`lookout
 * run` says so in its log), V8 uses them although the process is already running, and what node's command line or
 * NODE_OPTIONS gives wins.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { RESPONSE_BYTES_CHANNEL } from '../src/channels.js';
import { COMPILERS_SETTING, compilersOn } from '../src/compiler-tiers.js';
import { LARGE_RESPONSE_BYTES, YOUNG_GENERATION_SETTING, YoungGenerationWatch, youngGrowthFactor, YOUNG_SEMI_SPACE_CAP_MB, YOUNG_SEMI_SPACE_FIRST_CAP_MB } from '../src/heap-growth.js';
import { DaemonProcess, getText } from './fixtures/daemon/harness.js';
import { daemonScope } from './fixtures/daemon/scope.js';
import { writeConfig } from './fixtures/daemon/world.js';

const { dirs, startSim } = daemonScope();

const MODULE = pathToFileURL(join(import.meta.dirname, '..', 'dist', 'heap-growth.js')).href;
const MB = 1024 * 1024;

interface Run {
  settings: { heap_growth: string; young_generation: string };
  /** Each new old-generation limit's factor, from V8's verbose GC trace. */
  factors: string[];
  /** The largest a young-generation semi-space was, MB, sampled as the garbage is made. */
  maxSemiMb: number;
  /** Whether the settings' onCapIgnored was called. */
  ignored: boolean;
}

/**
 * A node process that applies the daemon's settings once running, then makes garbage past a few full collections
 * while keeping ~20 MB live (the young generation's survivors grow it), with a turn of the event loop now and then
 * unless `turns` is false; `first` runs before the garbage is made, `each` at each turn.
 */
function run(nodeArgs: string[], opts: { env?: NodeJS.ProcessEnv; each?: string; first?: string; turns?: boolean } = {}): Run {
  const script = `
    const { applyDaemonHeapSettings } = await import(${JSON.stringify(MODULE)});
    const { getHeapSpaceStatistics } = await import('node:v8');
    let ignored = false;
    const settings = applyDaemonHeapSettings({ onCapIgnored: () => { ignored = true; } });
    ${opts.first ?? ''};
    const semi = () => { const s = getHeapSpaceStatistics().find((x) => x.space_name === 'new_space'); return s.space_used_size + s.space_available_size; };
    let maxSemi = semi();
    let keep = [];
    for (let i = 0; i < 4e6; i++) {
      keep.push({ i });
      if (keep.length > 4e5) keep = [];
      // A turn of the event loop now and then, as the daemon's polls give: the watch runs between them.
      if (${opts.turns ?? true} && i % 2e4 === 0) { maxSemi = Math.max(maxSemi, semi()); ${opts.each ?? ''}; await new Promise((r) => setImmediate(r)); }
    }
    maxSemi = Math.max(maxSemi, semi());
    console.log('result=' + JSON.stringify({ settings, maxSemi, ignored }));`;
  const r = spawnSync(process.execPath, ['--trace-gc-verbose', ...nodeArgs, '--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 60_000,
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, NODE_OPTIONS: '', ...opts.env },
  });
  expect(r.status, r.stderr).toBe(0);
  const result = JSON.parse(/^result=(.*)$/m.exec(r.stdout)?.[1] ?? '{}') as { settings: Run['settings']; maxSemi: number; ignored: boolean };
  // "[HeapController] Limit: old size: 22748 KB, new limit: 107102 KB (4.0)"
  const factors = [...r.stdout.matchAll(/\[HeapController\] Limit: .*\((\d+\.\d)\)/g)].map((m) => m[1]!);
  return { settings: result.settings, factors, maxSemiMb: result.maxSemi / MB, ignored: result.ignored };
}

describe('the heap growing factor', () => {
  it('is set once the process runs, and V8 sets its next limits at 1.5× the live heap', () => {
    const { settings, factors } = run([]);
    expect(settings.heap_growth).toBe('--heap-growing-percent=50');
    expect(factors.length).toBeGreaterThan(0);
    expect(new Set(factors)).toEqual(new Set(['1.5']));
  });

  it('is left as node was told when its command line gives one', () => {
    const { settings, factors } = run(['--heap-growing-percent=0']);
    expect(settings.heap_growth).toBe('as node was told');
    expect(factors.length).toBeGreaterThan(0);
    expect(factors).not.toContain('1.5');
  });
});

describe('the young generation', () => {
  it("stays within its first cap (V8's first size), although V8 would take it to 16 MB a semi-space", () => {
    const { settings, maxSemiMb, ignored } = run([]);
    expect(settings.young_generation).toBe(YOUNG_GENERATION_SETTING);
    expect(settings.young_generation).toBe('semi-spaces up to 1 MB, 4 MB after a response of 4 MB or more');
    expect(maxSemiMb).toBeLessThanOrEqual(YOUNG_SEMI_SPACE_FIRST_CAP_MB);
    expect(maxSemiMb).toBeGreaterThan(YOUNG_SEMI_SPACE_FIRST_CAP_MB / 2);
    expect(ignored).toBe(false);
  });

  it('grows to the larger cap once a response of 4 MB or more was read, and not for a smaller one', () => {
    const say = (bytes: number) => `(await import('node:diagnostics_channel')).channel(${JSON.stringify(RESPONSE_BYTES_CHANNEL)}).publish({ bytes: ${bytes} })`;
    // The large response a quarter of the way in, once the young generation has settled at the first cap.
    const large = run([], { each: `if (i === 1e6) ${say(9_000_000)}` });
    expect(large.maxSemiMb).toBeGreaterThan(YOUNG_SEMI_SPACE_FIRST_CAP_MB);
    expect(large.maxSemiMb).toBeLessThanOrEqual(YOUNG_SEMI_SPACE_CAP_MB);
    expect(large.ignored).toBe(false);
    // Just under the line, and a message without a size: the first cap stands.
    const small = run([], { first: `${say(LARGE_RESPONSE_BYTES - 1)}; (await import('node:diagnostics_channel')).channel(${JSON.stringify(RESPONSE_BYTES_CHANNEL)}).publish({})` });
    expect(small.maxSemiMb).toBeLessThanOrEqual(YOUNG_SEMI_SPACE_FIRST_CAP_MB);
    expect(small.maxSemiMb).toBeGreaterThan(YOUNG_SEMI_SPACE_FIRST_CAP_MB / 2);
  });

  it("is left as node was told when its command line or NODE_OPTIONS sizes it", () => {
    // NODE_OPTIONS may quote a flag, as node's own parser allows.
    const told = [run(['--max-semi-space-size=8']), run([], { env: { NODE_OPTIONS: '--max-semi-space-size=8' } }), run([], { env: { NODE_OPTIONS: '"--max-semi-space-size=8"' } })];
    for (const r of told) {
      expect(r.settings.young_generation).toBe('as node was told');
      expect(r.maxSemiMb).toBeGreaterThan(YOUNG_SEMI_SPACE_CAP_MB);
      expect(r.maxSemiMb).toBeLessThanOrEqual(8);
    }
    // The growth factor or the smallest size given on the command line leave it to node too: it grows past the cap.
    for (const flag of ['--semi-space-growth-factor=4', '--min-semi-space-size=1']) {
      const r = run([flag]);
      expect(r.settings.young_generation, flag).toBe('as node was told');
      expect(r.maxSemiMb, flag).toBeGreaterThan(YOUNG_SEMI_SPACE_CAP_MB);
    }
  });

  it('stays within its cap after a worker thread starts (V8 then applies its minimum factor of 2 again)', () => {
    // The young generation at its first cap with the watch's factor 1 (V8's first size is the cap, so from the start),
    // as it is by the time a poll's commit starts the store's checkpointer; then the worker online, then garbage in one
    // synchronous stretch. The loop below waits for that state should the first cap ever be larger than V8's start.
    const first = `const semiNow = () => { const s = getHeapSpaceStatistics().find((x) => x.space_name === 'new_space'); return s.space_used_size + s.space_available_size; };
      for (let i = 0, k = [], settled = 0; i < 4e6 && settled < 3; i++) {
        k.push({ i });
        if (k.length > 4e5) k = [];
        if (i % 2e4 === 0) { if (semiNow() > ${YOUNG_SEMI_SPACE_FIRST_CAP_MB * MB * 0.9}) settled++; await new Promise((r) => setImmediate(r)); }
        if (i === 4e6 - 1) throw new Error('the young generation never reached its first cap');
      }
      const { Worker } = await import('node:worker_threads');
      const w = new Worker('setTimeout(() => {}, 50)', { eval: true });
      await new Promise((r) => w.once('online', r))`;
    const { maxSemiMb, ignored } = run([], { first, turns: false });
    expect(maxSemiMb).toBeLessThanOrEqual(YOUNG_SEMI_SPACE_FIRST_CAP_MB);
    expect(ignored).toBe(false);
  });

  it('is left to V8 when V8 grows it although the factor was 1 (a V8 that does not take the value once running)', () => {
    // The factor back at 2 behind the watch's back, as a V8 that applies its minimum to a value set at run time has it.
    const { maxSemiMb, ignored } = run([], { each: `(await import('node:v8')).setFlagsFromString('--semi-space-growth-factor=2')` });
    expect(ignored).toBe(true);
    expect(maxSemiMb).toBeGreaterThan(2 * YOUNG_SEMI_SPACE_CAP_MB);
  });

  it('youngGrowthFactor: 2 while a doubling stays within the cap (as after V8 shrank it), else 1', () => {
    const cap = 4 * MB;
    const usable = (mb: number) => mb * MB * 0.98; // a semi-space's pages less their headers
    expect(youngGrowthFactor(usable(1), cap)).toBe(2);
    expect(youngGrowthFactor(usable(2), cap)).toBe(2);
    expect(youngGrowthFactor(usable(4), cap)).toBe(1);
    expect(youngGrowthFactor(usable(16), cap)).toBe(1);
  });
});

describe('the watch over the young generation (YoungGenerationWatch)', () => {
  const cap = 4 * MB;

  it('does not count a growth while a worker is starting, however many looks come before it is online', () => {
    const w = new YoungGenerationWatch(1 * MB, cap);
    expect(w.look(1 * MB)).toBe(2); // room to double
    expect(w.look(2 * MB)).toBeUndefined(); // grew at 2: the factor stands
    expect(w.look(4 * MB)).toBe(1); // at the cap: no more growth
    // Two workers created; their isolates start on their own threads, V8 puts its minimum of 2 back, and the young
    // generation doubles at several looks before either is online: none of them is a strike.
    w.workerCreated();
    w.workerCreated();
    expect(w.look(4 * MB)).toBe(1); // set again while a worker starts
    expect(w.look(8 * MB)).toBe(1);
    w.workerOnline();
    expect(w.look(8 * MB)).toBe(1);
    expect(w.look(16 * MB)).toBe(1); // the other one is still starting
    w.workerOnline();
    expect(w.look(16 * MB)).toBe(1); // the first look after it is online
    expect(w.look(16 * MB)).toBeUndefined();
    // Two more workers, one at a time, with growth before each is online: still not taken as V8 ignoring the factor.
    for (const mb of [32, 64]) {
      w.workerCreated();
      expect(w.look(mb * MB)).toBe(1);
      w.workerOnline();
      expect(w.look(mb * MB)).toBe(1);
    }
    expect(w.look(64 * MB)).toBeUndefined();
  });

  it('takes V8 as not honouring the factor at the second growth against it with no worker about', () => {
    const w = new YoungGenerationWatch(4 * MB, cap);
    expect(w.look(4 * MB)).toBeUndefined(); // at the cap, the factor already 1
    expect(w.look(8 * MB)).toBeUndefined(); // a first strike: the factor stands
    expect(w.look(8 * MB)).toBeUndefined();
    expect(w.look(16 * MB)).toBe('ignored');
  });

  it('raises its cap once (never lowers it): growth allowed again up to the new cap', () => {
    const w = new YoungGenerationWatch(1 * MB, 2 * MB);
    expect(w.look(1 * MB)).toBe(2);
    expect(w.look(2 * MB)).toBe(1); // at the first cap
    expect(w.raise(1 * MB)).toBeUndefined(); // a lower cap changes nothing
    expect(w.look(2 * MB)).toBeUndefined();
    expect(w.raise(4 * MB)).toBe(2); // room to double again
    expect(w.look(4 * MB)).toBe(1);
    expect(w.raise(4 * MB)).toBeUndefined();
  });

  it('lets the young generation grow again to its cap after V8 shrank it, without a strike', () => {
    const w = new YoungGenerationWatch(4 * MB, cap);
    expect(w.look(4 * MB)).toBeUndefined();
    expect(w.look(1 * MB)).toBe(2); // shrunk between polls
    expect(w.look(2 * MB)).toBeUndefined(); // grew at 2
    expect(w.look(4 * MB)).toBe(1);
    expect(w.look(4 * MB)).toBeUndefined();
  });
});

describe('lookout run', () => {
  it('sets them before its modules load, and says so', async () => {
    const sim = await startSim({ scenario: 'calm' });
    const dir = dirs.make();
    const file = writeConfig(join(dir, 'lookout.yaml'), { sim, db: join(dir, 'lookout.db') });
    // One of glibc's malloc settings given (not the recommended value), the other not, no tunables: the line says what
    // this process got, and what it lacks.
    const { daemon, url } = await DaemonProcess.start(file, { MALLOC_ARENA_MAX: '4', MALLOC_MMAP_THRESHOLD_: undefined, GLIBC_TUNABLES: undefined });
    const line = daemon.logs().find((l) => l.msg === 'heap_settings') as { heap_growth?: unknown; young_generation?: unknown; compilers?: unknown; malloc?: unknown } | undefined;
    expect(line?.heap_growth, daemon.diag()).toBe('--heap-growing-percent=50');
    expect(line?.young_generation, daemon.diag()).toBe(YOUNG_GENERATION_SETTING);
    expect(line?.compilers, daemon.diag()).toBe(`${COMPILERS_SETTING} (${compilersOn().join(', ')} held back)`);
    expect(line?.malloc, daemon.diag()).toBe('MALLOC_ARENA_MAX=4, MALLOC_MMAP_THRESHOLD_ not set (glibc: 32768 recommended)');
    // Its own /metrics (prom-client's default metrics): the young generation's two semi-spaces within the first cap
    // (the calm world's responses are far under 4 MB). Set only once the daemon's modules had loaded, they would be at
    // 4 MB each already. The calm world's few polls write
    // far less log than starts the store's checkpointer (a worker, after which one growth past the cap may come in:
    // src/heap-growth.ts), so two semi-spaces at the cap are all there may be.
    const text = await getText(`${url}/metrics`);
    const young = Number(/^nodejs_heap_space_size_total_bytes\{space="new"\} (\d+)/m.exec(text)?.[1]);
    expect(young).toBeGreaterThan(0);
    expect(young).toBeLessThanOrEqual(2 * YOUNG_SEMI_SPACE_FIRST_CAP_MB * MB);
  });
});
