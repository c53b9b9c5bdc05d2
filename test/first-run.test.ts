/** What a newcomer hits first: the example config, the editor schema, and the Docker image's runtime commands. */
import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { runCheck } from '../src/commands/check.js';
import { configJsonSchema } from '../src/config/json-schema.js';
import { loadConfig } from '../src/config/load.js';

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

  it('documents every top-level section of the schema with a comment', () => {
    const text = readFileSync('config.example.yaml', 'utf8');
    const schema = configJsonSchema() as { properties: Record<string, unknown> };
    for (const key of Object.keys(schema.properties).filter((k) => k !== 'definitions')) {
      expect(text, `config.example.yaml should mention '${key}:'`).toMatch(new RegExp(`^#? ?${key}:`, 'm'));
    }
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
