/**
 * The simulator's encodings (SPEC §6, §7): every encoding of every value family writes the same world as the
 * canonical one. Checked here against the canonical answer with arithmetic of the test's own (BigInt decimal
 * shifts, Date.parse), never with lookout's readers — the simulator must not agree with the client by
 * construction. Chaos is deterministic per seed and draws several forms.
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { FAMILIES, parseEncoding, startSimulator, type Simulator } from '../src/simulator/index.js';
import { CLI } from './fixtures/daemon/harness.js';
import { call, gql } from './simulator-helpers.js';

const T0 = Date.UTC(2026, 4, 5, 10, 30, 0);
const clock = new ManualClock(T0);
const opts = { clock, seed: 3, markets: 6, positions: 40, startedAt: T0 - 3_600_000 } as const;
const METRICS = '{ metrics(limit: 30, where: {created_at: {_gt: "2026-05-05T10:00:00Z"}}) { id market_id utilization total_borrowed oracle_price created_at timestamp market { loan_asset_decimals collateral_asset_decimals chain } } }';

let canonical: Simulator;
beforeAll(async () => {
  canonical = await startSimulator({ ...opts, encoding: 'canonical' });
});
afterAll(() => canonical.close());

/** What one family's endpoint answers, canonical and encoded side by side (raw text kept for bare numbers). */
interface Sample {
  canon: any[];
  enc: any[];
  text: string;
}

async function sample(sim: Simulator, family: string): Promise<Sample> {
  const get = async (s: Simulator) => {
    if (family === 'booleans' || family === 'extra') {
      const a = await call(s.url + '/api/v1/positions?limit=40');
      return { rows: a.json.data, text: a.text };
    }
    if (family === 'optional') {
      const a = await call(s.catalogUrl + '/api/catalog/historical-benchmarks/unichain?code=usd&perPage=10');
      return { rows: a.json.data, text: a.text };
    }
    const a = await gql(s, METRICS);
    expect(a.json.errors).toBeUndefined();
    return { rows: a.json.data.metrics, text: a.text };
  };
  const [c, e] = [await get(canonical), await get(sim)];
  expect(e.rows).toHaveLength(c.rows.length);
  expect(c.rows.length).toBeGreaterThan(5);
  return { canon: c.rows, enc: e.rows, text: e.text };
}

/** An integer text shifted `places` to the right: ("1015.4321", 4) → 10154321n; null when not exact. */
function unitsToBase(units: string, places: number): bigint | null {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(units);
  if (!m) return null;
  const frac = m[2] ?? '';
  if (frac.length > places) return null;
  return BigInt(m[1]! + frac.padEnd(places, '0'));
}
const close = (a: number, b: number) => Math.abs(a - b) <= Math.abs(b) * 1e-12;
const bareNumberIn = (text: string, field: string, digits: string) => text.includes(`"${field}":${digits}`);

