/**
 * The config loaded in a process of its own (src/config/child-load.ts, the built code: a real `node` child): the config
 * it sends deep-equals the one loaded in-process, an invalid config gives the same ConfigError, and a loader that
 * fails — exits, is killed, hangs, answers garbage or too much — gives an error naming the file and nothing it holds.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { deserialize, serialize } from 'node:v8';
import type { Readable } from 'node:stream';
import { spawn } from 'node:child_process';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfigSource, type ConfigSource } from '../src/config/load.js';
import { loaderEnv, loaderNodeArgs } from '../src/config/loader-node-options.js';
import { benchConfigSource } from '../src/bench/config-source.js';
import { benchConfigYaml } from '../src/bench/config.js';
import { ruleKinds } from '../src/rules/registry.js';
import { notifierModules } from '../src/notify/registry.js';
import { until } from './fixtures/daemon/harness.js';
import { gone } from './fixtures/config-loader/hold.js';
import { uncommentExamples } from './config-example-docs.js';

const root = join(import.meta.dirname, '..');
/** The built modules: the loader runs dist/config/load-entry.js. */
const dist = async <T>(p: string) => (await import(pathToFileURL(join(root, 'dist', p)).href)) as T;
let childLoad: typeof import('../src/config/child-load.js');
let errors: typeof import('../src/errors.js');

beforeAll(async () => {
  if (!existsSync(join(root, 'dist', 'config', 'load-entry.js'))) throw new Error('dist/config/load-entry.js is missing: run `npm run build`');
  childLoad = await dist('config/child-load.js');
  errors = await dist('errors.js');
});

/** config.example.yaml with every commented-out example switched on, each `${VAR}` given a stand-in. */
function everyExample(): ConfigSource {
  const text = uncommentExamples(readFileSync(join(root, 'config.example.yaml'), 'utf8'));
  const env = Object.fromEntries([...text.matchAll(/\$\{(\w+)\}/g)].map(([, n]) => [n!, n!.endsWith('_URL') ? 'https://example.com/hook' : 'stand-in-secret']));
  return { file: 'config.example.yaml', text, dir: root, env };
}

const bench = () =>
  benchConfigSource(
    benchConfigYaml({ baseUrl: 'http://127.0.0.1:9', catalogUrl: 'http://127.0.0.1:9', apiKey: 'k', dbPath: '/tmp/b.db', rules: 'seven', polls: ['markets', 'positions', 'benchmarks'] }),
  );

describe('the config a loader process sends', () => {
  it('is config.example.yaml with every example on: every rule kind, every notifier type (the round trip below covers them)', () => {
    const c = loadConfigSource(everyExample());
    expect(new Set(c.rules.map((r) => r.rule.kind))).toEqual(new Set(ruleKinds.map((k) => k.kind)));
    expect(new Set(Object.values(c.notifiers).map((n) => n.type))).toEqual(new Set(notifierModules.map((m) => m.type)));
  });

  it.each<[string, () => ConfigSource]>([
    ['config.example.yaml, read from its file', () => ({ file: 'config.example.yaml', env: {} })],
    ['config.example.yaml with every commented-out example on', everyExample],
    ["the bench's config: the seven rules, every poll it runs", bench],
  ])('deep-equals the one loaded in-process: %s', async (_, source) => {
    const s = source();
    expect(await childLoad.loadConfigInChild(s)).toStrictEqual(loadConfigSource(s));
  });

  it.each(['every-mistake.yaml', 'syntax-error.yaml', 'missing-env.yaml', 'rule-file-error.yaml', 'no-such-file.yaml'])(
    'an invalid config gives the same ConfigError, each problem at its file:line:col: %s',
    async (name) => {
      const source = { file: join('test', 'config', 'fixtures', name), env: {} };
      const inProcess = (() => {
        try {
          loadConfigSource(source);
        } catch (err) {
          return err as InstanceType<typeof errors.ConfigError>;
        }
        throw new Error(`${name} loaded`);
      })();
      const err = (await childLoad.loadConfigInChild(source).catch((e: unknown) => e)) as InstanceType<typeof errors.ConfigError>;
      expect(err).toBeInstanceOf(errors.ConfigError);
      expect({ code: err.code, message: err.message, problems: err.problems }).toStrictEqual({ code: 'E_CONFIG', message: inProcess.message, problems: inProcess.problems });
      expect(err.problems.length).toBeGreaterThan(0);
    },
  );
});

