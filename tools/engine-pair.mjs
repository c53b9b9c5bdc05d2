// Paired A/B of the alert engine (B4): two builds in one process, each with its own store of the same fixture, their
// polls alternated A B B A … so the VM's slow moments hit both. Prints each side's median applyPoll and the median of
// the per-pair ratios B/A — the figure to read on a noisy VM, where a build's median moves ±30% from run to run.
//
//   npm run build && cp -r dist /tmp/before   # then change the code and build again
//   node tools/engine-pair.mjs /tmp/before dist 60 incident      # or calm; POS=1 for the positions poll;
//                                                                # RULES=starter for the shipped rules (src/bench/config.ts)
//
// The polls are rules.seven(.incident) / rules.positions(.incident)'s (src/bench/rules.ts, from this checkout's dist): each side gets its own copy
// of every poll's readings, so neither finds the other's in the CPU's cache. Each side is set up here from modules every
// build since schema 14 has (openStore, AlertEngine, loadBenchConfig), not from the bench's fixture: a side may be an
// older build, and each needs a store of its own.
import { join, resolve } from 'node:path';
import { pairLine, pairRuns } from './pairing.mjs';

const [DA, DB] = [resolve(process.argv[2] ?? 'dist'), resolve(process.argv[3] ?? 'dist')];
const N = Number(process.argv[4] ?? 60);
const scen = process.argv[5] ?? 'incident';
const POS = process.env.POS === '1';

const { BenchContext, marketsPoll, positionsPoll } = await import(join(DA, 'bench/context.js'));
const ctx = new BenchContext({ quick: false, emit: () => {}, note: () => {} });
const current = await ctx.readings(marketsPoll);
const positions = await ctx.readings(positionsPoll);
const at = Math.max(...current.map((r) => r.at));

// The bench's own polls (src/bench/rules.ts), from this checkout's build (either side may be older than them).
const { marketsIncident, positionsIncident, pollAt: benchPollAt } = await import(new URL('../dist/bench/rules.js', import.meta.url).href);
const incident = scen === 'incident' ? (POS ? positionsIncident : marketsIncident) : undefined;
const pollAt = (base, k) => benchPollAt(base, k, incident);

async function side(D, tag) {
  const { shifted } = await import(join(D, 'bench/store.js'));
  const { loadBenchConfig } = await import(join(D, 'bench/config.js'));
  const { openStore } = await import(join(D, 'store/index.js'));
  const { AlertEngine } = await import(join(D, 'alerts/engine.js'));
  const { systemClock } = await import(join(D, 'clock.js'));
  const { silentLogger } = await import(join(D, 'log.js'));
  const store = openStore(join(ctx.dir, `pair-${tag}.db`));
  for (const ago of [65 * 60_000, 35 * 60_000]) store.readings.savePoll('markets', shifted(current, -ago), at - ago);
  store.readings.savePoll('markets', current, at);
  store.readings.savePoll('positions', positions, at);
  const cfg = loadBenchConfig({ baseUrl: 'http://127.0.0.1:9', catalogUrl: 'http://127.0.0.1:9', apiKey: 'k', dbPath: store.path, rules: process.env.RULES ?? 'seven' });
  const engine = new AlertEngine({ store, rules: cfg.rules.map((r) => r.rule), alerting: cfg.alerting, sourceDown: cfg.source_down, watchdog: cfg.watchdog, clock: systemClock, log: silentLogger });
  return { store, engine, k: 0 };
}

function one(s) {
  const k = ++s.k;
  const readings = pollAt(POS ? positions : current, k);
  const o = { poll: POS ? 'positions' : 'markets', kind: POS ? 'positions' : 'metrics', ok: true, readings, rejected: [], started_at: at + k * 1000, finished_at: at + k * 1000 };
  const t0 = performance.now();
  s.store.transaction(() => s.engine.applyPoll(o, at + k * 1000));
  return performance.now() - t0;
}

const sides = [await side(DA, 'a'), await side(DB, 'b')];
for (let i = 0; i < 4; i++) for (const s of sides) one(s);
const pair = await pairRuns(N, (j) => one(sides[j]));
console.log(pairLine(`${scen}${POS ? ' positions' : ''}`, pair));
for (const s of sides) s.store.close();
await ctx.close();
