/** Words and numbers of a notification, shared by every notifier: status, entity, evidence. Escaping is the caller's. */
import { formatDuration } from '../config/duration.js';
import type { Alert } from '../model.js';
import type { MessageAlert, NotificationMessage } from './message.js';
import { formatGrouped } from '../text-format.js';

/** Escapes untrusted text for Slack mrkdwn (and the top-level `text`): `&`, `<`, `>` — so `<!channel>` pings nobody. */
export function escapeSlack(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Escapes untrusted text for HTML content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** Cuts text to at most `max` characters, marking the cut. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : text.slice(0, Math.max(0, max - 1)) + '…';
}

/** The word people scan for: FIRING, RESOLVED or FLAPPING. */
export function statusWord(status: MessageAlert['status'] | NotificationMessage['status']): string {
  return status.toUpperCase();
}

/** The unit a judged value (value, threshold, previous, peak) is in: rule kinds report fractions, seconds, USD or plain numbers. */
export type ValueUnit = 'fraction' | 'seconds' | 'usd' | 'number';

const KIND_UNITS: Readonly<Record<string, ValueUnit>> = {
  utilization_above: 'fraction',
  apy_jump: 'fraction',
  price_deviation: 'fraction',
  oracle_lag: 'seconds',
  stale_benchmark: 'seconds',
  unverified_position: 'usd',
};

/** The unit of a `threshold` rule's field: utilization and APYs (`borrow_apy`, `apy.7day.total`) are fractions, `*_usd` is USD, else a plain number. */
export function fieldUnit(field: string | undefined): ValueUnit {
  if (!field) return 'number';
  const parts = field.split('.');
  const last = parts.at(-1) ?? '';
  if (last.endsWith('_usd')) return 'usd';
  if (last === 'utilization' || last.endsWith('apy') || parts[0] === 'apy') return 'fraction';
  return 'number';
}

/** The unit of a rule kind's values; a `threshold` rule's follows its `field` (plain number when unknown). */
export function valueUnit(kind: string, field?: string): ValueUnit {
  if (kind === 'threshold') return fieldUnit(field);
  return KIND_UNITS[kind] ?? 'number';
}

/** Formats a value in its unit: fractions as %, seconds as a duration, USD with a $, else a number without float noise. */
export function formatIn(unit: ValueUnit, v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return 'n/a';
  const z = v === 0 ? 0 : v; // never "-0"
  switch (unit) {
    case 'fraction':
      return `${noNegZero(trim((z * 100).toFixed(2)))}%`;
    case 'seconds': {
      // Under a minute keep a tenth, so a lag just past its limit does not read as equal to it (20.4s vs 20s).
      const tenths = Math.round(z * 10) / 10;
      if (Math.abs(tenths) < 1) return formatDuration(Math.round(z * 1000));
      return Math.abs(tenths) < 60 ? `${trim(tenths.toFixed(1))}s` : formatDuration(Math.round(z) * 1000);
    }
    case 'usd': {
      const text = formatGrouped(Math.abs(z), 0, 2);
      return text === '0' ? '$0' : `${z < 0 ? '-' : ''}$${text}`;
    }
    default:
      return noNegZero(trim(Math.abs(z) >= 1e6 || (z !== 0 && Math.abs(z) < 1e-3) ? z.toPrecision(6) : z.toFixed(6)));
  }
}

/** Formats a judged value in the unit of its rule kind (see {@link valueUnit}). */
export function formatValue(kind: string, v: number | null | undefined, field?: string): string {
  return formatIn(valueUnit(kind, field), v);
}

/** The unit of each alert's values from the configured rules: a `threshold` rule's comes from its `field`; others' from their kind. */
export function unitsOfRules(rules: ReadonlyArray<{ name: string; kind: string; field?: unknown }>): (alert: Alert) => ValueUnit | undefined {
  const fields = new Map<string, string>();
  for (const r of rules) if (r.kind === 'threshold' && typeof r.field === 'string') fields.set(r.name, r.field);
  return (a) => (a.kind === 'threshold' ? fieldUnit(fields.get(a.rule)) : undefined);
}

function noNegZero(s: string): string {
  return s === '-0' ? '0' : s;
}

function trim(s: string): string {
  return s.includes('.') && !s.includes('e') ? s.replace(/0+$/, '').replace(/\.$/, '') : s;
}

