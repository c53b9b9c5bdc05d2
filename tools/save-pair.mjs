// Paired A/B of a poll's save (B1/B2/B3): two builds in one process, each with its own store, their saves alternated
// A B B A … so the VM's slow moments hit both. Prints each side's median savePoll and the median of the per-pair ratios
// B/A — the figure to read on a noisy VM.
//
//   npm run build && cp -r dist /tmp/before   # then change the code and build again
//   node tools/save-pair.mjs /tmp/before dist 40           # markets: every value moved (store.save's poll)
//   POS=1 node tools/save-pair.mjs /tmp/before dist 20     # positions: the same readings again (most of a real poll)
//
// Each save gets its own copy of the poll's readings, made by JSON (outside the timing): fresh strings and objects,
// as a poll's parse makes them, and neither side finds the other's in the CPU's cache.
import { join, resolve } from 'node:path';
import { pairLine, pairRuns } from './pairing.mjs';

const [DA, DB] = [resolve(process.argv[2] ?? 'dist'), resolve(process.argv[3] ?? 'dist')];
const N = Number(process.argv[4] ?? 40);
const POS = process.env.POS === '1';

const { BenchContext, marketsPoll, positionsPoll } = await import(join(DA, 'bench/context.js'));
const ctx = new BenchContext({ quick: false, emit: () => {}, note: () => {} });
const base = await ctx.readings(POS ? positionsPoll : marketsPoll);
const at = Math.max(...base.map((r) => r.at));
const { shifted } = await import(join(DA, 'bench/store.js'));
const text = (k) => JSON.stringify(POS ? base : shifted(base, k * 30_000));

async function side(D, tag) {
  const { openStore } = await import(join(D, 'store/index.js'));
  const store = openStore(join(ctx.dir, `save-${tag}.db`));
  return { store, k: 0 };
}

function one(s) {
  const k = ++s.k;
  const readings = JSON.parse(text(k));
  const t0 = performance.now();
  s.store.readings.savePoll(POS ? 'positions' : 'markets', readings, at + k * 30_000);
  return performance.now() - t0;
}

const sides = [await side(DA, 'a'), await side(DB, 'b')];
for (let i = 0; i < 3; i++) for (const s of sides) one(s);
const pair = await pairRuns(N, (j) => one(sides[j]));
console.log(pairLine(POS ? 'positions' : 'markets', pair));
for (const s of sides) s.store.close();
await ctx.close();
