/**
 * `npm run bench`: lookout at the scale of SPEC §8 (10,000 markets, 50,000 positions) on this machine.
 * Every row is a median over repetitions with its spread, beside a bare baseline timed in the same run.
 *
 *   npm run bench                      every benchmark (about 3 minutes on 2 cores, plus 500 poll cycles of
 *                                      cycles: 30–40 minutes; leave them out with --only)
 *   npm run bench -- --quick           fewer repetitions over a fifth of the world (2,000 markets, 10,000 positions),
 *                                      smaller storm, cycles and latency runs (about a minute; CI runs it)
 *   npm run bench -- --only store      benchmarks whose name starts with `store` (comma-separate several)
 *   npm run bench -- --list            names and what each measures
 */
import { cpus } from 'node:os';
import { BenchContext, type Bench } from './context.js';
import { clientBenches } from './client.js';
import { storeBenches } from './store.js';
import { ruleBenches } from './rules.js';
import { metricsBenches } from './metrics.js';
import { e2eBenches } from './e2e.js';
import { cycleBenches } from './cycles.js';
import { stormBenches } from './storm.js';
import { latencyBenches } from './latency.js';
import { formatRow, header, type Row } from './stats.js';
import { parseArgs, select } from './args.js';
import { formatTargets, judgeTargets } from './targets.js';

/** Every benchmark, in the order they run. */
export const benches: Bench[] = [...clientBenches, ...storeBenches, ...ruleBenches, ...metricsBenches, ...e2eBenches, ...stormBenches, ...latencyBenches, ...cycleBenches];

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  if (args.list) {
    for (const b of benches) process.stdout.write(`${b.name.padEnd(24)} ${b.about}\n`);
    return;
  }
  const chosen = select(benches, args.only);
  const notes: string[] = [];
  const took: string[] = [];
  const write = (s: string) => process.stdout.write(s + '\n');
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  write(`lookout bench — node ${process.version}, ${cpus().length} × ${cpu}, ${args.quick ? 'quick' : 'full'} run, ${new Date().toISOString()}`);
  write('');
  write(header());
  const rows: Row[] = [];
  const ctx = new BenchContext({
    quick: args.quick,
    emit: (r: Row) => {
      rows.push(r);
      write(formatRow(r));
    },
    note: (t) => notes.push(t),
  });
  const started = performance.now();
  try {
    for (const b of chosen) {
      const t0 = performance.now();
      try {
        await b.run(ctx);
        took.push(`${b.name} ${((performance.now() - t0) / 1000).toFixed(0)} s`);
      } catch (err) {
        process.exitCode = 1;
        notes.push(`${b.name}: FAILED — ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      }
    }
  } finally {
    await ctx.close();
  }
  write('');
  for (const n of notes) write(n);
  write('');
  write(`Targets (issue B1–B12${args.quick ? `; a quick run: fewer repetitions over a fifth of the world (${ctx.markets.toLocaleString('en-US')} markets, ${ctx.positions.toLocaleString('en-US')} positions), its verdicts only indicative` : ''}):`);
  for (const line of formatTargets(judgeTargets(rows, ctx.figures))) write(line);
  write('');
  write(`time: ${took.join(', ')}; total ${((performance.now() - started) / 1000).toFixed(0)} s (setup included)`);
}

try {
  await main();
} catch (err) {
  // A bad command line or a broken setup: one line, not a stack.
  process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 2;
}
