/**
 * `lookout probe -c FILE [--json]` (SPEC §1): the first command to run against a new service. Read-only:
 * one page or answer of every configured poll (auth and timeout as configured, no retries, max_pages 1),
 * and per poll its status, latency, rows read, rows and fields rejected with their reasons, and how each
 * field was read. Nothing is stored, nothing notified. Exit 0 when every poll could be read, else 1.
 */
import { redact } from '../errors.js';
import type { Config } from '../config/load.js';
import { getPath } from '../rules/coerce.js';
import { silentLogger } from '../log.js';
import type { Reading } from '../model.js';
import { createDataServiceClient } from '../source/client.js';
import { failureReason } from '../source/errors.js';
import { runPoll } from '../source/polls/registry.js';
import type { PollConfig } from '../source/polls/schemas.js';
import type { SeenForms } from '../source/read/seen.js';
import { loadConfigOrReport } from './check.js';
import { problemCount, type Output } from './config-report.js';

/** What probing one poll found. */
export interface PollProbe {
  poll: string;
  kind: string;
  ok: boolean;
  latency_ms: number;
  rows: number;
  rows_rejected: Record<string, number>;
  fields_rejected: Array<{ field: string; reason: string; count: number; example: string }>;
  /** Field → representation → how many values were read in it. */
  fields: SeenForms;
  /** One read value per field (e.g. the unit oracle price), to show what a representation turned into. */
  samples: Record<string, unknown>;
  error?: string;
  reason?: string;
}

/** Where a field's read value lives in a reading (oracle_price reads as the unit price). */
const SAMPLE_OF: Record<string, string> = { oracle_price: 'oracle_price_scaled' };

function sampleOf(readings: readonly Reading[], field: string): unknown {
  const key = SAMPLE_OF[field] ?? field;
  for (const r of readings) {
    const v = getPath(r.fields, key);
    if (v !== null && v !== undefined && typeof v !== 'object') return v;
  }
  return undefined;
}

/** Probes one poll; never throws. */
export async function probePoll(cfg: Config, poll: PollConfig): Promise<PollProbe> {
  const client = createDataServiceClient({ ...cfg.source, retries: 0, max_pages: 1 }, { log: silentLogger, stopAtPageCap: true });
  const limit = poll.timeout ?? cfg.source.timeout * 4;
  const t0 = performance.now();
  const base = { poll: poll.name, kind: poll.kind, rows: 0, rows_rejected: {}, fields_rejected: [], fields: {}, samples: {} };
  try {
    const data = await runPoll(poll, {
      client,
      signal: AbortSignal.timeout(limit),
      now: Date.now(),
      log: silentLogger,
      oraclePrice: cfg.source.oracle_price ?? 'auto',
    });
    const rows: Record<string, number> = {};
    const fields = new Map<string, { field: string; reason: string; count: number; example: string }>();
    for (const r of data.rejected) {
      if (r.field === undefined) {
        rows[r.reason] = (rows[r.reason] ?? 0) + 1;
        continue;
      }
      const key = `${r.field}\u0000${r.reason}`;
      const had = fields.get(key);
      if (had) had.count++;
      else fields.set(key, { field: r.field, reason: r.reason, count: 1, example: `${r.entity ?? '?'}: ${r.detail}` });
    }
    const seen = data.seen ?? {};
    const samples: Record<string, unknown> = {};
    for (const f of Object.keys(seen)) {
      const v = sampleOf(data.readings, f);
      if (v !== undefined) samples[f] = v;
    }
    return { ...base, ok: true, latency_ms: Math.round(performance.now() - t0), rows: data.readings.length, rows_rejected: rows, fields_rejected: [...fields.values()], fields: seen, samples };
  } catch (err) {
    return { ...base, ok: false, latency_ms: Math.round(performance.now() - t0), error: err instanceof Error ? err.message : String(err), reason: failureReason(err) };
  } finally {
    await client.close();
  }
}

/** The human report of one poll. */
export function formatProbe(p: PollProbe): string[] {
  if (!p.ok) return [`${p.poll} [${p.kind}]: FAILED after ${p.latency_ms} ms (${p.reason}): ${p.error}`];
  const nRows = Object.values(p.rows_rejected).reduce((a, b) => a + b, 0);
  const nFields = p.fields_rejected.reduce((a, f) => a + f.count, 0);
  const lines = [`${p.poll} [${p.kind}]: ok in ${p.latency_ms} ms, ${p.rows} read, ${nRows} rows rejected, ${nFields} fields rejected`];
  for (const [reason, n] of Object.entries(p.rows_rejected)) lines.push(`  rows rejected: ${reason} ×${n}`);
  for (const f of p.fields_rejected) lines.push(`  field rejected: ${f.field}: ${f.reason} ×${f.count} (e.g. ${f.example})`);
  for (const [field, forms] of Object.entries(p.fields).sort(([a], [b]) => a.localeCompare(b))) {
    const how = Object.keys(forms).join(' | ');
    const sample = p.samples[field];
    lines.push(`  ${field}: ${how}${sample !== undefined ? ` → ${String(sample)}` : ''}`);
  }
  return lines;
}

/** Runs the probe; returns the exit code. */
export async function runProbe(file: string, opts: { json?: boolean }, io: Output, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const cfg = loadConfigOrReport(file, io, (n) => `lookout: invalid config, nothing probed (${problemCount(n)})`, env);
  if (!cfg) return 1;
  const probes: PollProbe[] = [];
  for (const poll of cfg.polls) probes.push(await probePoll(cfg, poll));
  const failed = probes.filter((p) => !p.ok).length;
  // Belt and braces: whatever a server echoed back, no secret of the config leaves this process.
  const scrub = (s: string) => redact(s, cfg.secrets);
  if (opts.json) io.out(scrub(JSON.stringify({ ok: failed === 0, polls: probes }, null, 2)));
  else {
    for (const p of probes) for (const line of formatProbe(p)) io.out(scrub(line));
    io.out(failed === 0 ? `all ${probes.length} polls could be read` : `${failed} of ${probes.length} polls could not be read`);
  }
  return failed === 0 ? 0 : 1;
}
