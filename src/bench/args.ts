/** The bench's command line: `--quick`, `--list`, `--only NAME[,NAME]`. */
import type { Bench } from './context.js';

/** Parsed command line of the bench. */
export interface BenchArgs {
  quick: boolean;
  list: boolean;
  only: string[];
}

/** Parses `--quick`, `--list`, `--only a,b` (also `--only=a`); throws on anything else. */
export function parseArgs(argv: readonly string[]): BenchArgs {
  const args: BenchArgs = { quick: false, list: false, only: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--quick') args.quick = true;
    else if (a === '--list') args.list = true;
    else if (a === '--only' || a.startsWith('--only=')) {
      const v = a === '--only' ? argv[++i] : a.slice('--only='.length);
      if (!v) throw new Error('--only needs a benchmark name (see --list)');
      args.only.push(...v.split(',').filter(Boolean));
    } else throw new Error(`unknown argument ${a} (use --quick, --only NAME, --list)`);
  }
  return args;
}

/** The benchmarks `only` selects: a name or a prefix of names (`store` → store.save, store.replay). */
export function select(all: readonly Bench[], only: readonly string[]): Bench[] {
  if (only.length === 0) return [...all];
  const picked = all.filter((b) => only.some((o) => b.name === o || b.name.startsWith(o + '.') || b.name.startsWith(o)));
  const unknown = only.filter((o) => !all.some((b) => b.name === o || b.name.startsWith(o)));
  if (unknown.length) throw new Error(`no benchmark named ${unknown.join(', ')}; known: ${all.map((b) => b.name).join(', ')}`);
  return picked;
}
