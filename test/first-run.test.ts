/** What a newcomer hits first: the example config, the editor schema, and the Docker image's runtime commands. */
import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { runCheck } from '../src/commands/check.js';
import { configJsonSchema } from '../src/config/json-schema.js';
import { loadConfig, loadConfigText } from '../src/config/load.js';
import { ConfigError } from '../src/errors.js';
import { EXEMPT, exampleDocProblems, schemaKeyPaths, uncommentExamples, type JsonSchema } from './config-example-docs.js';

const run = promisify(execFile);

describe('config.example.yaml', () => {
  it('passes lookout check with no environment set', () => {
    const lines: string[] = [];
    const code = runCheck('config.example.yaml', { out: (l) => lines.push(l), err: (l) => lines.push(l) }, {});
    expect(lines.join('\n')).toMatch(/config\.example\.yaml: OK/);
    expect(code).toBe(0);
  });

  it('uses the starter rules and points editors at the committed schema', () => {
    const text = readFileSync('config.example.yaml', 'utf8');
    expect(text.split('\n')[0]).toBe('# yaml-language-server: $schema=./lookout.schema.json');
    const cfg = loadConfig('config.example.yaml', { env: {} });
    expect(new Set(cfg.rules.map((r) => r.file.replace(/^.*rules\//, 'rules/')))).toEqual(
      new Set(['rules/markets.yaml', 'rules/oracles.yaml', 'rules/positions.yaml', 'rules/benchmarks.yaml']),
    );
  });

  it('documents every key of the schema, each with a comment (rule: see exampleDocProblems)', () => {
    const schema = configJsonSchema() as JsonSchema;
    const problems = exampleDocProblems(readFileSync('config.example.yaml', 'utf8'), schema);
    const elsewhere = ['README.md', ...readdirSync('rules').filter((f) => f.endsWith('.yaml')).map((f) => join('rules', f))]
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n');
    const exemptButNowhere = [...schemaKeyPaths(schema)]
      .filter((p) => EXEMPT.test(p))
      .filter((p) => {
        const key = p.slice(p.lastIndexOf('.') + 1);
        return !elsewhere.includes(`\`${key}\``) && !new RegExp(`\\b${key}:`).test(elsewhere);
      });
    const report = (title: string, list: string[]) => (list.length ? [`${title} (${list.length}):`, ...list.map((l) => `  - ${l}`)] : []);
    const text = [
      ...report('keys of the schema that config.example.yaml never shows (add them, commented out if optional)', problems.missing),
      ...report('keys shown without a comment on their line or the line just above', problems.uncommented),
      ...report('rule-kind parameters left to rules/*.yaml and README §Rules (EXEMPT), but named in neither', exemptButNowhere),
      ...report('keys the schema does not know (a typo in a commented-out key? a prose comment starting `word:`?)', problems.unknown),
    ].join('\n');
    expect(text === '', `config.example.yaml must document every config key:\n${text}\n`).toBe(true);
  });

  it('is still a valid config with every commented-out example switched on', () => {
    const text = uncommentExamples(readFileSync('config.example.yaml', 'utf8'));
    // A `${VAR}` without a default is an error when unset: give each a stand-in (a URL where a URL is expected).
    const env = Object.fromEntries(
      [...text.matchAll(/\$\{(\w+)\}/g)].map(([, name]) => [name!, name!.endsWith('_URL') ? 'https://example.com/hook' : 'stand-in-secret']),
    );
    let problems = '';
    try {
      loadConfigText('config.example.yaml', text, { env, dir: process.cwd() });
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems = err.message;
    }
    expect(problems, 'uncommenting an example in config.example.yaml gives an invalid config (line numbers are the file\'s)').toBe('');
  });
});

describe('lookout.schema.json', () => {
  it('is current: regenerate with `node dist/cli.js schema > lookout.schema.json`', () => {
    const committed = JSON.parse(readFileSync('lookout.schema.json', 'utf8')) as unknown;
    expect(committed).toEqual(JSON.parse(JSON.stringify(configJsonSchema())));
  });

  it('rejects unknown keys (additionalProperties false) so editors flag typos', () => {
    const schema = configJsonSchema() as { additionalProperties?: boolean; properties: { source: { additionalProperties?: boolean } } };
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties.source.additionalProperties).toBe(false);
  });
});

/** The Dockerfile with continuation lines joined, split into stages (each starts at a FROM). */
function dockerStages(): Array<{ image: string; name?: string; text: string }> {
  const joined = readFileSync('Dockerfile', 'utf8').replace(/\\\n\s*/g, ' ');
  return joined
    .split(/^(?=FROM\s)/im)
    .filter((t) => /^FROM\s/i.test(t))
    .map((text) => {
      const [, image, name] = /^FROM\s+(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?/i.exec(text)!;
      return { image: image!, ...(name ? { name } : {}), text };
    });
}

describe('Dockerfile (read, no Docker engine here)', () => {
  it('runs on an active Node LTS (22 or 24), in a stage of its own, as node, with the DB on a volume', () => {
    const stages = dockerStages();
    const runtime = stages.at(-1)!;
    expect(stages.length, 'multi-stage: build with dev dependencies, run without them').toBeGreaterThanOrEqual(2);
    expect(runtime.image, 'the runtime stage starts from an official Node 22 or 24 image (20 leaves LTS in April 2026)').toMatch(
      /^node:(22|24)([.-]|$)/,
    );
    expect(runtime.text, 'the runtime stage copies its build output from an earlier stage').toMatch(/^COPY\s+--from=\S+/m);
    expect(runtime.text).toMatch(/^USER node$/m);
    const db = /\bLOOKOUT_DB=(\S+)/.exec(runtime.text)?.[1];
    expect(db, 'the runtime stage sets LOOKOUT_DB, which config.example.yaml reads').toBeDefined();
    const volume = /^VOLUME\s+(.+)$/m.exec(runtime.text)?.[1]?.trim() ?? '';
    const volumes = volume.startsWith('[') ? (JSON.parse(volume) as string[]) : volume.split(/\s+/).filter(Boolean);
    expect(volumes, `the DB (${db}) sits on a VOLUME`).toContain(dirname(db!));
  });

  it('HEALTHCHECK probes /healthz on the port LOOKOUT_LISTEN names, so overriding it keeps the check right', async () => {
    const runtime = dockerStages().at(-1)!;
    const cmd = /^HEALTHCHECK\s.*?\bCMD\s+(\[.*\])\s*$/m.exec(runtime.text)?.[1];
    expect(cmd, 'HEALTHCHECK … CMD ["node", "-e", "…"] (exec form: no shell in the way)').toBeDefined();
    const argv = JSON.parse(cmd!) as string[];
    expect(argv.slice(0, 2)).toEqual(['node', '-e']);
    expect(argv[2], 'falls back to port 9464 when LOOKOUT_LISTEN is unset').toMatch(/LOOKOUT_LISTEN\s*\|\|\s*'[^']*:9464'/);

    let status = 200;
    const server = createServer((req, res) => {
      res.statusCode = req.url === '/healthz' ? status : 404;
      res.end();
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    const port = (server.address() as AddressInfo).port;
    const probe = (listen: string) =>
      run(argv[0]!, argv.slice(1), { env: { PATH: process.env.PATH, LOOKOUT_LISTEN: listen }, timeout: 10_000 }).then(
        () => 0,
        (err: { code?: unknown }) => (typeof err.code === 'number' ? err.code : -1),
      );
    const ok = `exit code of the probe with LOOKOUT_LISTEN=0.0.0.0:${port}, a server on 127.0.0.1:${port} answering 200 on /healthz only`;
    try {
      expect(await probe(`0.0.0.0:${port}`), ok).toBe(0);
      expect(await probe(`127.0.0.1:${port}`), ok.replace('0.0.0.0', '127.0.0.1')).toBe(0);
      status = 503;
      expect(await probe(`0.0.0.0:${port}`), 'exit code of the probe when /healthz answers 503').toBe(1);
    } finally {
      await new Promise((done) => server.close(done));
    }
    expect(await probe(`0.0.0.0:${port}`), 'exit code of the probe when nothing listens').toBe(1);
  });
});

describe('Dockerfile runtime stage, by hand (no Docker engine here)', () => {
  it(
    'npm ci --omit=dev, then node dist/cli.js check -c config.example.yaml works without dev dependencies',
    async () => {
      expect(existsSync('dist/cli.js'), 'run `npm run build` first (npm test does)').toBe(true);
      const dir = mkdtempSync(join(tmpdir(), 'lookout-runtime-'));
      try {
        for (const f of ['package.json', 'package-lock.json', 'config.example.yaml', 'lookout.schema.json']) cpSync(f, join(dir, f));
        cpSync('dist', join(dir, 'dist'), { recursive: true });
        cpSync('rules', join(dir, 'rules'), { recursive: true });
        await run('npm', ['ci', '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund'], {
          cwd: dir,
          timeout: 600_000,
          // node-gyp compiles better-sqlite3 here (no prebuilt binary is reachable): use every core.
          env: { ...process.env, JOBS: 'max' },
        });
        expect(existsSync(join(dir, 'node_modules/vitest')), 'dev dependencies must not be installed').toBe(false);
        expect(existsSync(join(dir, 'node_modules/better-sqlite3'))).toBe(true);
        const r = await run('node', ['dist/cli.js', 'check', '-c', 'config.example.yaml'], {
          cwd: dir,
          timeout: 30_000,
          env: { PATH: process.env.PATH, LOOKOUT_LISTEN: '0.0.0.0:9464', LOOKOUT_DB: join(dir, 'data/lookout.db') },
        });
        expect(r.stdout).toMatch(/config\.example\.yaml: OK/);
        // The image's HEALTHCHECK and CMD name these; keep them in step with the Dockerfile.
        const dockerfile = readFileSync('Dockerfile', 'utf8');
        expect(dockerfile).toMatch(/npm ci --omit=dev/);
        expect(dockerfile).toMatch(/^USER node$/m);
        expect(dockerfile).toMatch(/HEALTHCHECK[\s\S]*\/healthz/);
        expect(dockerfile).toMatch(/LOOKOUT_LISTEN=0\.0\.0\.0:9464/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    660_000,
  );
});
