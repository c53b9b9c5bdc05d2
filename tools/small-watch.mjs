// Where the memory of the daemon watching 200 markets is (B6s): the bench's e2e.small watch (watchSmall in
// src/bench/e2e.ts: the daemon child on the bench's simulator, 200 markets, 1,000 positions, the starter rules, the
// default limit), 20 markets polls with a positions poll every fifth, RSS sampled after each. Prints, at the last
// sample, the mapped files, the private memory and V8's heap spaces, then the RSS median / min / max; SMAPS=1 adds the
// largest mappings by resident size, and BINARY=1 the node binary's resident pages by symbol (/proc/<pid>/pagemap read
// against `nm` of the binary: needs root and a binary with symbols), to compare with a bare Node's (`BINARY=bare`).
//
//   node tools/small-watch.mjs dist                 # three runs: for i in 1 2 3; do …; done (RSS moves by ±3 MB)
//   DARGS="--max-semi-space-size=1" node tools/small-watch.mjs dist    # node flags for the daemon child
//   GC=1 DARGS=--expose-gc node tools/small-watch.mjs dist             # the last sample after a full collection
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const dist = resolve(process.argv[2] ?? 'dist');
const load = (p) => import(pathToFileURL(join(dist, p)).href);

/** Resident kB of `pid`'s mappings, by name and permissions, largest first. */
function mappings(pid) {
  const by = new Map();
  let name = '';
  for (const l of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const m = /^[0-9a-f]+-[0-9a-f]+ (\S+) \S+ \S+ \S+\s*(.*)$/.exec(l);
    if (m) name = `${m[2] || '[anon]'} ${m[1]}`;
    const r = /^Rss:\s+(\d+) kB/.exec(l);
    if (r) by.set(name, (by.get(name) ?? 0) + Number(r[1]));
  }
  return [...by].sort((a, b) => b[1] - a[1]);
}

/** The node binary's resident pages of `pid`, kB by symbol group (the nearest symbol below each page). */
function binaryPages(pid) {
  const bin = execFileSync('readlink', ['-f', `/proc/${pid}/exe`]).toString().trim();
  const syms = execFileSync('nm', ['-n', '-C', '--defined-only', bin], { maxBuffer: 1 << 30 })
    .toString()
    .split('\n')
    .map((l) => /^([0-9a-f]+) [tTrRdDbB] (.*)$/.exec(l))
    .filter(Boolean)
    .map((m) => [parseInt(m[1], 16), m[2]]);
  const groupOf = (s) => {
    if (s.startsWith('icudt')) return 'ICU data';
    if (s.startsWith('Builtins_')) return 'V8 builtins';
    const m = /^(v8::internal::\w+|v8::\w+|node::\w+|icu_\d+|std::\w+|\w+)/.exec(s);
    return m ? m[1].replace(/^icu_\d+$/, 'ICU') : s.slice(0, 30);
  };
  const kb = new Map();
  const maps = readFileSync(`/proc/${pid}/maps`, 'utf8').split('\n').filter((l) => l.endsWith(bin));
  const pagemap = openSync(`/proc/${pid}/pagemap`, 'r');
  for (const l of maps) {
    const [range, perm] = l.split(/\s+/);
    const [s, e] = range.split('-').map((x) => parseInt(x, 16));
    const f = Buffer.alloc(((e - s) / 4096) * 8);
    readSync(pagemap, f, 0, f.length, (s / 4096) * 8);
    let j = 0;
    for (let i = 0; i < f.length; i += 8) {
      if ((f.readBigUInt64LE(i) >> 63n) & 1n) {
        const a = s + (i / 8) * 4096;
        while (j + 1 < syms.length && syms[j + 1][0] <= a) j++;
        const key = `${perm} ${groupOf(syms[j]?.[1] ?? '?')}`;
        kb.set(key, (kb.get(key) ?? 0) + 4);
      }
    }
  }
  closeSync(pagemap);
  return [...kb].sort((a, b) => b[1] - a[1]);
}

const print = (rows, n) => rows.slice(0, n).forEach(([k, v]) => console.log(`${String(v).padStart(8)} kB  ${k}`));

if (process.env.BINARY === 'bare') {
  // A Node that has run nothing, for the comparison.
  const bare = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 500));
  print(binaryPages(bare.pid), 30);
  bare.kill();
  process.exit(0);
}

const { watchSmall } = await load('bench/e2e.js');
const dir = mkdtempSync(join(tmpdir(), 'small-watch-'));
const execArgv = (process.env.DARGS ?? '').split(' ').filter(Boolean);
try {
  // The bench's own watch (src/bench/e2e.ts), with a look at the child before it stops.
  const { rss } = await watchSmall({
    dir,
    rounds: 20,
    ...(execArgv.length ? { execArgv } : {}),
    atEnd: async (d) => {
      const m = await d.memory({ detail: true, gc: process.env.GC === '1' });
      const f = (v) => v.toFixed(1);
      console.log(`at the last sample: mapped files ${f(m.fileMb)}, private ${f(m.anonMb)}`);
      console.log(`V8: ${Object.entries(m.spaces).filter(([, s]) => s.sizeMb >= 0.05).map(([k, s]) => `${k} ${f(s.sizeMb)} (${f(s.usedMb)} used)`).join(', ')}`);
      if (process.env.SMAPS) print(mappings(d.pid), 14);
      if (process.env.BINARY) print(binaryPages(d.pid), 30);
    },
  });
  const sorted = [...rss].sort((a, b) => a - b);
  const f = (v) => v.toFixed(1);
  console.log(`RSS median ${f(sorted[Math.floor(sorted.length / 2)])} MB (${f(sorted[0])}–${f(sorted.at(-1))})`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
