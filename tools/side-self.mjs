// Self time by build in one CPU profile of a paired run (tools/save-pair.mjs or engine-pair.mjs with PROF=file): each
// JS function's self time charged to the build whose dist its file is in. Native frames are charged to neither (NATIVE=1:
// to their nearest JS caller), and so is the statement guard (store/gate.js), which both builds' modules install on one
// shared better-sqlite3 prototype; the collector cannot be split. One build against a copy of itself gave 0.976–1.030.
//
//   PROF=/tmp/p.cpuprofile node tools/save-pair.mjs /tmp/before dist 16 && node tools/side-self.mjs /tmp/p.cpuprofile /tmp/before dist
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
const [file, A, B] = process.argv.slice(2);
const p = JSON.parse(readFileSync(file));
const roots = [resolve(A), resolve(B)];
const self = new Map();
for (let i = 0; i < p.samples.length; i++) self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0) / 1000);
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map(); for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
// a native/builtin frame (no url) is charged to the nearest ancestor with a url
const sideOf = (id) => { for (let c = id; c !== undefined; c = parent.get(c)) { const u = byId.get(c).callFrame.url; if (!u) continue; const k = roots.findIndex((r) => u.includes(r + '/')); if (k >= 0) return k; } return -1; };
const tot = [0, 0]; const fns = [new Map(), new Map()]; let gc = 0;
for (const n of p.nodes) {
  const t = self.get(n.id) ?? 0; if (!t) continue;
  if (n.callFrame.functionName === '(garbage collector)') { gc += t; continue; }
  if (!n.callFrame.url && !process.env.NATIVE) continue; // natives: charged to neither (NATIVE=1: to the nearest JS caller)
  if (n.callFrame.url.endsWith('/store/gate.js')) continue; // both builds' guards wrap one shared prototype: not either's own
  const k = sideOf(n.id); if (k < 0) continue;
  tot[k] += t;
  const name = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').slice(-2).join('/')}`;
  fns[k].set(name, (fns[k].get(name) ?? 0) + t);
}
console.log(`A ${tot[0].toFixed(0)} ms, B ${tot[1].toFixed(0)} ms, B/A ${(tot[1] / tot[0]).toFixed(3)} (GC, not split: ${gc.toFixed(0)} ms)`);
for (const k of [0, 1]) console.log(k ? 'B' : 'A', [...fns[k]].sort((a, b) => b[1] - a[1]).slice(0, 12).map(([n, t]) => `${n} ${t.toFixed(0)}`).join(' | '));
