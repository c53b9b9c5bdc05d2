/**
 * The poll's reading work in steps that give the event loop turns, against the same work in one go.
 *
 * parseJsonExactSteps (the response parse) against parseJsonExact: the same
 * value for documents built to trip a cut — strings holding quotes, brackets and commas, escaped backslashes before a
 * closing quote, long integers, nested arrays, a `__proto__` member, pretty-printed text — and the same SyntaxError for
 * a text that is not JSON (a trailing comma, a bracket closed by a brace, a missing comma between elements, a cut-off end).
 */
import { describe, expect, it } from 'vitest';
import { parseJsonExact, parseJsonExactSteps } from '../src/source/json.js';
import { listReadings, listReadingsSteps } from '../src/source/parse/lists.js';
import { marketReadings, marketReadingsSteps, marketsWithoutDecimals, marketsWithoutDecimalsSteps } from '../src/source/parse/markets.js';
import { readFile } from 'node:fs';
import { afterIo, nextTurn, runSync, runYielding, type Steps } from '../src/yielding.js';
import { countPauses } from './source-helpers.js';

const ROWS = 1000;

function row(i: number): Record<string, unknown> {
  return {
    market_id: `0x${i.toString(16).padStart(8, '0')}`,
    note: i % 3 === 0 ? `a "quoted", [bracketed] {braced} value \\ ${i}` : `ends in a backslash \\`,
    tags: [i, [i + 1, `x,${i}]`], {}],
    utilization: i / ROWS,
    ...(i % 7 === 0 ? JSON.parse(`{"__proto__": {"polluted": ${i}}}`) : {}),
  };
}

/** The markets response with ROWS rows, its long integers written as bare literals (as the service sends them). */
function document(indent?: number): string {
  const body = { data: { metrics: Array.from({ length: ROWS }, (_, i) => ({ ...row(i), oracle_price: `@${i}` })) }, extra: [1, 2, [3]] };
  return JSON.stringify(body, null, indent).replace(/"@(\d+)"/g, (_m, i: string) => `3022232490411010000000000${i.padStart(4, '0')}`);
}

/** Steps run to the end, counting the pauses. */
const stepped = (text: string): { value: unknown; pauses: number } => countPauses(parseJsonExactSteps(text, 0));

describe('parseJsonExactSteps', () => {
  it.each([
    ['compact', document()],
    ['pretty-printed', document(2)],
    ['an array at the top', JSON.stringify(Array.from({ length: ROWS }, (_, i) => row(i)))],
  ])('gives the value parseJsonExact gives, in parts (%s)', (_name, text) => {
    const { value, pauses } = stepped(text);
    // JSON text of both: own __proto__ members and key order count.
    expect(JSON.stringify(value)).toBe(JSON.stringify(parseJsonExact(text)));
    expect(value).toEqual(parseJsonExact(text));
    // It went through the parts (a pause per part besides the scan's), not one parse of the whole text.
    expect(pauses).toBeGreaterThanOrEqual(Math.ceil(ROWS / 250) + Math.floor(text.length / 65536));
  });

  it('keeps long integers exact in the parts', () => {
    const value = runSync(parseJsonExactSteps(document(), 0)) as { data: { metrics: Array<{ oracle_price: unknown }> } };
    expect(value.data.metrics[999]!.oracle_price).toBe('30222324904110100000000000999');
  });

  it.each([
    ['a trailing comma in the big array', document().replace(/}\]},"extra"/, '},]},"extra"')],
    ['the big array closed by a brace', document().replace(/}\]},"extra"/, '}}},"extra"')],
    ['no comma between two elements', document().replace('},{"market_id":"0x00000005"', '} {"market_id":"0x00000005"')],
    ['a cut-off end', document().slice(0, -40)],
  ])('throws the SyntaxError of parseJsonExact for %s', (_name, text) => {
    expect(() => parseJsonExact(text)).toThrow(SyntaxError);
    expect(() => runSync(parseJsonExactSteps(text, 0))).toThrow(SyntaxError);
  });

  it('gives the event loop turns while it parses', async () => {
    const { value, turns } = await counting(parseJsonExactSteps(document(), 0));
    expect(turns).toBeGreaterThanOrEqual(Math.ceil(ROWS / 250));
    expect(value).toEqual(parseJsonExact(document()));
  });
});

