// The real daemon's poll, two builds paired (B1/B2): each build's daemon in a child process of its own (its own heap,
// as deployed), both on one simulator, their polls taken turn about A B, B A, … so the VM's slow moments hit both. Prints
// each side's median poll (as the child timed it) and the median of the per-pair ratios B/A, the figure to read on a
// noisy VM. Both builds must resolve `rules/` (the starter rules) beside their `dist`: a copy outside the checkout
// needs a link to it (`ln -s "$PWD/rules" /tmp/rules` for /tmp/before/dist).
//
//   npm run build && cp -r dist /tmp/before   # then change the code and build again
//   node tools/poll-pair.mjs /tmp/before dist markets 16
//   node tools/poll-pair.mjs /tmp/before dist positions 8
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { median } from './pairing.mjs';

const [DA, DB] = [resolve(process.argv[2] ?? 'dist'), resolve(process.argv[3] ?? 'dist')];
const POLL = process.argv[4] ?? 'markets';
const ROUNDS = Number(process.argv[5] ?? 16);

const { startChildSimulator } = await import(join(DA, 'bench/sim.js'));
const sim = await startChildSimulator({ markets: 10_000, positions: 50_000 });
const dir = mkdtempSync(join(tmpdir(), 'poll-pair-'));
const daemons = [];
try {
  for (const [i, d] of [DA, DB].entries()) {
    const { benchConfigYaml } = await import(join(d, 'bench/config.js'));
    const { startDaemonChild } = await import(join(d, 'bench/daemon-proc.js'));
    const yaml = benchConfigYaml({ baseUrl: sim.url, catalogUrl: sim.catalogUrl, apiKey: sim.apiKey, dbPath: join(dir, `${i}.db`), rules: 'starter', polls: ['markets', 'positions', 'benchmarks'] });
    daemons.push(await startDaemonChild(yaml));
  }
  // The scheduler's start-up runs, then two untimed polls of the kind each.
  for (const d of daemons) for (const p of ['markets', 'positions', 'benchmarks']) await d.poll(p);
  for (const d of daemons) for (let i = 0; i < 2; i++) await d.poll(POLL);
  const ts = [[], []];
  const ratios = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t = [0, 0];
    for (const j of r % 2 === 0 ? [0, 1] : [1, 0]) t[j] = (await daemons[j].poll(POLL)).ms;
    ts[0].push(t[0]);
    ts[1].push(t[1]);
    ratios.push(t[1] / t[0]);
  }
  console.log(`${POLL}: A median ${median(ts[0]).toFixed(0)} ms, B median ${median(ts[1]).toFixed(0)} ms, paired B/A median ${median(ratios).toFixed(3)} (${ROUNDS} pairs)`);
} finally {
  for (const d of daemons) await d.stop();
  await sim.stop?.();
  rmSync(dir, { recursive: true, force: true });
}
