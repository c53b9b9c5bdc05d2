/**
 * `lookout probe` as a child process (SPEC §1): against the simulator in two encodings (the per-field report
 * differs, exit 0), against a 401 and a dead port (exit 1, a clear message, the key nowhere in the output).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../src/simulator/index.js';
import { CLI, freePort, ROOT, tempDirs } from './fixtures/daemon/harness.js';
import { writeConfig } from './fixtures/daemon/world.js';

const KEY = 'sim-key-0123456789-secret';
const dirs = tempDirs();
let sim: Simulator;
/** The same world written the way another service might: unit prices, decimal token units, times in ms. */
let units: Simulator;

/** Runs `lookout probe`; resolves with its exit code and output (bounded). */
function probe(args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, 'probe', ...args], { cwd: ROOT, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 99) : 0, out: stdout, err: stderr });
    });
  });
}

/** A config with a metrics poll and a positions poll against `base`. */
function config(base: string, catalog: string, apiKey = KEY): string {
  const file = join(dirs.make(), 'lookout.yaml');
  return writeConfig(file, {
    source: { base_url: base, catalog_url: catalog, api_key: apiKey, timeout: '3s', retries: 3 },
    storage: { path: join(dirs.make(), 'never-created.db') },
    polls: [
      { name: 'markets', kind: 'metrics', cron: '*/30 * * * * *', limit: 1000 },
      { name: 'positions', kind: 'positions', cron: '*/30 * * * * *', params: { limit: 50 } },
    ],
  });
}

type Report = { ok: boolean; polls: Array<{ poll: string; ok: boolean; rows: number; fields: Record<string, Record<string, number>>; samples: Record<string, unknown>; fields_rejected: unknown[]; error?: string; reason?: string }> };

beforeAll(async () => {
  sim = await startSimulator({ apiKey: KEY, formats: 'canonical', markets: 6, positions: 60 });
  units = await startSimulator({ apiKey: KEY, encoding: 'units', markets: 6, positions: 60 });
});
afterAll(async () => {
  await units?.close();
  await sim?.close();
  dirs.cleanup();
});

describe('lookout probe', () => {
  it('reads every poll of the simulator in two encodings: exit 0, and the per-field report says how each was sent', async () => {
    const canonical = await probe(['-c', config(sim.url, sim.catalogUrl), '--json']);
    const unit = await probe(['-c', config(units.url, units.catalogUrl), '--json']);
    expect(canonical.code, canonical.err).toBe(0);
    expect(unit.code, unit.err).toBe(0);
    const a = JSON.parse(canonical.out) as Report;
    const b = JSON.parse(unit.out) as Report;
    expect(a.ok && b.ok).toBe(true);
    const ma = a.polls.find((p) => p.poll === 'markets')!;
    const mb = b.polls.find((p) => p.poll === 'markets')!;
    expect(ma.rows).toBe(6);
    expect(mb.rows).toBe(6);
    expect(Object.keys(ma.fields.oracle_price!)).toEqual(['scaled integer']);
    expect(Object.keys(mb.fields.oracle_price!)).toEqual(['unit price']);
    expect(Object.keys(ma.fields.total_borrowed!)).toEqual(['integer base units']);
    expect(Object.keys(mb.fields.total_borrowed!)).toEqual(['decimal token units']);
    expect(Object.keys(ma.fields.oracle_last_update!)).toEqual(['Unix seconds']);
    expect(Object.keys(mb.fields.oracle_last_update!)).toEqual(['Unix milliseconds']);
    expect(ma.fields_rejected).toEqual([]);
    expect(mb.fields_rejected).toEqual([]);
    // The same world: the same unit price, whichever way it was sent. The simulator's world moves between the two
    // probes (its prices drift with time), so compare within 0.1%; a misread scale is off by powers of ten.
    expect(Math.abs(Number(mb.samples.oracle_price) / Number(ma.samples.oracle_price) - 1)).toBeLessThan(1e-3);
    expect(a.polls.find((p) => p.poll === 'positions')!.rows).toBeGreaterThan(0);

    const human = await probe(['-c', config(units.url, units.catalogUrl)]);
    expect(human.code).toBe(0);
    expect(human.out).toMatch(/^ {2}oracle_price: unit price → \d/m);
    expect(human.out).toMatch(/^ {2}total_borrowed: decimal token units/m);
    expect(human.out).toContain('all 2 polls could be read');
    expect(human.out + human.err).not.toContain(KEY);
  });

  it('a rejected key: exit 1, "API key missing or rejected", the key nowhere', async () => {
    const wrong = 'wrong-key-9876543210-secret';
    for (const args of [[], ['--json']]) {
      const r = await probe(['-c', config(sim.url, sim.catalogUrl, wrong), ...args]);
      expect(r.code).toBe(1);
      expect(r.out).toContain('API key missing or rejected');
      expect(r.out).toMatch(/http_401/);
      expect(r.out + r.err).not.toContain(wrong);
      expect(r.out + r.err).not.toContain(KEY);
    }
  });

  it('a dead port: exit 1 with a clear message per poll, the key nowhere', async () => {
    const dead = `http://127.0.0.1:${await freePort()}`;
    const r = await probe(['-c', config(dead, dead)]);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/markets \[metrics\]: FAILED after \d+ ms \(network\)/);
    expect(r.out).toContain('2 of 2 polls could not be read');
    expect(r.out + r.err).not.toContain(KEY);
  });
});
