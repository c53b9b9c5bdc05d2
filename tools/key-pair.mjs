// The shape key alone (src/store/shape-key.ts) of two builds over a real markets poll's and positions poll's readings,
// in rounds A B B A, each round on fresh copies (JSON) so every string is new as a poll's parse makes it. Prints the
// median ns a reading of each build, after four warm-up rounds.
//
//   node tools/key-pair.mjs BEFORE/dist dist
import { join, resolve } from 'node:path';
const [A, B] = process.argv.slice(2).map((d) => resolve(d));
const { BenchContext, marketsPoll, positionsPoll } = await import(join(A, 'bench/context.js'));
const ctx = new BenchContext({ quick: false, emit: () => {}, note: () => {} });
const sets = { markets: await ctx.readings(marketsPoll), positions: await ctx.readings(positionsPoll) };
await ctx.close();
const ka = (await import(join(A, 'store/shape-key.js'))).shapeKeyer();
const kb = (await import(join(B, 'store/shape-key.js'))).shapeKeyer();
// fresh strings each round, as a poll's parse makes them
const fresh = (rs) => JSON.parse(JSON.stringify(rs.map((r) => [r.labels, r.fields, r.unreadable ?? null])));
for (const [name, rs] of Object.entries(sets)) {
  const ra = [], rb = [];
  for (let round = 0; round < 16; round++) {
    for (const [k, out] of round % 4 === 0 || round % 4 === 3 ? [[ka, ra], [kb, rb]] : [[kb, rb], [ka, ra]]) {
      const data = fresh(rs);
      const t = performance.now();
      for (const [l, f, u] of data) k(l, f, u ?? undefined);
      out.push((performance.now() - t) * 1e6 / data.length);
    }
  }
  const med = (x) => x.slice(4).sort((a, b) => a - b)[(x.length - 4) >> 1];
  console.log(`${name} (${rs.length}): A ${med(ra).toFixed(0)} ns, B ${med(rb).toFixed(0)} ns a reading`);
}
