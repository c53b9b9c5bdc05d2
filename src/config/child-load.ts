/**
 * Loads the config in a short-lived process of its own (./load-entry.ts) and receives it as plain data (v8.serialize),
 * so the daemon's process never loads the config's parser and schema libraries (yaml, zod: ~6–8 MB of RSS, B6s).
 * The loader inherits the environment (`${VAR}` secrets come from it); its request goes on stdin, not argv, so a
 * config's text is never on a command line.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { deserialize } from 'node:v8';
import { ConfigError, ConfigLoaderError, type ConfigProblem } from '../errors.js';
import type { Config, ConfigSource } from './load.js';

/** What the loader answers: the config, the problems a {@link ConfigError} lists, or an unexpected error's message. */
export type LoadAnswer = { config: Config } | { problems: ConfigProblem[] } | { error: string };

/** Bounds of one load; `entry` replaces the loader's module (tests give one that fails). */
export interface LoaderLimits {
  timeoutMs?: number;
  maxBytes?: number;
  entry?: string;
}

const ENTRY = fileURLToPath(new URL('./load-entry.js', import.meta.url));
/** Node's inspector options: a second process must not take the debugger's port, nor wait for a debugger. */
const INSPECTOR = /^--(inspect|debug)(-|=|$)/;
const INSPECTOR_WITH_VALUE = /^--(inspect-port|debug-port|inspect-publish-uid)$/;

/** `args` (node options) without the inspector's, and their separate values. */
export function withoutInspector(args: readonly string[]): string[] {
  return args.filter((a, i) => !INSPECTOR.test(a) && !INSPECTOR_WITH_VALUE.test(args[i - 1] ?? ''));
}

/** The environment, with NODE_OPTIONS rid of inspector options (rewritten only when it holds one). */
function loaderEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const opts = env.NODE_OPTIONS?.split(/\s+/).filter(Boolean) ?? [];
  return opts.some((o) => INSPECTOR.test(o)) ? { ...env, NODE_OPTIONS: withoutInspector(opts).join(' ') } : env;
}

/**
 * Loads `source` in a loader process: resolves with the config, or rejects with the {@link ConfigError} the loader
 * found (the same problems as an in-process load), or a {@link ConfigLoaderError} when the loader fails, is killed,
 * takes longer than `timeoutMs` (default 30 s) or answers more than `maxBytes` (default 64 MiB) or no config.
 */
export function loadConfigInChild(source: ConfigSource, limits: LoaderLimits = {}): Promise<Config> {
  const { timeoutMs = 30_000, maxBytes = 64 * 2 ** 20, entry = ENTRY } = limits;
  return new Promise<Config>((resolve, reject) => {
    const fail = (why: string, cause?: unknown) => reject(new ConfigLoaderError(source.file, why, cause === undefined ? undefined : { cause }));
    const child = spawn(process.execPath, [...withoutInspector(process.execArgv), entry], { stdio: ['pipe', 'pipe', 'ignore'], env: loaderEnv(process.env) });
    const chunks: Buffer[] = [];
    let size = 0;
    let killedFor: string | undefined;
    const stop = (why: string) => {
      killedFor ??= why;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(() => stop(`the config loader took longer than ${timeoutMs / 1000} s`), timeoutMs);
    child.stdout.on('data', (c: Buffer) => {
      size += c.length;
      if (size > maxBytes) stop(`the config loader answered more than ${maxBytes} bytes`);
      else chunks.push(c);
    });
    // A loader gone before it read its request breaks the pipe: its exit says why.
    child.stdin.on('error', () => undefined);
    child.stdin.end(JSON.stringify(source));
    child.on('error', (err) => {
      clearTimeout(timer);
      fail(`cannot start the config loader: ${err.message}`, err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (killedFor) return fail(killedFor);
      if (signal) return fail(`the config loader was killed by ${signal}`);
      if (code !== 0) return fail(`the config loader exited with code ${code}`);
      try {
        resolve(answerOf(Buffer.concat(chunks), source.file));
      } catch (err) {
        reject(err as Error);
      }
    });
  });
}

/** The config the loader sent, or the error it stands for. */
function answerOf(bytes: Buffer, file: string): Config {
  let a: Partial<Record<'config' | 'problems' | 'error', unknown>> | undefined;
  try {
    a = deserialize(bytes) as typeof a;
  } catch {
    a = undefined;
  }
  if (a?.config !== null && typeof a?.config === 'object') return a.config as Config;
  if (Array.isArray(a?.problems)) throw new ConfigError(a.problems as ConfigProblem[]);
  if (typeof a?.error === 'string') throw new ConfigLoaderError(file, a.error);
  throw new ConfigLoaderError(file, `the config loader's answer (${bytes.length} bytes) is not a config`);
}
