/**
 * V8's compilers held back until the daemon's work needs them (src/compiler-tiers.ts): a process that runs the daemon
 * starts with its JavaScript in the interpreter, V8 itself says so of a hot function, and a poll of
 * COMPILERS_ROWS readings gives every compiler that was on back (the flags exactly as before); the poll runner says
 * how large each fetched poll is before its transaction; tiering flags on node's command line are left alone.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { POLL_ROWS_CHANNEL, RESPONSE_BYTES_CHANNEL } from '../src/channels.js';
import { ManualClock } from '../src/clock.js';
import { COMPILERS_RESPONSE_BYTES, COMPILERS_ROWS, COMPILERS_SETTING, CompilerGate, compilersOn } from '../src/compiler-tiers.js';
import { runPoll } from '../src/poll-runner.js';
import { pollSchema } from '../src/source/polls/schemas.js';
import { openStore } from '../src/store/index.js';
import { engineFor, market, MIN, pollStages, rule, T0, tempDirs } from './alerts-helpers.js';

const MODULE = pathToFileURL(join(import.meta.dirname, '..', 'dist', 'compiler-tiers.js')).href;
/** V8's `%GetOptimizationStatus` bit for a function running optimized code (OptimizationStatus::kOptimized). */
const OPTIMIZED = 1 << 4;

interface Tiers {
  setting: string;
  /** `%GetOptimizationStatus` of a function made hot at each step, with what was published before it. */
  steps: { said: Said | undefined; optimized: boolean; sameFunctionOptimized: boolean }[];
  lifted: unknown[];
  /** Whether V8's flags (their hash, in `cachedDataVersionTag()`) are as before the hold, at the end. */
  flagsAsBefore: boolean;
}

/** What a step publishes: a poll's readings on the poll runner's channel, or a response's size on the source's. */
type Said = { rows: number } | { bytes: number };

/**
 * A node process (with natives syntax, to ask V8; TurboFan compiling on the main thread, so that a hot function is
 * optimized by the end of its step) that holds the compilers back and makes a fresh function and one function kept
 * from the start hot after each publication `said` (undefined: none).
 */
