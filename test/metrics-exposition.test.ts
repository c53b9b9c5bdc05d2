import { once } from 'node:events';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../src/metrics/index.js';
import { MarketFamily, MarketTable, type MarketRow } from '../src/metrics/market-table.js';
import { NOW, market, position, samples } from './metrics-fixtures.js';
import { mulberry32 } from '../src/simulator/random.js';
import { startFakeDaemon } from './http-fixtures.js';
import { outputWaiting, runSync } from '../src/yielding.js';

/** A market row with the same value in every family. */
const row = (id: string, value: number): MarketRow => ({
  labels: { market_id: id, chain: 'ethereum', loan_asset: 'USDC', collateral_asset: 'WETH' },
  values: Array.from({ length: 7 }, () => value),
});

const utilization = (m: ReturnType<typeof createMetrics>) => m.registry.getMetricsAsArray().find((f) => f instanceof MarketFamily) as unknown as MarketFamily;

describe("the market families' kept bytes", () => {
  it('are kept from one scrape to the next, and replaced when a poll changes the markets', async () => {
    const m = createMetrics({ processMetrics: false });
    m.setReadings('markets', [market('m1', { utilization: 0.5 })], NOW);
    const kept = utilization(m).body();
    expect(utilization(m).body()).toBe(kept);
    m.setReadings('markets', [market('m1', { utilization: 0.6 })], NOW);
    expect(utilization(m).body()).not.toBe(kept);
    expect(samples(await m.scrape(), 'lookout_market_utilization_ratio').map((s) => s.value)).toEqual([0.6]);
  });

  it('stay as they are after a poll without markets (no 12 MB render for a positions poll), and go when the markets leave', async () => {
    const m = createMetrics({ processMetrics: false });
    m.setReadings('markets', [market('m1')], NOW);
    const kept = utilization(m).body();
    m.setReadings('positions', [position('p1', 'ethereum', 'aave', true, 10)], NOW);
    expect(utilization(m).body()).toBe(kept);
    m.setReadings('markets', [], NOW);
    expect(samples(await m.scrape(), 'lookout_market_utilization_ratio')).toEqual([]);
  });

  it("show a market two polls report with the last poll's values, and the other poll's when that one leaves", () => {
    const table = new MarketTable([]);
    const values = () =>
      [...table.families[0]!.body().toString('utf8').matchAll(/market_id="(\w+)".* (\S+)$/gm)].map((m) => `${m[1]}=${m[2]}`);
    table.replace('a', [row('m0', 1), row('m1', 1)]);
    table.replace('b', [row('m0', 2)]);
    expect(values()).toEqual(['m0=2', 'm1=1']);
    table.replace('a', [row('m0', 3), row('m1', 3)]);
    table.replace('b', [row('m0', 4)]);
    table.replace('b', []);
    expect(values()).toEqual(['m0=3', 'm1=3']);
    table.replace('b', [row('m0', 5)]);
    table.replace('a', [row('m1', 6)]);
    expect(values()).toEqual(['m0=5', 'm1=6']);
    table.forget('b');
    expect(values()).toEqual(['m1=6']);
    expect(table.size).toBe(1);
  });

  it('are not kept from a render the table changed under (a poll landing while another poll renders)', () => {
    const table = new MarketTable([]);
    table.replace('a', Array.from({ length: 1000 }, (_, i) => row(`m${i}`, 1)));
    const family = table.families[0]!;
    const steps = family.render();
    // Well into the render: m0's value has been read.
    for (let i = 0; i < 5; i++) expect(steps.next().done).toBe(false);
    table.replace('b', [row('m0', 2)]);
    while (!steps.next().done);
    expect(family.body().toString('utf8')).toContain('lookout_market_utilization_ratio{market_id="m0",chain="ethereum",loan_asset="USDC",collateral_asset="WETH"} 2\n');
  });
});

