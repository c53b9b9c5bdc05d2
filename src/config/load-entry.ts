/**
 * Process entry of the config loader (./child-load.ts): reads a {@link ConfigSource} as JSON on stdin, loads it, and
 * writes a {@link LoadAnswer} on fd 3 (a pipe of its own: stdout may carry what V8 traces) with v8.serialize — the
 * config, or its problems, or an unexpected error's message.
 * It exits once the answer is written (0, or 1 if it could not be): a preload the daemon's options hold despite
 * child-load (a handle an agent keeps open) must not keep it alive. Its first argument is its own deadline, ms
 * (default 60 s): past it, it exits 3, so a loader whose daemon died without killing it does not wait for ever on a
 * request that never ends (a load stuck in a synchronous read, of a FIFO say, is not cut short: only a kill ends that).
 */
import { createWriteStream } from 'node:fs';
import { serialize } from 'node:v8';
import { ConfigError } from '../errors.js';
import { loadConfigSource, type ConfigSource } from './load.js';
import type { LoadAnswer } from './child-load.js';

const deadlineMs = Number(process.argv[2]) > 0 ? Number(process.argv[2]) : 60_000;
setTimeout(() => process.exit(3), deadlineMs).unref();

function answer(source: ConfigSource): LoadAnswer {
  try {
    return { config: loadConfigSource(source) };
  } catch (err) {
    return err instanceof ConfigError ? { problems: err.problems } : { error: err instanceof Error ? err.message : String(err) };
  }
}

const chunks: Buffer[] = [];
for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
const out = createWriteStream('', { fd: 3 });
out.on('error', () => process.exit(1));
out.end(serialize(answer(JSON.parse(Buffer.concat(chunks).toString('utf8')) as ConfigSource)), () => process.exit(0));
