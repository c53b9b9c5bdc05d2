/**
 * Loads the config in a short-lived process of its own (./load-entry.ts) and receives it as plain data (v8.serialize),
 * so the daemon's process never loads the config's parser and schema libraries (yaml, zod: ~6–8 MB of RSS, B6s).
 * The loader inherits the environment (`${VAR}` secrets come from it) and the daemon's node options less preloads,
 * profilers and the inspector (./loader-node-options.ts); its request goes on stdin, not argv, so a config's text is
 * never on a command line, and its answer comes on a pipe of its own (fd 3), so what node or V8 print on stdout (a
 * `--trace-gc` the daemon runs with) cannot garble it. It stays in the daemon's process group: whatever stops the
 * group (a Ctrl-C, a supervisor's group kill) stops it too.
 */
import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { deserialize } from 'node:v8';
import { ConfigError, ConfigLoaderError, type ConfigProblem } from '../errors.js';
import type { Config, ConfigSource } from './load.js';
import { loaderEnv, loaderNodeArgs } from './loader-node-options.js';

/** What the loader answers: the config, the problems a {@link ConfigError} lists, or an unexpected error's message. */
export type LoadAnswer = { config: Config } | { problems: ConfigProblem[] } | { error: string };

/** Bounds of one load; `signal` stops it; `entry` replaces the loader's module (tests give one that fails). */
export interface LoaderLimits {
  timeoutMs?: number;
  maxBytes?: number;
  signal?: AbortSignal;
  entry?: string;
}

const ENTRY = fileURLToPath(new URL('./load-entry.js', import.meta.url));

/** What a load stopped by its `signal` rejects with. */
const aborted = () => new DOMException('the config load was aborted', 'AbortError');

/**
 * Loads `source` in a loader process: resolves with the config, or rejects with the {@link ConfigError} the loader
 * found (the same problems as an in-process load), or a {@link ConfigLoaderError} when the loader fails, is killed,
 * takes longer than `timeoutMs` (default 30 s) or answers more than `maxBytes` (default 64 MiB) or no config, or an
 * `AbortError` once `signal` aborts (the loader is killed).
 */
export function loadConfigInChild(source: ConfigSource, limits: LoaderLimits = {}): Promise<Config> {
  const { timeoutMs = 30_000, maxBytes = 64 * 2 ** 20, signal, entry = ENTRY } = limits;
  if (signal?.aborted) return Promise.reject(aborted());
  return new Promise<Config>((resolve, reject) => {
    // The loader's own deadline (twice this one) ends it should this process die without killing it.
    const child = spawn(process.execPath, [...loaderNodeArgs(process.execArgv), entry, String(2 * timeoutMs)], {
      stdio: ['pipe', 'ignore', 'ignore', 'pipe'],
      env: loaderEnv(process.env),
    });
    const answer = child.stdio[3] as Readable;
    const request = child.stdin!;
    const chunks: Buffer[] = [];
    let size = 0;
    let killedFor: string | undefined;
    const stop = (why: string) => {
      killedFor ??= why;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(() => stop(`the config loader took longer than ${timeoutMs / 1000} s`), timeoutMs);
    let settled = false;
    const settle = (done: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      done();
    };
    const onAbort = () => {
      stop('aborted');
      settle(() => reject(aborted()));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    const fail = (why: string, cause?: unknown) => settle(() => reject(new ConfigLoaderError(source.file, why, cause === undefined ? undefined : { cause })));
    answer.on('data', (c: Buffer) => {
      size += c.length;
      if (size > maxBytes) stop(`the config loader answered more than ${maxBytes} bytes`);
      else chunks.push(c);
    });
    // A loader gone before it read its request breaks the pipe: its exit says why.
    request.on('error', () => undefined);
    request.end(JSON.stringify(source));
    child.on('error', (err) => fail(`cannot start the config loader: ${err.message}`, err));
    child.on('close', (code, signal) => {
      if (killedFor) return fail(killedFor);
      if (signal) return fail(`the config loader was killed by ${signal}`);
      // Its stderr is not read: an error there may quote the config, secrets and all. `check` prints it to whoever asks
      // (with the daemon's node options, should they be what fails).
      if (code !== 0) return fail(`the config loader exited with code ${code} (its output is not kept: lookout check -c ${source.file}, with the daemon's node options, shows why)`);
      settle(() => {
        try {
          resolve(answerOf(Buffer.concat(chunks), source.file));
        } catch (err) {
          reject(err as Error);
        }
      });
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
