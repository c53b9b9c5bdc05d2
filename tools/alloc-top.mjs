// What an allocation profile (tools/poll-prof.mjs with ALLOC=1) says was allocated, by function: its own allocations
// (self) and with what it called (inclusive), MB divided by `per` (the polls profiled, to read MB a poll).
//
//   node tools/alloc-top.mjs /tmp/alloc.heapprofile 4 [30]
import { readFileSync } from 'node:fs';

const p = JSON.parse(readFileSync(process.argv[2] ?? '/tmp/alloc.heapprofile', 'utf8'));
const per = Number(process.argv[3] ?? 1);
const top = Number(process.argv[4] ?? 30);
const self = new Map();
const inclusive = new Map();
let total = 0;
const key = (n) => `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber + 1}`;
function walk(n, above) {
  const k = key(n);
  total += n.selfSize;
  self.set(k, (self.get(k) ?? 0) + n.selfSize);
  const chain = new Set(above).add(k);
  for (const a of chain) inclusive.set(a, (inclusive.get(a) ?? 0) + n.selfSize);
  for (const c of n.children) walk(c, chain);
}
walk(p.head, new Set());
const show = (m, title) => {
  console.log(`-- ${title} (MB, total ${(total / 1e6 / per).toFixed(1)})`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log((v / 1e6 / per).toFixed(2).padStart(8), k);
};
show(self, 'self');
show(inclusive, 'inclusive');