function tiers(said: (Said | undefined)[], nodeArgs: string[] = []): Tiers {
  const script = `
    const { holdCompilers, onCompilersLifted } = await import(${JSON.stringify(MODULE)});
    const { channel } = await import('node:diagnostics_channel');
    const { cachedDataVersionTag, setFlagsFromString } = await import('node:v8');
    const tag = cachedDataVersionTag();
    const setting = holdCompilers(process.execArgv);
    const lifted = [];
    onCompilersLifted((n) => lifted.push(n));
    const make = () => new Function('x', 'let s = 0; for (let i = 0; i < 20; i++) s += (x * i) % 7; return s;');
    const kept = make();
    const heat = async (f) => { for (let j = 0; j < 150; j++) { for (let i = 0; i < 2000; i++) f(i); await new Promise((r) => setImmediate(r)); } return (%GetOptimizationStatus(f) & ${OPTIMIZED}) !== 0; };
    const steps = [];
    for (const said of ${JSON.stringify(said.map((r) => r ?? null))}) {
      if (said && 'rows' in said) channel(${JSON.stringify(POLL_ROWS_CHANNEL)}).publish({ poll: 'markets', rows: said.rows });
      if (said && 'bytes' in said) channel(${JSON.stringify(RESPONSE_BYTES_CHANNEL)}).publish({ bytes: said.bytes });
      steps.push({ said: said ?? undefined, optimized: await heat(make()), sameFunctionOptimized: await heat(kept) });
    }
    console.log('result=' + JSON.stringify({ setting, steps, lifted, flagsAsBefore: cachedDataVersionTag() === tag }));`;
  const r = spawnSync(process.execPath, ['--allow-natives-syntax', '--no-concurrent-recompilation', ...nodeArgs, '--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(/^result=(.*)$/m.exec(r.stdout)?.[1] ?? '{}') as Tiers;
}

describe('the compilers', () => {
  it('are held back until a poll of COMPILERS_ROWS readings, then all that were on are back', () => {
    const t = tiers([undefined, { rows: COMPILERS_ROWS - 1 }, { bytes: COMPILERS_RESPONSE_BYTES - 1 }, { rows: COMPILERS_ROWS }, { rows: 50_000 }]);
    expect(t.setting).toBe(`${COMPILERS_SETTING} (${compilersOn().join(', ')} held back)`);
    // V8 says so: hot, and still in the interpreter, until the poll of COMPILERS_ROWS; then a new hot function and
    // one that was hot all along are optimized.
    expect(t.steps.map((s) => [s.said, s.optimized, s.sameFunctionOptimized])).toEqual([
      [undefined, false, false],
      [{ rows: COMPILERS_ROWS - 1 }, false, false],
      [{ bytes: COMPILERS_RESPONSE_BYTES - 1 }, false, false],
      [{ rows: COMPILERS_ROWS }, true, true],
      [{ rows: 50_000 }, true, true],
    ]);
    // Told once, with the poll that lifted them; every flag back as it was (implications included).
    expect(t.lifted).toEqual([{ rows: COMPILERS_ROWS }]);
    expect(t.flagsAsBefore).toBe(true);
  });

  it('are back at a response of COMPILERS_RESPONSE_BYTES (a sharded replica reads all the markets, keeps its share)', () => {
    const t = tiers([{ rows: 10 }, { bytes: COMPILERS_RESPONSE_BYTES }]);
    expect(t.steps.map((s) => s.optimized)).toEqual([false, true]);
    expect(t.lifted).toEqual([{ bytes: COMPILERS_RESPONSE_BYTES }]);
    expect(t.flagsAsBefore).toBe(true);
  });

  it('run as node was told when its command line names a tiering flag', () => {
    for (const flag of ['--no-sparkplug', '--max-opt=3', '--no-opt', '--always-sparkplug']) {
      const t = tiers([undefined], [flag]);
      expect(t.setting, flag).toBe('as node was told');
    }
    // NODE_OPTIONS takes few V8 flags, `--jitless` among them: the daemon's settings read it there too.
    const viaEnv = spawnSync(process.execPath, ['--input-type=module', '-e', `const { applyDaemonHeapSettings } = await import(${JSON.stringify(pathToFileURL(join(import.meta.dirname, '..', 'dist', 'heap-growth.js')).href)}); process.stdout.write(applyDaemonHeapSettings().compilers)`], { encoding: 'utf8', timeout: 20_000, env: { ...process.env, NODE_OPTIONS: '--jitless' } });
    expect(viaEnv.stdout, viaEnv.stderr).toBe('as node was told');
    // Nothing held: optimized without any poll. A V8 flag of another kind is not a tiering flag.
    expect(tiers([undefined], ['--no-sparkplug']).steps[0]?.optimized).toBe(true);
    expect(tiers([undefined], ['--always-use-string-forwarding-table']).setting).toBe(`${COMPILERS_SETTING} (${compilersOn().join(', ')} held back)`);
  });

  it('come back at the first poll or response that large only, and not for a size that is not a number', () => {
    const gate = new CompilerGate();
    const small = [gate.poll(COMPILERS_ROWS - 1), gate.poll(String(COMPILERS_ROWS)), gate.poll(NaN), gate.poll(undefined), gate.response(COMPILERS_RESPONSE_BYTES - 1), gate.response(`${COMPILERS_RESPONSE_BYTES}`)];
    expect(small).toEqual([false, false, false, false, false, false]);
    expect(gate.held).toBe(true);
    expect(gate.response(COMPILERS_RESPONSE_BYTES)).toBe(true);
    expect([gate.poll(COMPILERS_ROWS * 10), gate.response(COMPILERS_RESPONSE_BYTES * 10)]).toEqual([false, false]);
    expect(gate.held).toBe(false);
  });
});

describe('the compilers held back', () => {
  it("are on by default in this node, as its own `--v8-options` says: never one that was off", () => {
    const text = spawnSync(process.execPath, ['--v8-options'], { encoding: 'utf8', timeout: 20_000 }).stdout;
    const onByDefault = (flag: string) => new RegExp(`^\\s+--${flag} \\(.*\\n\\s+type: bool\\s+default: --${flag}$`, 'm').test(text);
    const held = compilersOn();
    for (const c of held) expect(onByDefault(c), c).toBe(true);
    // And every one that is on is held: a node whose Maglev is on but not in compilersOn's table fails here.
    for (const c of ['turbofan', 'sparkplug', 'maglev']) expect(held.includes(c), c).toBe(onByDefault(c));
    // The oracle can tell a flag that is off.
    expect(onByDefault('jitless')).toBe(false);
  });

  it("take Maglev only where node builds it in and turns it on", () => {
    expect(compilersOn('20.20.2', 'x64', false)).toEqual(['turbofan', 'sparkplug']);
    expect(compilersOn('22.8.0', 'arm64', true)).toEqual(['turbofan', 'maglev', 'sparkplug']);
    expect(compilersOn('22.8.0', 'arm64', false)).toEqual(['turbofan', 'sparkplug']);
    // 22.9 turned Maglev off; a node not named keeps it as it is.
    expect(compilersOn('22.21.1', 'x64', true)).toEqual(['turbofan', 'sparkplug']);
    expect(compilersOn('24.11.0', 'x64', true)).toEqual(['turbofan', 'maglev', 'sparkplug']);
    expect(compilersOn('26.0.0', 'x64', true)).toEqual(['turbofan', 'sparkplug']);
    expect(compilersOn('24.11.0', 's390x', true)).toEqual([]);
  });
});

describe('the poll runner', () => {
  const dirs = tempDirs();
  afterEach(() => dirs.cleanup());

  it("publishes a fetched poll's readings before its transaction, and nothing for a failed fetch", async () => {
    const store = openStore(join(dirs.make(), 'lookout.db'));
    const clock = new ManualClock(T0);
    const engine = engineFor(store, [rule({ name: 'util-high', kind: 'utilization_above', severity: 'critical', threshold: 0.9 })], { clock });
    // What happened, in order: the publication (with whether a transaction was open) and each stage of the poll.
    const seen: unknown[] = [];
    const onRows = (m: unknown) => seen.push({ ...(m as object), inTransaction: store.db.inTransaction });
    let fail = false;
    const stages = pollStages(store, clock, engine, {
      fetch: async (_p, _s, now) => {
        if (fail) throw new Error('POST /yields/graphql: 503');
        return { readings: [market('m1', now, { utilization: 0.5 }), market('m2', now, { utilization: 0.97 })], rejected: [] };
      },
      evaluate: (o, now) => {
        seen.push('evaluate');
        return engine.applyPollSteps(o, now);
      },
      after: () => void seen.push('after'),
    });
    const poll = pollSchema.parse({ name: 'markets', kind: 'metrics', cron: '* * * * *' });
    subscribe(POLL_ROWS_CHANNEL, onRows);
    try {
      clock.advance(MIN);
      expect((await runPoll(poll, new AbortController().signal, stages)).ok).toBe(true);
      fail = true;
      clock.advance(MIN);
      expect((await runPoll(poll, new AbortController().signal, stages)).ok).toBe(false);
    } finally {
      unsubscribe(POLL_ROWS_CHANNEL, onRows);
      store.close();
    }
    // Published before the poll's transaction (its evaluation runs inside it), once, and not for the failed fetch (whose
    // run is still evaluated and recorded).
    expect(seen).toEqual([{ poll: 'markets', rows: 2, inTransaction: false }, 'evaluate', 'after', 'evaluate', 'after']);
  });
});
