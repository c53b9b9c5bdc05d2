/**
 * Process entry of the config loader (./child-load.ts): reads a {@link ConfigSource} as JSON on stdin, loads it, and
 * writes a {@link LoadAnswer} on stdout with v8.serialize — the config, or its problems, or an unexpected error's message.
 */
import { serialize } from 'node:v8';
import { ConfigError } from '../errors.js';
import { loadConfigSource, type ConfigSource } from './load.js';
import type { LoadAnswer } from './child-load.js';

function answer(source: ConfigSource): LoadAnswer {
  try {
    return { config: loadConfigSource(source) };
  } catch (err) {
    return err instanceof ConfigError ? { problems: err.problems } : { error: err instanceof Error ? err.message : String(err) };
  }
}

const chunks: Buffer[] = [];
for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
process.stdout.write(serialize(answer(JSON.parse(Buffer.concat(chunks).toString('utf8')) as ConfigSource)));