describe("the market families' bytes, written again in place", () => {
  const rows = (n: number, v: number) => Array.from({ length: n }, (_, i) => row(`m${i}`, v));

  it("write the next render into the last one's bytes unless a reader holds them, and keep a lent body as it was", () => {
    const table = new MarketTable([]);
    const family = table.families[0]!;
    table.replace('a', rows(200, 1)); // ~20 KB a family: a buffer of its own, not a slice of node's pool
    const first = family.body();
    table.replace('a', rows(200, 2));
    const second = family.body();
    // No new buffer a family and poll (12 MB of ArrayBuffers a markets poll at SPEC §8, B6).
    expect(second.buffer).toBe(first.buffer);
    expect(second.toString('utf8')).toContain('} 2\n');
    const lent = family.lend();
    const text = lent.body.toString('utf8');
    table.replace('a', rows(200, 3));
    const third = family.body();
    expect(third.buffer).not.toBe(lent.body.buffer);
    expect(lent.body.toString('utf8')).toBe(text);
    lent.release();
    lent.release(); // a second release is nothing
    table.replace('a', rows(200, 4));
    expect(family.body().buffer).toBe(third.buffer);
    // A body lent twice is free once both are released.
    const [x, y] = [family.lend(), family.lend()];
    x.release();
    table.replace('a', rows(200, 5));
    expect(family.body().buffer).not.toBe(y.body.buffer);
    expect(y.body.toString('utf8')).toContain('} 4\n');
    y.release();
    // Most markets gone: a smaller buffer, the large one let go.
    const large = family.body().buffer;
    table.replace('a', rows(20, 6));
    expect(family.body().buffer).not.toBe(large);
    expect(family.body().toString('utf8').match(/\} 6$/gm)).toHaveLength(20);
  });

  it("give a render that comes between another's slices (a scrape during a poll's render) bytes of its own", () => {
    const table = new MarketTable([]);
    const family = table.families[0]!;
    table.replace('a', rows(1000, 1));
    family.body();
    table.replace('a', rows(1000, 2));
    const steps = family.render(); // writes into the last render's bytes
    for (let i = 0; i < 5; i++) expect(steps.next().done).toBe(false);
    const between = family.body();
    const text = between.toString('utf8');
    expect(text.match(/\} 2$/gm)).toHaveLength(1000);
    // The next poll lands before the first render is done: it writes the new values into its own bytes only.
    table.replace('a', rows(1000, 3));
    let step = steps.next();
    while (!step.done) step = steps.next();
    expect(step.value.toString('utf8')).toMatch(/\} 3$/m);
    expect(between.toString('utf8')).toBe(text);
    expect(family.body().toString('utf8').match(/\} 3$/gm)).toHaveLength(1000);
  });

  it('are brought up to a table a poll changed in slices (a scrape), the event loop turning meanwhile, and a render under way is waited for', async () => {
    const table = new MarketTable([]);
    const family = table.families[0]!;
    table.replace('a', rows(5_000, 1));
    const kept = family.body();
    // Fresh: nothing rendered.
    await family.freshen(0);
    expect(family.body()).toBe(kept);
    table.replace('a', rows(5_000, 2));
    let turns = 0;
    const count = () => {
      turns++;
      if (turns < 1_000) setImmediate(count);
    };
    setImmediate(count);
    await family.freshen(0); // a turn after every step
    expect(turns).toBeGreaterThan(2);
    expect(family.fresh).toBe(true);
    expect(family.body().toString('utf8').match(/\} 2$/gm)).toHaveLength(5_000);
    // A poll's render under way: the scrape waits for it and keeps its bytes, rendering nothing of its own.
    table.replace('a', rows(5_000, 3));
    const poll = family.render();
    poll.next();
    let polled: Buffer | undefined;
    const finish = () => {
      const r = poll.next();
      if (r.done) polled = r.value;
      else setImmediate(finish);
    };
    setImmediate(finish);
    await family.freshen(0);
    expect(polled).toBeDefined();
    expect(family.body()).toBe(polled);
    // And the other way round: a poll's render of the table leaves a family a scrape is rendering to it.
    table.replace('a', rows(5_000, 6));
    const scrape = family.freshen(0);
    expect(family.rendering).toBe(true);
    runSync(table.render());
    expect(family.fresh).toBe(false);
    expect(table.families[1]!.fresh).toBe(true);
    await scrape;
    expect(family.body().toString('utf8').match(/\} 6$/gm)).toHaveLength(5_000);
    // The table changes again while the scrape renders: what it renders then is not kept, and the next scrape renders.
    table.replace('a', rows(5_000, 4));
    setImmediate(() => table.replace('a', rows(5_000, 5)));
    await family.freshen(0);
    expect(family.fresh).toBe(false);
    await family.freshen(0);
    expect(family.body().toString('utf8').match(/\} 5$/gm)).toHaveLength(5_000);
  });

  it("are rendered in slices by a scrape (exposition) that comes while a poll's render is not done, every family of one table", async () => {
    const m = createMetrics({ processMetrics: false });
    const markets = (v: number) => Array.from({ length: 40_000 }, (_, i) => market(`m${i}`, { utilization: v, borrow_apy: v }));
    m.setReadings('markets', markets(0.25), NOW);
    // The table as a poll leaves it before its own render: changed, the families' text older than it.
    const table = utilization(m).table;
    table.replace('markets', Array.from({ length: 40_000 }, (_, i) => row(`m${i}`, 0.5)));
    let turns = 0;
    let landed = false;
    const count = () => {
      turns++;
      // A poll landing once the scrape has the first family up to date and not yet the last: every family it sends
      // still comes from one table (the newer).
      if (!landed && table.families[0]!.fresh && !table.families[6]!.fresh) {
        table.replace('markets', Array.from({ length: 40_000 }, (_, i) => row(`m${i}`, 0.75)));
        landed = true;
      }
      if (turns < 10_000) setImmediate(count);
    };
    setImmediate(count);
    // Slices of 1 ms (as while a response waits for its socket), so that a fast machine turns too.
    const done = outputWaiting();
    const e = await m.exposition().finally(done);
    expect(turns).toBeGreaterThanOrEqual(3);
    expect(landed).toBe(true);
    const text = Buffer.concat(e.chunks).toString('utf8');
    e.release();
    expect(new Set(samples(text, 'lookout_market_utilization_ratio').map((x) => x.value))).toEqual(new Set([0.75]));
    expect(new Set(samples(text, 'lookout_market_borrow_apy_ratio').map((x) => x.value))).toEqual(new Set([0.75]));
  }, 60_000);

  it('are sent whole as they were at the request, though a poll renders them again while the client reads slowly', async () => {
    const d = await startFakeDaemon();
    try {
      // 40,000 markets: ~45 MB, more than the kernel's socket buffers hold, so most of it waits in the server's queue.
      const markets = (v: number) => Array.from({ length: 40_000 }, (_, i) => market(`m${i}`, { utilization: v }));
      d.metrics.setReadings('markets', markets(0.25), NOW);
      const { port } = new URL(d.server.url);
      const socket = connect(Number(port), '127.0.0.1');
      socket.write(`GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`);
      const parts: Buffer[] = [];
      const [first] = (await once(socket, 'data')) as [Buffer];
      parts.push(first);
      socket.pause();
      // The whole response is written by now (sendChunks writes every chunk at once): a poll changes every market.
      d.metrics.setReadings('markets', markets(0.75), NOW);
      socket.on('data', (c: Buffer) => parts.push(c));
      socket.resume();
      await once(socket, 'end');
      const text = Buffer.concat(parts).toString('utf8');
      const values = [...text.matchAll(/^lookout_market_utilization_ratio\{[^}]*\} (\S+)$/gm)].map((m) => m[1]);
      expect(values).toHaveLength(40_000);
      expect(new Set(values)).toEqual(new Set(['0.25']));
      // The next scrape has the new values.
      expect(new Set(samples(await d.metrics.scrape(), 'lookout_market_utilization_ratio').map((x) => x.value))).toEqual(new Set([0.75]));
    } finally {
      await d.server.close();
    }
  }, 60_000);
});