/** Whether an encoded value denotes the canonical one, for each family's encodings. */
const checks: Record<string, (c: any, e: any, s: Sample) => boolean> = {
  'numbers=json': (c, e) => e.utilization === c.utilization && typeof e.utilization === 'number',
  'numbers=string': (c, e) => typeof e.utilization === 'string' && !/e/i.test(e.utilization) && Number(e.utilization) === c.utilization,
  'numbers=exponent': (c, e) => typeof e.utilization === 'string' && /e[+-]\d+$/.test(e.utilization) && Number(e.utilization) === c.utilization,
  'amounts=base': (c, e) => e.total_borrowed === c.total_borrowed && /^\d+$/.test(e.total_borrowed),
  'amounts=base-number': (c, e, s) => typeof e.total_borrowed === 'number' && bareNumberIn(s.text, 'total_borrowed', c.total_borrowed),
  'amounts=units': (c, e) => typeof e.total_borrowed === 'string' && unitsToBase(e.total_borrowed, c.market.loan_asset_decimals) === BigInt(c.total_borrowed),
  'amounts=units-number': (c, e) => typeof e.total_borrowed === 'number' && close(e.total_borrowed, Number(c.total_borrowed) / 10 ** c.market.loan_asset_decimals),
  'oracle=scaled': (c, e) => e.oracle_price === c.oracle_price,
  'oracle=scaled-number': (c, e, s) => typeof e.oracle_price === 'number' && bareNumberIn(s.text, 'oracle_price', c.oracle_price),
  'oracle=unit': (c, e) => typeof e.oracle_price === 'number' && close(e.oracle_price, Number(c.oracle_price) / 10 ** (36 + c.market.loan_asset_decimals - c.market.collateral_asset_decimals)),
  'oracle=unit-string': (c, e) =>
    typeof e.oracle_price === 'string' && unitsToBase(e.oracle_price, 36 + c.market.loan_asset_decimals - c.market.collateral_asset_decimals) === BigInt(c.oracle_price),
  'times=native': (c, e) => e.created_at === c.created_at && e.timestamp === c.timestamp,
  'times=s': (c, e) => e.timestamp === c.timestamp && e.created_at === Date.parse(c.created_at) / 1000,
  'times=ms': (c, e) => e.timestamp === c.timestamp * 1000 && e.created_at === Date.parse(c.created_at),
  'times=iso': (c, e) => /Z$/.test(e.timestamp) && Date.parse(e.timestamp) === c.timestamp * 1000 && e.created_at === c.created_at,
  'times=iso-offset': (c, e) => /[+-]\d\d:\d\d$/.test(e.timestamp) && !/[+-]00:00$/.test(e.timestamp) && Date.parse(e.timestamp) === c.timestamp * 1000 && Date.parse(e.created_at) === Date.parse(c.created_at),
  'times=iso-local': (c, e) => /T\d\d:\d\d:\d\d$/.test(e.timestamp) && Date.parse(e.timestamp + 'Z') === c.timestamp * 1000,
  'booleans=json': (c, e) => e.verified === c.verified,
  'booleans=string': (c, e) => e.verified === String(c.verified),
  'booleans=upper': (c, e) => e.verified === String(c.verified).toUpperCase(),
  'booleans=digit': (c, e) => e.verified === (c.verified ? '1' : '0'),
  'booleans=number': (c, e) => e.verified === (c.verified ? 1 : 0),
  'optional=null': (c, e) => c.apy['30day'] === null && e.apy['30day'] === null,
  'optional=missing': (c, e) => c.apy['30day'] === null && !('30day' in e.apy) && '1day' in e.apy,
  'optional=empty': (c, e) => c.apy['30day'] === null && e.apy['30day'] === '',
  'extra=none': (c, e) => JSON.stringify(Object.keys(e)) === JSON.stringify(Object.keys(c)),
  'extra=some': (c, e) => Object.keys(e).length === Object.keys(c).length + 1 && Object.keys(c).every((k) => k in e),
  'market=present': (c, e) => JSON.stringify(e.market) === JSON.stringify(c.market),
  'market=absent': (_c, e) => e.market === null,
};

describe('every encoding writes the same world', () => {
  const cases = Object.entries(FAMILIES).flatMap(([family, choices]) => choices.map((choice) => [family, choice] as const));
  it('has a check for every family and encoding', () => {
    expect(Object.keys(checks).sort()).toEqual(cases.map(([f, c]) => `${f}=${c}`).sort());
  });
  it.each(cases)('%s=%s', async (family, choice) => {
    const sim = await startSimulator({ ...opts, encoding: `${family}=${choice}` });
    try {
      const s = await sample(sim, family);
      const check = checks[`${family}=${choice}`]!;
      const bad = s.canon.map((c, i) => [c, s.enc[i]] as const).filter(([c, e]) => !check(c, e, s));
      expect(bad.slice(0, 2), `rows not written as ${family}=${choice}`).toEqual([]);
      // Only that family changed: the row's identity is the canonical one.
      for (let i = 0; i < s.canon.length; i++) expect(s.enc[i].market_id ?? s.enc[i].id ?? s.enc[i].timestamp).toBeDefined();
    } finally {
      await sim.close();
    }
  });
});

