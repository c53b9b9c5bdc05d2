/**
 * The performance body → `performance` readings: entity `organization` for the roll-up, and one per
 * wallet (entity = the wallet address) when the body lists wallets. Known figures are read one by one
 * (an unreadable one is unknown and a field rejection); other members are kept as they came.
 */
import type { Reading, Rejection } from '../../model.js';
import { normalizeExtra } from '../values.js';
import { RowReader, isObject, unreadableOf } from '../read/fields.js';
import { leanNumber, leanString } from '../read/numbers.js';
import { FormCounts, type SeenForms } from '../read/seen.js';
import { setOwn } from '../../own.js';

const FIGURES = ['nav_usd', 'value_usd', 'pnl_usd', 'roi', 'twr', 'apr', 'apy'];
const ADDRESS = ['wallet', 'wallet_address', 'address'];

/** Figures read one by one (unreadable → null and a field rejection); every other member with numeric strings read as numbers. */
function readFigures(raw: Record<string, unknown>, fr: RowReader): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(raw)) if (!FIGURES.includes(k) && !ADDRESS.includes(k)) setOwn(out, k, normalizeExtra(v));
  for (const k of FIGURES) if (k in raw) out[k] = fr.read(k, raw[k], leanNumber);
  return out;
}

/** Readings of one performance response (null body — a 404 — gives none). */
export function performanceReadings(body: unknown, pollTime: number): { readings: Reading[]; rejected: Rejection[]; seen: SeenForms } {
  const readings: Reading[] = [];
  const rejected: Rejection[] = [];
  if (body === null || body === undefined) return { readings, rejected, seen: {} };
  const root = isObject(body) && isObject(body.data) ? body.data : body;
  if (!isObject(root)) return { readings, rejected: [{ reason: 'invalid_field', detail: 'performance: the body is not an object' }], seen: {} };
  const counts = new FormCounts();
  const fr = new RowReader(counts);
  const period: Record<string, unknown> = {};
  for (const k of ['from', 'to']) if (typeof root[k] === 'string') period[k] = root[k];

  const org = isObject(root.organization) ? root.organization : 'pnl_usd' in root || 'roi' in root ? root : undefined;
  if (org) {
    fr.start('organization');
    const { wallets: _w, data: _d, organization: _o, ...fields } = readFigures(org, fr);
    rejected.push(...fr.rejected);
    fr.keep();
    readings.push({ kind: 'performance', entity: 'organization', at: pollTime, labels: { scope: 'organization' }, fields: { ...period, ...fields }, ...unreadableOf(fr.rejected) });
  }

  const wallets = Array.isArray(root.wallets) ? root.wallets : [];
  for (const raw of wallets) {
    const r = isObject(raw) ? raw : {};
    fr.start(''); // the row names its wallet only once read
    const wallet = ADDRESS.map((k) => fr.read(k, r[k], leanString) as string | null).find((w) => w !== null);
    if (!wallet) {
      rejected.push({ reason: 'missing_id', detail: 'performance wallet row without a wallet address' });
      continue;
    }
    const fields = readFigures(r, fr);
    const own = fr.rejectedAs(wallet);
    rejected.push(...own);
    fr.keep();
    readings.push({ kind: 'performance', entity: wallet, at: pollTime, labels: { scope: 'wallet', wallet }, fields: { ...period, ...fields, wallet }, ...unreadableOf(own) });
  }
  return { readings, rejected, seen: counts.toSeenForms() };
}
