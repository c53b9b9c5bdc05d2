// The paired loop the *-pair tools share: two sides' runs alternated A B, B A, … so the VM's slow moments hit both, and
// the median of the per-pair ratios B/A — the figure to read on a noisy VM, where one build's median moves ±30% from
// run to run. `run(side, i)` times one run of `side` (0 or 1) in round i and returns its milliseconds.
//
// PROF=file: a CPU profile of the timed rounds (both sides) into `file` (tools/side-self.mjs reads it).
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

export const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];

/** Runs `rounds` pairs; resolves to each side's times and the per-pair ratios B/A. */
export async function pairRuns(rounds, run) {
  const session = process.env.PROF ? new Session() : undefined;
  if (session) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
  }
  const ts = [[], []];
  const ratios = [];
  for (let i = 0; i < rounds; i++) {
    const t = [0, 0];
    for (const j of i % 2 === 0 ? [0, 1] : [1, 0]) t[j] = run(j, i);
    ts[0].push(t[0]);
    ts[1].push(t[1]);
    ratios.push(t[1] / t[0]);
  }
  if (session) writeFileSync(process.env.PROF, JSON.stringify((await session.post('Profiler.stop')).profile));
  return { ts, ratios };
}

/** One line: each side's median and the median of the ratios. */
export const pairLine = (what, { ts, ratios }) =>
  `${what}: A median ${median(ts[0]).toFixed(1)} ms, B median ${median(ts[1]).toFixed(1)} ms, paired B/A median ${median(ratios).toFixed(3)}`;
