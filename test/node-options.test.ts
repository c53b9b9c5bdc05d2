/**
 * NODE_OPTIONS read and written as node reads it (src/node-options.ts): node itself is the oracle — a value written
 * for some words, given to node as NODE_OPTIONS, sets `--title` to exactly the word, and reads back as the words.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { nodeOptionsValue, nodeOptionWords } from '../src/node-options.js';

/** The process title node sets from NODE_OPTIONS `value`. */
function titleOf(value: string): string {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(process.title)'], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: value }, timeout: 20_000 });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout;
}

describe('NODE_OPTIONS', () => {
  it.each(['plain', 'a b', 'say "hi"', 'back\\slash', 'both "a b" \\ c', 'tab\there'])('a word node reads back as written: %s', (title) => {
    const value = nodeOptionsValue(['--max-old-space-size=512', `--title=${title}`]);
    expect(titleOf(value)).toBe(title);
    expect(nodeOptionWords(value)).toEqual(['--max-old-space-size=512', `--title=${title}`]);
  });

  it('is split as node splits it: quotes anywhere in a word, escapes inside quotes, runs of spaces', () => {
    expect(nodeOptionWords('  --a=1   "--b=x y"  --c="p q"r "" ')).toEqual(['--a=1', '--b=x y', '--c=p qr']);
    expect(titleOf('--title="p q"r')).toBe('p qr');
    expect(nodeOptionWords('"--title=a \\"b\\""')).toEqual(['--title=a "b"']);
    expect(titleOf('"--title=a \\"b\\""')).toBe('a "b"');
    expect(nodeOptionWords(undefined)).toEqual([]);
  });
});