describe('chaos', () => {
  it('draws per row and field from the seed: the same seed writes the same bytes, another seed others, every form appears', async () => {
    const a = await startSimulator({ ...opts, encoding: 'chaos' });
    const b = await startSimulator({ ...opts, encoding: 'chaos' });
    const c = await startSimulator({ ...opts, encoding: 'chaos,seed=99' });
    try {
      const q = METRICS.replace('limit: 30', 'limit: 200');
      const [ta, tb, tc] = [(await gql(a, q)).text, (await gql(b, q)).text, (await gql(c, q)).text];
      expect(ta).toBe(tb);
      expect(tc).not.toBe(ta);
      const rows = JSON.parse(ta).data.metrics as any[];
      const timeForms = new Set(rows.map((r) => (typeof r.timestamp === 'number' ? (r.timestamp > 1e11 ? 'ms' : 's') : /Z$/.test(r.timestamp) ? 'iso' : /[+-]\d\d:\d\d$/.test(r.timestamp) ? 'offset' : 'local')));
      expect([...timeForms].sort()).toEqual(['iso', 'local', 'ms', 'offset', 's']);
      expect(rows.some((r) => r.market === null)).toBe(true);
      expect(rows.some((r) => r.market !== null)).toBe(true);
      expect(new Set(rows.map((r) => typeof r.oracle_price)).size).toBe(2);
    } finally {
      await Promise.all([a.close(), b.close(), c.close()]);
    }
  });
});

describe('--encoding', () => {
  it.each([
    ['chaos', 'seed=5'],
    ['units,times=iso', 'times=iso'],
    ['times=ms,numbers=string', 'numbers=string'],
  ])('%s parses', (text, part) => {
    const e = parseEncoding(text, 5);
    expect(Object.entries(e).map(([k, v]) => `${k}=${v}`)).toContain(part);
  });
  it.each([
    ['nonsense', /unknown encoding "nonsense"/],
    ['times=fortnights', /times is one of native, s, ms, iso, iso-offset, iso-local, chaos; got "fortnights"/],
    ['colour=red', /unknown family "colour"/],
    ['chaos,seed=-1', /seed must be a non-negative integer/],
  ])('%s is refused clearly', (text, message) => {
    expect(() => parseEncoding(text, 1)).toThrow(message);
  });

  it('lookout simulate --encoding chaos --seed 5 serves chaos; a bad encoding exits 2 with one clear line', async () => {
    const run = (args: string[], untilLine: boolean) =>
      new Promise<{ code: number | null; out: string; err: string }>((resolve, reject) => {
        const p = spawn(process.execPath, [CLI, 'simulate', '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        let err = '';
        const timer = setTimeout(() => (p.kill('SIGKILL'), reject(new Error(`no answer from simulate: ${out}${err}`))), 15_000);
        p.stdout.on('data', (c: Buffer) => {
          out += c;
          if (untilLine && out.includes('\n')) p.kill('SIGTERM');
        });
        p.stderr.on('data', (c: Buffer) => (err += c));
        p.on('exit', (code) => (clearTimeout(timer), resolve({ code, out, err })));
      });
    const ok = await run(['--encoding', 'chaos', '--seed', '5'], true);
    expect(ok.out).toMatch(/seed=5 .*encoding=chaos/);
    const bad = await run(['--encoding', 'times=fortnights'], false);
    expect(bad.code).toBe(2);
    expect(bad.err.trim().split('\n')).toEqual([expect.stringMatching(/^lookout: encoding: times is one of .*got "fortnights"$/)]);
  });
});
