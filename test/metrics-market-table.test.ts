import { describe, expect, it } from 'vitest';
import { MarketTable, type MarketRow } from '../src/metrics/market-table.js';
import { mulberry32 } from '../src/simulator/random.js';
import { ROWS_PER_STEP, runSync, type Steps } from '../src/yielding.js';

/** A market row with the same value in every family; `chain` varies a market id's other labels. */
const row = (id: string, value: number, chain = 'ethereum'): MarketRow => ({
  labels: { market_id: id, chain, loan_asset: 'USDC', collateral_asset: 'WETH' },
  values: Array.from({ length: 7 }, () => value),
});
const rows = (from: number, to: number, v: number) => Array.from({ length: to - from }, (_, i) => row(`m${from + i}`, v));

/** The utilization family's samples, `id/chain=value`, in the table's order. */
const samples = (t: MarketTable) =>
  [...t.families[0]!.body().toString('utf8').matchAll(/market_id="(\w+)",chain="(\w+)".* (\S+)$/gm)].map((m) => `${m[1]}/${m[2]}=${m[3]}`);

describe('the market table, replaced in steps', () => {
  it("keeps the last poll's table whole until the swap, then shows the new poll whole", () => {
    const t = new MarketTable([]);
    t.replace('a', rows(0, 1000, 1));
    const before = samples(t);
    // m0–m49 leave, m1000–m1049 come, the rest change value.
    const steps = t.replaceSteps('a', rows(50, 1050, 2));
    let paused = 0;
    while (!steps.next().done) {
      paused++;
      // A scrape between the steps: the table as it was.
      expect(t.size).toBe(1000);
      if (paused % 3 === 1) expect(samples(t)).toEqual(before);
    }
    expect(paused).toBeGreaterThanOrEqual(1000 / ROWS_PER_STEP - 1);
    expect(t.size).toBe(1000);
    const after = samples(t);
    expect(after).toHaveLength(1000);
    expect(after.every((s) => s.endsWith('=2'))).toBe(true);
    expect(after).not.toContain('m0/ethereum=2');
    expect(after).toContain('m1049/ethereum=2');
  });

  it('gives a market one series: a poll that reports a new market twice, owners that join and leave', () => {
    const t = new MarketTable([]);
    t.replace('a', [row('m1', 1), row('m2', 1), row('m1', 2)]);
    expect(samples(t)).toEqual(['m1/ethereum=2', 'm2/ethereum=1']);
    const bytes = t.labelBytes;
    expect(bytes).toBeGreaterThan(0);
    // b reports m1 too (joins it), a leaves: m1 stays with b's value; m2 goes.
    t.replace('b', [row('m1', 3)]);
    expect(t.labelBytes).toBe(bytes);
    t.forget('a');
    expect(samples(t)).toEqual(['m1/ethereum=3']);
    t.forget('b');
    expect(t.size).toBe(0);
    expect(t.labelBytes).toBe(0);
  });

  it('ends, interleaved with other owners\' replaces and forgets, as the same changes made one after another in the order they finished', () => {
    for (let seed = 1; seed <= 150; seed++) {
      const rnd = mulberry32(seed);
      const pick = (n: number) => Math.floor(rnd() * n);
      // 400 market ids, a few of them under two sets of labels; polls of 0–350 rows, now and then a row twice.
      const poll = (v: number): MarketRow[] => {
        const n = pick(6) === 0 ? 0 : 100 + pick(250);
        const out: MarketRow[] = [];
        for (let i = 0; i < n; i++) {
          const id = pick(400);
          out.push(row(`m${id}`, v, id % 17 === 0 && pick(2) === 0 ? 'base' : 'ethereum'));
          if (pick(40) === 0) out.push(row(`m${id}`, v + 0.5, out.at(-1)!.labels.chain));
        }
        return out;
      };
      type Op = { owner: string; rows: MarketRow[] | undefined };
      const ops: Op[] = Array.from({ length: 8 }, (_, i) => ({ owner: ['a', 'b', 'c'][pick(3)]!, rows: pick(7) === 0 ? undefined : poll(i + 1) }));

      const stepped = new MarketTable([]);
      const finished: Op[] = [];
      const running: Array<{ op: Op; steps: Steps<void> }> = [];
      let started = 0;
      while (started < ops.length || running.length > 0) {
        // Start the next change, or step one under way a few times.
        if (started < ops.length && (running.length === 0 || pick(3) === 0)) {
          const op = ops[started++]!;
          if (op.rows === undefined) {
            stepped.forget(op.owner);
            finished.push(op);
          } else running.push({ op, steps: stepped.replaceSteps(op.owner, op.rows) });
          continue;
        }
        const k = pick(running.length);
        const r = running[k]!;
        for (let n = 1 + pick(3); n > 0; n--) {
          if (r.steps.next().done) {
            finished.push(r.op);
            running.splice(k, 1);
            break;
          }
        }
      }

      const oneByOne = new MarketTable([]);
      // The model: each owner's rows as its last finished change left them.
      const owned = new Map<string, MarketRow[]>();
      for (const op of finished) {
        if (op.rows === undefined) oneByOne.forget(op.owner);
        else runSync(oneByOne.replaceSteps(op.owner, op.rows));
        if (op.rows === undefined || op.rows.length === 0) owned.delete(op.owner);
        else owned.set(op.owner, op.rows);
      }
      expect(samples(stepped), `seed ${seed}`).toEqual(samples(oneByOne));
      expect(stepped.size, `seed ${seed}`).toBe(oneByOne.size);
      // One series per market, and the markets are those some owner reports now.
      const shown = samples(stepped).map((x) => x.replace(/=.*$/, ''));
      expect(new Set(shown).size, `seed ${seed}`).toBe(shown.length);
      const reported = new Set([...owned.values()].flat().map((r) => `${r.labels.market_id}/${r.labels.chain}`));
      expect(new Set(shown), `seed ${seed}`).toEqual(reported);
      // Every owner gone: no entry is left behind by a count of owners gone wrong.
      for (const owner of ['a', 'b', 'c']) stepped.forget(owner);
      expect(stepped.size, `seed ${seed}`).toBe(0);
      expect(stepped.labelBytes, `seed ${seed}`).toBe(0);
      expect(samples(stepped)).toEqual([]);
    }
  });
});
