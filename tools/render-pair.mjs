// usage: node tools/render-pair.mjs DIST_A DIST_B [ROUNDS] — the market families' render (10,000 markets, 7 families) of two builds, ABBA, values moved every round
import { join, resolve } from 'node:path';
import { pairLine, pairRuns } from './pairing.mjs';
const [A, B] = process.argv.slice(2, 4).map((d) => resolve(d));
const R = Number(process.argv[4] ?? 40);
const sides = [];
for (const D of [A, B]) {
  const { MarketTable } = await import(join(D, 'metrics/market-table.js'));
  const { runSync } = await import(join(D, 'yielding.js'));
  const { Registry } = await import('prom-client');
  sides.push({ table: new MarketTable([new Registry()]), runSync });
}
let seed = 7; const rnd = () => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed / 0x80000000; };
const rows = (k) => Array.from({ length: 10000 }, (_, i) => ({
  labels: { market_id: `morpho-base-0x${(i * 2654435761 >>> 0).toString(16).padStart(8, '0')}${'ab'.repeat(16)}`, chain: ['base', 'mainnet', 'arbitrum'][i % 3], loan_asset: 'USDC', collateral_asset: 'WETH' },
  values: [Math.round(rnd() * 1e6) / 1e6, Math.round(rnd() * 1e8) / 1e8, Math.round(rnd() * 1e8) / 1e8, Math.round(rnd() * 600), rnd() * 3000, Math.round(rnd() * 1e10) / 100, Math.round(rnd() * 1e10) / 100],
}));
const one = (s, k, rs = rows(k)) => { s.table.replace('markets', rs); const t = performance.now(); s.runSync(s.table.render()); return performance.now() - t; };
for (let i = 0; i < 4; i++) for (const s of sides) one(s, i);
let rs;
const pair = await pairRuns(R, (j, i) => {
  if (j === (i % 2 === 0 ? 0 : 1)) rs = rows(i); // each round's first side makes its rows; both render the same
  return one(sides[j], i, rs);
});
console.log(pairLine('render', pair));
// same bytes?
const b0 = sides[0].table.families.map((f) => f.body().toString()).join('\n'), b1 = sides[1].table.families.map((f) => f.body().toString()).join('\n');
console.log(`the two builds' families ${b0 === b1 ? 'byte for byte the same' : 'DIFFER'} after the last round (${b0.length} bytes)`);
if (b0 !== b1) process.exitCode = 1;
