/**
 * The performance body → `performance` readings: entity `organization` for the roll-up, and one per
 * wallet (entity = the wallet address) when the body lists wallets. Known figures are normalized to
 * numbers; other members are kept as they came.
 */
import { z } from 'zod';
import type { Reading, Rejection } from '../../model.js';
import { describeIssue, normalizeExtra, num, str } from '../values.js';

const figures = { nav_usd: num, value_usd: num, pnl_usd: num, roi: num, twr: num, apr: num, apy: num };
const orgSchema = z.looseObject(figures);
const walletSchema = z.looseObject({ ...figures, wallet: str, wallet_address: str, address: str });

/** Figures as parsed; every other member with numeric strings read as numbers. */
function withExtras(parsed: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(parsed)) out[k] = k in figures ? v : normalizeExtra(v);
  return out;
}

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** Readings of one performance response (null body — a 404 — gives none). */
export function performanceReadings(body: unknown, pollTime: number): { readings: Reading[]; rejected: Rejection[] } {
  const readings: Reading[] = [];
  const rejected: Rejection[] = [];
  if (body === null || body === undefined) return { readings, rejected };
  const root = isObject(body) && isObject(body.data) ? body.data : body;
  if (!isObject(root)) return { readings, rejected: [{ reason: 'invalid_field', detail: 'performance: the body is not an object' }] };
  const period: Record<string, unknown> = {};
  for (const k of ['from', 'to']) if (typeof root[k] === 'string') period[k] = root[k];

  const org = isObject(root.organization) ? root.organization : 'pnl_usd' in root || 'roi' in root ? root : undefined;
  if (org) {
    const parsed = orgSchema.safeParse(org);
    if (parsed.success) {
      const { wallets: _w, data: _d, ...fields } = withExtras(parsed.data);
      readings.push({ kind: 'performance', entity: 'organization', at: pollTime, labels: { scope: 'organization' }, fields: { ...period, ...fields } });
    } else rejected.push({ reason: 'invalid_field', entity: 'organization', detail: `performance organization: ${describeIssue(parsed.error)}` });
  }

  const wallets = Array.isArray(root.wallets) ? root.wallets : [];
  for (const raw of wallets) {
    const parsed = walletSchema.safeParse(raw);
    const rawWallet = isObject(raw) ? raw.wallet ?? raw.wallet_address ?? raw.address : undefined;
    if (!parsed.success) {
      rejected.push({ reason: 'invalid_field', ...(typeof rawWallet === 'string' ? { entity: rawWallet } : {}), detail: `performance wallet: ${describeIssue(parsed.error)}` });
      continue;
    }
    const { wallet_address, address, ...rest } = withExtras(parsed.data) as typeof parsed.data;
    const wallet = rest.wallet ?? wallet_address ?? address;
    if (!wallet) {
      rejected.push({ reason: 'missing_id', detail: 'performance wallet row without a wallet address' });
      continue;
    }
    readings.push({ kind: 'performance', entity: wallet, at: pollTime, labels: { scope: 'wallet', wallet }, fields: { ...period, ...rest, wallet } });
  }
  return { readings, rejected };
}