/** A time as people read it in a message: `2024-05-01 12:00:00 UTC`. */
export function formatTime(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return 'n/a';
  return new Date(ms).toISOString().replace('T', ' ').replace(/\.\d{3}Z$/, ' UTC');
}

/** What the alert is about: the market pair when known, else the entity. Untrusted: escape it. */
export function entityTitle(alert: Alert): string {
  const l = alert.labels;
  const loan = l.loan_asset_symbol ?? l.loan_asset;
  const coll = l.collateral_asset_symbol ?? l.collateral_asset;
  const chain = l.chain ? ` on ${l.chain}` : '';
  if (loan && coll) return `${coll}/${loan}${chain} (${alert.entity})`;
  if (l.poll && alert.kind === 'source_down') return `poll ${l.poll}`;
  return `${alert.entity}${chain}`;
}

/** One fact of the evidence, e.g. ["value", "96.5%"]. Untrusted values: escape them. */
export type Fact = [name: string, value: string];

/** The evidence of one alert, in the unit of its values (`unit`, else its kind's): value against threshold, previous value, since, data time and block; for a resolve, peak and duration. */
export function evidence(ma: MessageAlert): Fact[] {
  const a = ma.alert;
  const unit = ma.unit ?? valueUnit(a.kind);
  const facts: Fact[] = [];
  if (a.value !== null) facts.push(['value', formatIn(unit, a.value)]);
  if (a.threshold !== null) facts.push(['threshold', formatIn(unit, a.threshold)]);
  if (a.previous_value !== null) facts.push(['previous', formatIn(unit, a.previous_value)]);
  if (ma.status === 'resolved') {
    if (a.peak !== null) facts.push(['peak', formatIn(unit, a.peak)]);
    const lasted = lastedMs(a);
    if (lasted !== null) facts.push(['lasted', formatDuration(lasted)]);
    if (a.resolved_at !== null) facts.push(['resolved', formatTime(a.resolved_at)]);
  } else if (a.firing_since !== null) {
    facts.push(['since', formatTime(a.firing_since)]);
  }
  if (a.data_at !== null) facts.push(['data at', formatTime(a.data_at)]);
  if (a.block !== null) facts.push(['block', String(a.block)]);
  return facts;
}

/** How long a resolved alert fired, or null when unknown. */
export function lastedMs(a: Alert): number | null {
  return a.firing_since !== null && a.resolved_at !== null ? Math.max(0, a.resolved_at - a.firing_since) : null;
}

/** The rule(s) of a message: the common `rule` label, else the distinct rule names joined. */
export function messageRule(m: NotificationMessage): string {
  if (m.commonLabels.rule) return m.commonLabels.rule;
  const rules = [...new Set(m.alerts.map((a) => a.alert.rule))];
  return rules.length <= 3 ? rules.join(', ') : `${rules.slice(0, 3).join(', ')} +${rules.length - 3}`;
}

/** The group's label values other than the rule, `chain=base, market_id=0x…`; empty when none. */
export function groupText(m: NotificationMessage): string {
  return Object.entries(m.groupLabels)
    .filter(([k, v]) => k !== 'rule' && k !== 'alertname' && v !== '')
    .map(([k, v]) => `${k}=${v}`)
    .join(', ');
}

/** The highest severity in a message. */
export function messageSeverity(m: NotificationMessage): string {
  const order = ['info', 'warning', 'critical'];
  let best = 0;
  for (const a of m.alerts) best = Math.max(best, order.indexOf(a.alert.severity));
  return order[best] ?? 'info';
}

/** Counts by status. */
export function counts(m: NotificationMessage): { firing: number; resolved: number; flapping: number } {
  const c = { firing: 0, resolved: 0, flapping: 0 };
  for (const a of m.alerts) c[a.status]++;
  return c;
}

/** A one-line title, link-free: `FIRING:3 usdc-util (chain=base) [critical]` or `RESOLVED usdc-util`. */
export function titleLine(m: NotificationMessage): string {
  const c = counts(m);
  const g = groupText(m);
  const head = m.status === 'firing' ? `FIRING:${c.firing + c.flapping}` : 'RESOLVED';
  const extra = m.status === 'firing' && c.resolved > 0 ? `, ${c.resolved} resolved` : '';
  return `${head} ${messageRule(m)}${g ? ` (${g})` : ''} [${messageSeverity(m)}]${extra}`;
}