describe("the market families' text", () => {
  /** A value as the text format spells it: a Go float, +Inf and -Inf for the infinities. */
  const spelled = (v: number) => (v === Infinity ? '+Inf' : v === -Infinity ? '-Inf' : String(v));
  /** The text format of one family as the scrape sends it, written out here independently of the renderer. */
  const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
  const expected = (table: MarketTable, i: number, rows: readonly MarketRow[]) =>
    [
      `# HELP ${table.families[i]!.name} ${table.families[i]!.help}`,
      `# TYPE ${table.families[i]!.name} gauge`,
      ...rows
        .filter((r) => !Number.isNaN(r.values[i]))
        .map((r) => {
          const l = r.labels;
          return `${table.families[i]!.name}{market_id="${esc(l.market_id)}",chain="${esc(l.chain)}",loan_asset="${esc(l.loan_asset)}",collateral_asset="${esc(l.collateral_asset)}"} ${spelled(r.values[i]!)}`;
        }),
    ].join('\n');

  it('writes every value as the text format spells it (String() for a finite value, +Inf and -Inf), on lines of any length, whatever the labels hold', () => {
    const next = mulberry32(20261126);
    const bits = new Float64Array(1);
    const words = new Uint32Array(bits.buffer);
    // Doubles from random bit patterns (NaN ones included), and the edges by hand.
    const doubles = [-0, 0, Number.NaN, Infinity, -Infinity, 1e21, 1e-7, 123e-20, 5e-324, -5e-324, Number.MAX_VALUE, -2.2250738585072014e-308, 0.1 + 0.2, 2 ** 53 + 2, 0.95];
    while (doubles.length < 7 * 60) {
      words[0] = Math.floor(next() * 2 ** 32);
      words[1] = Math.floor(next() * 2 ** 32);
      doubles.push(bits[0]!);
    }
    // Label texts far longer than the renderer's first guess of a line, multi-byte, and needing escapes.
    const long = (k: number) => `m${k}-${'é€😀"\\\n'.repeat(20 + k)}`;
    const rows: MarketRow[] = Array.from({ length: 60 }, (_, k) => ({
      labels: { market_id: k % 3 === 0 ? long(k) : `m${k}`, chain: 'ethereum', loan_asset: k % 2 ? 'USDC' : 'ü"x', collateral_asset: 'WETH' },
      values: doubles.slice(7 * k, 7 * k + 7),
    }));
    const table = new MarketTable([]);
    table.replace('a', rows);
    for (const [i, family] of table.families.entries()) expect(family.body().toString('utf8')).toBe(expected(table, i, rows));
    // The edges of the first row, by name (-0 reads 0; the infinities as Prometheus's text format and prom-client spell them).
    const first = (i: number) => table.families[i]!.body().toString('utf8').split('\n')[2]!.replace(/^.*\} /s, '');
    expect([0, 1, 3, 4, 5, 6].map(first)).toEqual(['0', '0', '+Inf', '-Inf', '1e+21', '1e-7']);
  });

  it('take in whole the markets a poll adds while a render is under way (past the room the render set aside)', () => {
    const table = new MarketTable([]);
    const before = Array.from({ length: 1000 }, (_, i) => row(`m${i}`, 1));
    table.replace('a', before);
    const steps = table.families[0]!.render();
    for (let i = 0; i < 5; i++) expect(steps.next().done).toBe(false);
    const added = Array.from({ length: 300 }, (_, i) => row(`n${i}-${'€"'.repeat(100)}`, -1.2345678901234567e-6));
    table.replace('b', added);
    let step = steps.next();
    while (!step.done) step = steps.next();
    expect(step.value.toString('utf8')).toBe(expected(table, 0, [...before, ...added]));
  });

  it('keep a market id that comes with other labels as another series, each found, updated and dropped on its own', () => {
    const table = new MarketTable([]);
    const on = (chain: string, loan: string, v: number): MarketRow => ({ ...row('m0', v), labels: { ...row('m0', v).labels, chain, loan_asset: loan } });
    const text = (rows: MarketRow[]) => table.families.forEach((f, i) => expect(f.body().toString('utf8')).toBe(expected(table, i, rows)));
    table.replace('a', [on('ethereum', 'USDC', 1), row('m1', 1)]);
    table.replace('b', [on('base', 'USDC', 2), on('base', 'USDT', 3)]);
    text([on('ethereum', 'USDC', 1), row('m1', 1), on('base', 'USDC', 2), on('base', 'USDT', 3)]);
    expect(table.size).toBe(4);
    table.replace('b', [on('base', 'USDT', 5), on('base', 'USDC', 4)]);
    table.replace('a', [row('m1', 6)]);
    text([row('m1', 6), on('base', 'USDC', 4), on('base', 'USDT', 5)]);
    table.replace('b', [on('base', 'USDT', 7)]);
    table.replace('a', [row('m1', 8), on('ethereum', 'USDC', 9), on('base', 'USDT', 10)]);
    text([row('m1', 8), on('base', 'USDT', 10), on('ethereum', 'USDC', 9)]);
    table.forget('a');
    text([on('base', 'USDT', 7)]);
    table.forget('b');
    text([]);
    expect(table.size).toBe(0);
    // Gone means gone: back again, each is a new series.
    table.replace('b', [row('m1', 11), on('base', 'USDT', 12)]);
    text([row('m1', 11), on('base', 'USDT', 12)]);
  });

  it("show a market's new labels after a poll changed them, and never its old ones", () => {
    const table = new MarketTable([]);
    const first = [row('m0', 1), row('m1', 2)];
    table.replace('a', first);
    expect(table.families[3]!.body().toString('utf8')).toBe(expected(table, 3, first));
    const second = [{ ...row('m0', 3), labels: { ...row('m0', 3).labels, chain: 'base', loan_asset: 'USDT' } }, row('m1', 4)];
    table.replace('a', second);
    // A market with other labels is another series: it comes after the ones kept.
    for (const [i, family] of table.families.entries()) expect(family.body().toString('utf8')).toBe(expected(table, i, [second[1]!, second[0]!]));
    expect(table.size).toBe(2);
  });
});
