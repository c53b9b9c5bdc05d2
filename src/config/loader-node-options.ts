/**
 * The node options a config loader process (./child-load.ts) is given: the daemon's own, from its command line
 * (`execArgv`) and NODE_OPTIONS, less those that must not run twice or that would keep a loader alive:
 *
 * - preloads (`--require`/`-r`, `--import`, `--loader`, `--experimental-loader`): an APM agent keeps a handle open, and
 *   would report a second service besides;
 * - profilers (`--cpu-prof`, `--heap-prof`, `--prof` and their `-dir`/`-name`/`-interval`): a file each reload;
 * - the inspector (`--inspect*`, `--debug*`): a second process must not take the debugger's port, nor wait for one;
 * - what runs something else than the loader's entry (`-e`/`--eval`, `-p`/`--print`, `--input-type`, `-c`/`--check`,
 *   `-i`, `--test*`, `--watch*`, `--snapshot-blob`, `--build-snapshot`).
 *
 * The rest (heap sizes, V8 flags, `--conditions`, `--env-file`, …) applies to the loader as to the daemon; what V8
 * traces to stdout (`--trace-gc`) does not reach the answer, which comes on a pipe of its own (./child-load.ts).
 */
import { nodeOptionsValue, nodeOptionWords } from '../node-options.js';

const DROPPED =
  /^(--(inspect|debug|cpu-prof|heap-prof|prof|require|import|loader|experimental-loader|eval|print|input-type|check|interactive|test|watch|snapshot-blob|build-snapshot)(-|$)|-[repci]$)/;
/** Those of {@link DROPPED} that take their value as the next word when written without `=`. */
const TAKES_VALUE = new Set([
  '-r',
  '--require',
  '--import',
  '--loader',
  '--experimental-loader',
  '--inspect-port',
  '--debug-port',
  '--inspect-publish-uid',
  '--cpu-prof-dir',
  '--cpu-prof-name',
  '--cpu-prof-interval',
  '--heap-prof-dir',
  '--heap-prof-name',
  '--heap-prof-interval',
  '--prof-sampling-interval',
  '-e',
  '--eval',
  '-p',
  '--print',
  '--input-type',
  '--watch-path',
  '--snapshot-blob',
  '--test-name-pattern',
  '--test-skip-pattern',
  '--test-reporter',
  '--test-reporter-destination',
  '--test-shard',
  '--test-concurrency',
  '--test-timeout',
]);

/** `args` (node options) without the preloads, profilers, inspector and other entries, nor their separate values. */
export function loaderNodeArgs(args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    // Node takes `_` for `-` in V8's flags (`--prof`), and so in a name compared here.
    const name = arg.split('=')[0]!.replace(/_/g, '-');
    if (!DROPPED.test(name)) out.push(arg);
    else if (!arg.includes('=') && TAKES_VALUE.has(name)) i++;
  }
  return out;
}

/** The environment, with NODE_OPTIONS rid of what {@link loaderNodeArgs} drops (rewritten only when it holds one). */
export function loaderEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const words = nodeOptionWords(env.NODE_OPTIONS);
  const kept = loaderNodeArgs(words);
  return kept.length === words.length ? env : { ...env, NODE_OPTIONS: nodeOptionsValue(kept) };
}
