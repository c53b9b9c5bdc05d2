// A CPU profile of the real daemon's polls alone: the daemon (startDaemon, the shipped rules) on the bench's simulator in
// this process, two untimed polls, then N polls of one kind under the inspector, written to /tmp/mkt.cpuprofile, with
// their wall-clock median and the runner's evaluation time. For where a poll's CPU goes (B1/B2), without the bench's
// bare baselines in the profile.
//
// ALLOC=1: a sampling allocation profile instead (every object allocated, those collected since included), written to
// /tmp/alloc.heapprofile; `node tools/alloc-top.mjs /tmp/alloc.heapprofile 4` shows MB a poll by function (divide by N).
//
//   node tools/poll-prof.mjs dist 12 markets      # or positions (4 is enough: each is ~3 s)
//   ALLOC=1 node tools/poll-prof.mjs dist 4 markets
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { startLocalDaemon } from './local-daemon.mjs';
const dist = resolve(process.argv[2] ?? 'dist');
const N = Number(process.argv[3] ?? 12);
const POLL = process.argv[4] ?? 'markets';
const lines = [];
const { daemon, stop } = await startLocalDaemon(dist, { poll: POLL, prefix: 'mktprof-', level: 'info', onLine: (l) => { const o = JSON.parse(l); if (o.msg === 'poll') lines.push(o); } });
const s = new Session(); s.connect();
const ALLOC = process.env.ALLOC === '1';
if (ALLOC) await s.post('HeapProfiler.enable');
else {
  await s.post('Profiler.enable');
  await s.post('Profiler.setSamplingInterval', { interval: 200 });
}
const walls = [];
if (ALLOC) await s.post('HeapProfiler.startSampling', { samplingInterval: 16384, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
else await s.post('Profiler.start');
for (let i = 0; i < N; i++) { const t = performance.now(); await daemon.pollNow(POLL); walls.push(performance.now() - t); }
if (ALLOC) writeFileSync('/tmp/alloc.heapprofile', JSON.stringify((await s.post('HeapProfiler.stopSampling')).profile));
else writeFileSync('/tmp/mkt.cpuprofile', JSON.stringify((await s.post('Profiler.stop')).profile));
walls.sort((a, b) => a - b);
const pl = lines.filter((l) => l.poll === POLL).slice(-N).map((l) => l.eval_ms).sort((a, b) => a - b);
console.log(`${POLL} wall median ${walls[N >> 1].toFixed(0)} ms (min ${walls[0].toFixed(0)}), eval median ${pl[N >> 1]}`);
await stop();
process.exit(0);