/** Runs steps giving a turn at every pause, counting the turns other callbacks got meanwhile. */
async function counting<T>(steps: Steps<T>): Promise<{ value: T; turns: number }> {
  let turns = 0;
  let stop = false;
  const tick = () => {
    turns++;
    if (!stop) setImmediate(tick);
  };
  setImmediate(tick);
  const value = await runYielding(steps, 0);
  stop = true;
  return { value, turns };
}

const POLL = Date.UTC(2026, 10, 22, 12, 0, 0);

describe('the row readers in steps', () => {
  it('read the markets of a metrics response as marketReadings does, giving turns between rows', async () => {
    // Two rows per market (the newer wins), some without decimals (learned from a later row), some without an id.
    const rows = Array.from({ length: 600 }, (_, i) => ({
      market_id: i % 50 === 49 ? null : `m${i % 300}`,
      utilization: i / 600,
      borrow_apy: '0.05',
      oracle_price: '3022232490411010000000000001',
      timestamp: POLL / 1000 - 600 + i,
      market: { chain: 'base', loan_asset_symbol: 'USDC', ...(i < 300 || i % 300 < 10 ? {} : { loan_asset_decimals: 6, collateral_asset_decimals: 18 }) },
    }));
    const known = () => ({ oraclePrice: 'auto' as const, known: new Map() });
    const { value, turns } = await counting(marketReadingsSteps(rows, POLL, known()));
    expect(value).toEqual(marketReadings(rows, POLL, known()));
    expect(value.readings.length).toBeGreaterThan(250);
    expect(turns).toBeGreaterThanOrEqual(5);
    // The markets still without decimals (asked about on their own), and what was learned on the way.
    const learned = new Map();
    const stepped = await counting(marketsWithoutDecimalsSteps(rows, learned));
    const inOneGo = new Map();
    expect(stepped.value).toEqual(marketsWithoutDecimals(rows, inOneGo));
    expect(stepped.value.length).toBeGreaterThan(0);
    expect(learned).toEqual(inOneGo);
    expect(stepped.turns).toBeGreaterThanOrEqual(5);
  });

  it('read the rows of a positions walk as listReadings does, giving turns between rows', async () => {
    const rows = Array.from({ length: 600 }, (_, i) => (i % 97 === 0 ? 'not a row' : { id: `p${i % 550}`, wallet: '0xw', chain: 'base', protocol: 'morpho', asset: 'USDC', value_usd: i, verified: i % 2 === 0, timestamp: POLL / 1000 }));
    const { value, turns } = await counting(listReadingsSteps('position', rows, POLL));
    expect(value).toEqual(listReadings('position', rows, POLL));
    expect(value.rejected.some((r) => r.reason === 'duplicate')).toBe(true);
    expect(turns).toBeGreaterThanOrEqual(5);
  });
});

describe('a turn that takes in timers and sockets (afterIo)', () => {
  // From an I/O callback (here a file read's), an immediate runs in the same turn of the event loop, before the loop
  // looks at its timers or sockets again: a big response decoded there and the parse's first slice after one
  // immediate held the loop at once. afterIo waits until the loop has been round.
  const fromIo = (fn: () => void) => readFile(import.meta.filename ?? new URL(import.meta.url).pathname, () => fn());

  it('resolves after a timer that is due, where one immediate resolves before it', async () => {
    const order = await new Promise<string[]>((resolve) => {
      fromIo(() => {
        const seen: string[] = [];
        setTimeout(() => seen.push('timer'), 0);
        // Let the timer come due before the callback returns.
        const until = Date.now() + 3;
        while (Date.now() < until);
        void nextTurn().then(() => seen.push('nextTurn'));
        void afterIo().then(() => {
          seen.push('afterIo');
          resolve(seen);
        });
      });
    });
    expect(order).toEqual(['nextTurn', 'timer', 'afterIo']);
  });
});
