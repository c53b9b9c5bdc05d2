// Where the event loop is held during the real daemon's polls (B9): the daemon (startDaemon, the shipped rules) on the
// bench's simulator in this process, two untimed polls, then N polls of one kind with a timer every 2 ms noting each
// gap longer than GAP ms (default 30), a CPU profile placed in those gaps, and the collector's pauses. Prints, for the
// longest gaps, their length, the collector's pauses inside them, and the functions the samples in them were in
// (self time, and the innermost frame of lookout's own code on the stack).
//
// WARM=n: polls of that kind after the start-up ones before the measured ones (default 2; 0 measures the second poll).
// BARE=1: between the polls, the bench's bare markets request in this process (fetch, UTF-8 decode, JSON.parse), as
// the e2e bench runs it turn about with the polls; gaps that overlap a bare run are left out, as there.
//
//   node tools/block-prof.mjs dist 8 markets      # or positions
//   GAP=20 TOP=6 node tools/block-prof.mjs dist 8 markets
import { Session } from 'node:inspector/promises';
import { join, resolve } from 'node:path';
import { startLocalDaemon } from './local-daemon.mjs';
import { PerformanceObserver } from 'node:perf_hooks';
const dist = resolve(process.argv[2] ?? 'dist');
const N = Number(process.argv[3] ?? 8);
const POLL = process.argv[4] ?? 'markets';
const GAP = Number(process.env.GAP ?? 30);
const TOP = Number(process.env.TOP ?? 8);
const { daemon, sim, stop } = await startLocalDaemon(dist, { poll: POLL, prefix: 'blockprof-', warm: Number(process.env.WARM ?? 2) });
const BARE = process.env.BARE === '1';
const { bareMetricsText } = await import(join(dist, 'bench/sim.js'));
const bareRuns = [];

const s = new Session();
s.connect();
await s.post('Profiler.enable');
await s.post('Profiler.setSamplingInterval', { interval: 250 });
await s.post('Profiler.start');
// After the profiler's start (its own command holds the loop for ~70 ms).
// Monotonic µs, the profile's clock.
const nowUs = () => Number(process.hrtime.bigint() / 1000n);
const gaps = [];
let last = nowUs();
const timer = setInterval(() => {
  const t = nowUs();
  if (t - last > GAP * 1000) gaps.push({ from: last, to: t });
  last = t;
}, 2);
const pauses = [];
const obs = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) pauses.push({ at: Number(BigInt(Math.round((performance.timeOrigin + e.startTime) * 1000)) ), ms: e.duration, kind: e.detail?.kind ?? e.kind });
});
obs.observe({ entryTypes: ['gc'] });
const wallToMono = Number(process.hrtime.bigint() / 1000n) - Math.round((performance.timeOrigin + performance.now()) * 1000);

for (let i = 0; i < N; i++) {
  await daemon.pollNow(POLL);
  if (!BARE) continue;
  const from = nowUs();
  JSON.parse(await bareMetricsText(sim, 10000));
  bareRuns.push([from, nowUs()]);
}
clearInterval(timer);
obs.disconnect();
const { profile } = await s.post('Profiler.stop');

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n);
const name = (n) => `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.replace(/.*\/(dist|node_modules)\//, '$1/').replace(/^node:/, '')}:${n.callFrame.lineNumber + 1}`;
const ours = (n) => /\/dist\//.test(n.callFrame.url);
const innerOurs = (n) => {
  for (let x = n; x; x = parent.get(x.id)) if (ours(x)) return name(x);
  return '(none of ours)';
};
let t = profile.startTime;
const samples = profile.samples.map((id, k) => ({ node: byId.get(id), at: (t += profile.timeDeltas[k]) }));
// A gap that overlaps a bare run is the bare run's (BARE=1).
for (let k = gaps.length - 1; k >= 0; k--) if (bareRuns.some(([x, y]) => gaps[k].from < y && gaps[k].to > x)) gaps.splice(k, 1);
gaps.sort((a, b) => b.to - b.from - (a.to - a.from));
console.log(`${POLL}: ${N} polls, ${gaps.length} gaps over ${GAP} ms; longest ${gaps.slice(0, 10).map((g) => ((g.to - g.from) / 1000).toFixed(0)).join(', ')} ms`);
const top = (m, k) => [...m].sort((a, b) => b[1] - a[1]).slice(0, k).map(([f, us]) => `${(us / 1000).toFixed(1)} ${f}`).join('\n      ');
for (const g of gaps.slice(0, TOP)) {
  const self = new Map();
  const mine = new Map();
  let prev = g.from;
  for (const smp of samples) {
    if (smp.at <= g.from || smp.at > g.to) continue;
    const dt = smp.at - prev;
    prev = smp.at;
    self.set(name(smp.node), (self.get(name(smp.node)) ?? 0) + dt);
    const o = innerOurs(smp.node);
    mine.set(o, (mine.get(o) ?? 0) + dt);
  }
  const gc = pauses.filter((p) => p.at + wallToMono >= g.from && p.at + wallToMono <= g.to);
  console.log(`\n${((g.to - g.from) / 1000).toFixed(0)} ms gap; gc inside: ${gc.map((p) => `${p.ms.toFixed(0)} ms (kind ${p.kind})`).join(', ') || 'none'}`);
  console.log(`  self:\n      ${top(self, 6)}`);
  console.log(`  ours:\n      ${top(mine, 6)}`);
}
await stop();
process.exit(0);