describe('a config loader that fails', () => {
  const SECRET = 'sk-live-4f1c2b-secret';
  let dir: string;
  const entry = (name: string, body: string) => {
    const f = join(dir, `${name}.mjs`);
    writeFileSync(f, body);
    return f;
  };
  beforeAll(() => void (dir = mkdtempSync(join(tmpdir(), 'lookout-loader-'))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each<[string, string, { timeoutMs?: number; maxBytes?: number }, string]>([
    ['exits with an error (which quotes a secret)', `throw new Error('cannot parse api_key: ${SECRET}')`, {}, "the config loader exited with code 1 (its output is not kept: lookout check -c FILE, with the daemon's node options, shows why)"],
    ['is killed', `process.kill(process.pid, 'SIGKILL')`, {}, 'the config loader was killed by SIGKILL'],
    ['answers what is not a config', `(await import('node:fs')).writeSync(3, 'api_key: ${SECRET}')`, {}, `the config loader's answer (${`api_key: ${SECRET}`.length} bytes) is not a config`],
    ['answers a value that is not an answer', `(await import('node:fs')).writeSync(3, (await import('node:v8')).serialize({ config: 'x' }))`, {}, `the config loader's answer (${serialize({ config: 'x' }).length} bytes) is not a config`],
    ['never answers', 'setInterval(() => {}, 1000)', { timeoutMs: 300 }, 'the config loader took longer than 0.3 s'],
    ['answers without end', `(await import('node:fs')).createWriteStream('', { fd: 3 }).write(Buffer.alloc(4 << 20))`, { maxBytes: 1 << 20 }, 'the config loader answered more than 1048576 bytes'],
  ])('%s: a ConfigLoaderError names the file and why, never what the config holds', async (name, body, limits, why) => {
    const file = join(dir, 'lookout.yaml');
    const err = (await childLoad.loadConfigInChild({ file, text: `source:\n  api_key: ${SECRET}\n` }, { ...limits, entry: entry(name.replace(/\W+/g, '-'), body) }).catch((e: unknown) => e)) as Error & { code: string };
    expect(err).toBeInstanceOf(errors.ConfigLoaderError);
    expect(err.code).toBe('E_CONFIG_LOADER');
    expect(err.message).toBe(`cannot load config ${file}: ${why.replace('FILE', file)}`);
    // Not in its message (above), nor anywhere else it carries: its cause, its other properties.
    expect(inspect(err, { depth: 10, showHidden: true })).not.toContain(SECRET);
  });

  it('is stopped by its signal: killed, and the load rejects with an AbortError', async () => {
    const pidFile = join(dir, 'hung.pid');
    const hung = entry('hung', `(await import('node:fs')).writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000)`);
    const stop = new AbortController();
    const load = childLoad.loadConfigInChild({ file: join(dir, 'lookout.yaml'), text: '' }, { entry: hung, signal: stop.signal }).catch((e: unknown) => e);
    const pid = await until('the loader to write its pid', () => (existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8')) || undefined : undefined), 10_000);
    stop.abort();
    expect(await load).toMatchObject({ name: 'AbortError' });
    await until('the loader to be gone', () => (gone(pid) ? true : undefined), 10_000);
    await expect(childLoad.loadConfigInChild({ file: 'x.yaml', text: '' }, { signal: stop.signal })).rejects.toMatchObject({ name: 'AbortError' });
  });
});

describe('the loader process (dist/config/load-entry.js)', () => {
  /** Runs the built entry with `args`, `stdin` written (and ended unless `keepOpen`); resolves with its exit and output. */
  const run = (nodeArgs: string[], args: string[], stdin: string, keepOpen = false, env: NodeJS.ProcessEnv = {}) =>
    new Promise<{ code: number | null; out: Buffer }>((resolve) => {
      const child = spawn(process.execPath, [...nodeArgs, join(root, 'dist', 'config', 'load-entry.js'), ...args], { cwd: root, env: { ...process.env, ...env }, stdio: ['pipe', 'ignore', 'ignore', 'pipe'], timeout: 20_000 });
      const out: Buffer[] = [];
      (child.stdio[3] as Readable).on('data', (c: Buffer) => out.push(c));
      child.stdin!.write(stdin);
      if (!keepOpen) child.stdin!.end();
      child.on('close', (code) => resolve({ code, out: Buffer.concat(out) }));
    });
  const source = { file: 'config.example.yaml', env: {} };

  it('exits once it has answered, even with a preload that keeps a handle open (an APM agent)', async () => {
    const marker = join(mkdtempSync(join(tmpdir(), 'lookout-preload-')), 'preloaded');
    const { code, out } = await run(['--import', join(import.meta.dirname, 'fixtures', 'config-loader', 'preload.mjs')], [], JSON.stringify(source), false, { PRELOAD_MARKER: marker });
    // The preload did run in it (its timer is what would have kept it alive).
    const preloaded = readFileSync(marker, 'utf8');
    rmSync(dirname(marker), { recursive: true });
    expect(preloaded).toMatch(/^\d+\timport\n$/);
    expect(code).toBe(0);
    expect((deserialize(out) as { config: unknown }).config).toStrictEqual(loadConfigSource(source));
  }, 30_000);

  it("answers on its own pipe: V8's traces on stdout (--trace-gc) do not garble the answer", async () => {
    const { code, out } = await run(['--trace-gc', '--trace-deopt'], [], JSON.stringify(source));
    expect(code).toBe(0);
    expect((deserialize(out) as { config: unknown }).config).toStrictEqual(loadConfigSource(source));
  }, 30_000);

  it('exits 1 on a request it cannot read', async () => {
    expect((await run([], [], 'not json')).code).toBe(1);
  }, 30_000);

  it('exits 3 past its deadline (its first argument, ms) when its request never ends', async () => {
    expect((await run([], ['300'], '{', true)).code).toBe(3);
  }, 30_000);
});

describe("the loader's node options: the daemon's, less preloads, profilers and the inspector", () => {
  it.each<[string, string[], string[]]>([
    ['the inspector, with its separate values', ['--inspect', '--inspect-port', '9230', '--inspect-brk=0.0.0.0:9229', '--debug-port=1', '--inspect-publish-uid', 'http'], []],
    ['preloads, with = or a separate value', ['-r', 'a.cjs', '--require=b.cjs', '--require', 'c.cjs', '--import', 'x.mjs', '--import=y.mjs', '--loader', 'l.mjs', '--experimental-loader=m.mjs'], []],
    ['profilers and their companions', ['--cpu-prof', '--cpu-prof-dir', '/tmp/p', '--cpu-prof-name=x.cpuprofile', '--heap-prof', '--heap-prof-dir=/tmp', '--heap-prof-interval', '1024', '--prof', '--cpu_prof'], []],
    ['the rest kept, in order', ['--max-semi-space-size=1', '--expose-gc', '--conditions', 'x', '--stack-size=2000', '--enable-source-maps'], ['--max-semi-space-size=1', '--expose-gc', '--conditions', 'x', '--stack-size=2000', '--enable-source-maps']],
    ['a mix', ['--max-old-space-size=512', '-r', 'apm.cjs', '--heap-growing-percent=0', '--inspect'], ['--max-old-space-size=512', '--heap-growing-percent=0']],
    ['what would run something else than the entry', ['-e', 'x()', '--eval=y()', '-p', '1', '--print', '2', '--input-type', 'module', '-c', '-i', '--test', '--test-name-pattern', 'a', '--watch', '--watch-path', 'src', '--snapshot-blob', 's.blob', '--prof-sampling-interval', '100'], []],
    ['V8 traces and env files kept', ['--trace-gc', '--env-file=.env', '--experimental-vm-modules'], ['--trace-gc', '--env-file=.env', '--experimental-vm-modules']],
  ])('%s', (_, args, kept) => {
    expect(loaderNodeArgs(args)).toEqual(kept);
  });

  it.each<[string, string | undefined, string | undefined]>([
    ['none', undefined, undefined],
    ['nothing dropped: as it was', '--max-old-space-size=512  "--max-semi-space-size=8"', '--max-old-space-size=512  "--max-semi-space-size=8"'],
    ['preloads and the inspector dropped, quotes too', '"--require" apm.cjs --import=x.mjs --inspect "--max-semi-space-size=8" --cpu-prof', '--max-semi-space-size=8'],
    ['all dropped', '--require apm.cjs', ''],
    ['a quoted path with a space, dropped whole', '--require "/opt/a b/agent.cjs" --max-old-space-size=512', '--max-old-space-size=512'],
    ['a kept value with a space and a quote, quoted again as node reads it', '--require x.cjs "--title=a \\"b\\" c"', '"--title=a \\"b\\" c"'],
  ])('NODE_OPTIONS: %s', (_, given, loader) => {
    const env = { PATH: '/bin', ...(given === undefined ? {} : { NODE_OPTIONS: given }) };
    expect(loaderEnv(env)).toEqual({ PATH: '/bin', ...(loader === undefined ? {} : { NODE_OPTIONS: loader }) });
  });
});
