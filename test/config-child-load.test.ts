/**
 * The config loaded in a process of its own (src/config/child-load.ts, the built code: a real `node` child): the config
 * it sends deep-equals the one loaded in-process, an invalid config gives the same ConfigError, and a loader that
 * fails — exits, is killed, hangs, answers garbage or too much — gives an error naming the file and nothing it holds.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { serialize } from 'node:v8';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfigSource, type ConfigSource } from '../src/config/load.js';
import { withoutInspector } from '../src/config/child-load.js';
import { benchConfigSource } from '../src/bench/config-source.js';
import { benchConfigYaml } from '../src/bench/config.js';
import { ruleKinds } from '../src/rules/registry.js';
import { notifierModules } from '../src/notify/registry.js';
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
    ['exits with an error (which quotes a secret)', `throw new Error('cannot parse api_key: ${SECRET}')`, {}, 'the config loader exited with code 1'],
    ['is killed', `process.kill(process.pid, 'SIGKILL')`, {}, 'the config loader was killed by SIGKILL'],
    ['answers what is not a config', `process.stdout.write('api_key: ${SECRET}')`, {}, `the config loader's answer (${`api_key: ${SECRET}`.length} bytes) is not a config`],
    ['answers a value that is not an answer', `process.stdout.write((await import('node:v8')).serialize({ config: 'x' }))`, {}, `the config loader's answer (${serialize({ config: 'x' }).length} bytes) is not a config`],
    ['never answers', 'setInterval(() => {}, 1000)', { timeoutMs: 300 }, 'the config loader took longer than 0.3 s'],
    ['answers without end', 'process.stdout.write(Buffer.alloc(4 << 20))', { maxBytes: 1 << 20 }, 'the config loader answered more than 1048576 bytes'],
  ])('%s: a ConfigLoaderError names the file and why, never what the config holds', async (name, body, limits, why) => {
    const file = join(dir, 'lookout.yaml');
    const t0 = Date.now();
    const err = (await childLoad.loadConfigInChild({ file, text: `source:\n  api_key: ${SECRET}\n` }, { ...limits, entry: entry(name.replace(/\W+/g, '-'), body) }).catch((e: unknown) => e)) as Error & { code: string };
    expect(err).toBeInstanceOf(errors.ConfigLoaderError);
    expect(err.code).toBe('E_CONFIG_LOADER');
    expect(err.message).toBe(`cannot load config ${file}: ${why}`);
    expect(String(err)).not.toContain(SECRET);
    expect(Date.now() - t0).toBeLessThan(10_000);
  });

  it('never gives the loader the inspector options: it would take the debugger port, or wait for a debugger', () => {
    const args = ['--inspect', '--max-semi-space-size=1', '--inspect-port', '9230', '--inspect-brk=0.0.0.0:9229', '--expose-gc', '--debug-port=1', '--inspect-publish-uid', 'http', '--import', 'x.mjs'];
    expect(withoutInspector(args)).toEqual(['--max-semi-space-size=1', '--expose-gc', '--import', 'x.mjs']);
  });
});
