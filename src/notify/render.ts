/** `lookout render`: what each notifier would send for an alert, without sending it. */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { systemClock } from '../clock.js';
import { loadConfig } from '../config/load.js';
import { ConfigError, LookoutError } from '../errors.js';
import { silentLogger } from '../log.js';
import type { Alert, AlertEvent, Reading, ReadingKind } from '../model.js';
import { ruleKinds } from '../rules/registry.js';
import { buildMessage, type MessageAlert, type NotificationMessage } from './message.js';
import { NotifierRegistry } from './registry.js';
import { Routing } from './routing.js';
import type { NotifierConfig } from './schema.js';

const registry = new NotifierRegistry();

function toMessageAlert(x: Alert | AlertEvent): MessageAlert {
  if ('alert' in x && 'type' in x) {
    const status = x.type === 'resolved' || (x.type === 'settled' && x.alert.state !== 'firing') ? 'resolved' : x.type === 'flapping' ? 'flapping' : 'firing';
    return { status, alert: x.alert };
  }
  return { status: x.state === 'resolved' ? 'resolved' : 'firing', alert: x };
}

/** The message a notifier of this config would send for these alerts (or events), as text; nothing is sent. */
export function renderNotification(notifierCfg: NotifierConfig, items: ReadonlyArray<Alert | AlertEvent>, opts: { name?: string; now?: number } = {}): string {
  const name = opts.name ?? notifierCfg.type;
  const alerts = items.map(toMessageAlert);
  const message: NotificationMessage = buildMessage({
    dedupKey: 'lk-render-preview',
    notifier: name,
    groupKey: 'render',
    groupLabels: { rule: alerts[0]?.alert.rule ?? '' },
    alerts,
    createdAt: opts.now ?? systemClock.now(),
  });
  return registry.render(name, notifierCfg, message, { clock: systemClock, log: silentLogger });
}

/** Options of {@link runRenderCommand}. */
export interface RenderCommandOptions {
  configFile: string;
  /** Rule name. */
  rule: string;
  /** A YAML or JSON file: `{ kind?, entity?, at?, labels: {...}, fields: {...} }` (or the fields at the top level). */
  fixture: string;
  out?: { write(text: string): unknown };
  err?: { write(text: string): unknown };
  now?: number;
}

const READS: Record<string, ReadingKind> = { unverified_position: 'position', stale_benchmark: 'benchmark' };

function lookup(root: Record<string, unknown>, path: string): unknown {
  let cur: unknown = root;
  for (const part of path.split('.')) cur = cur && typeof cur === 'object' ? (cur as Record<string, unknown>)[part] : undefined;
  return cur;
}

/** Minimal `{{path | pct}}` templating for the preview (the alert engine renders the real annotations). */
export function previewTemplate(text: string, scope: Record<string, unknown>): string {
  return text.replace(/\{\{\s*([\w.]+)\s*(?:\|\s*(\w+)\s*)?\}\}/g, (_, path: string, filter?: string) => {
    const v = lookup(scope, path);
    if (v === undefined || v === null) return '';
    if (filter === 'pct' && typeof v === 'number') return `${(v * 100).toFixed(2)}%`;
    return String(v);
  });
}

/** Reads a fixture file into a reading for `ruleKind`. */
export function readFixture(file: string, ruleKind: string, now: number): Reading {
  const raw = parseYaml(readFileSync(file, 'utf8')) as Record<string, unknown> | null;
  if (!raw || typeof raw !== 'object') throw new LookoutError('E_BAD_REQUEST', `${file}: a fixture is a YAML/JSON object with labels and fields`);
  const fields = (raw.fields as Record<string, unknown> | undefined) ?? Object.fromEntries(Object.entries(raw).filter(([k]) => !['kind', 'entity', 'at', 'labels'].includes(k)));
  const labels = Object.fromEntries(Object.entries((raw.labels as Record<string, unknown>) ?? {}).map(([k, v]) => [k, String(v)]));
  const entity = String(raw.entity ?? fields.market_id ?? fields.id ?? labels.market_id ?? 'fixture');
  return {
    kind: (raw.kind as ReadingKind | undefined) ?? READS[ruleKind] ?? 'market',
    entity,
    at: typeof raw.at === 'number' ? raw.at : typeof raw.at === 'string' ? Date.parse(raw.at) : now,
    labels,
    fields,
  };
}

/** Prints, for every configured notifier, the firing and the resolved message it would send for the fixture; 0 on success. */
export async function runRenderCommand(opts: RenderCommandOptions): Promise<number> {
  const out = opts.out ?? process.stdout;
  const err = opts.err ?? process.stderr;
  const now = opts.now ?? systemClock.now();
  try {
    const config = loadConfig(opts.configFile);
    const loaded = config.rules.find((r) => r.rule.name === opts.rule);
    if (!loaded) throw new LookoutError('E_BAD_REQUEST', `no rule named '${opts.rule}' in ${opts.configFile}`);
    const rule = loaded.rule;
    const reading = readFixture(opts.fixture, rule.kind, now);
    const kind = ruleKinds.find((k) => k.kind === rule.kind) as { evaluate?: (i: unknown) => { status: string; value?: number | null; threshold?: number | null; previous?: number | null } } | undefined;
    let value = typeof reading.fields.value === 'number' ? reading.fields.value : null;
    let threshold = typeof rule.threshold === 'number' ? rule.threshold : typeof rule.value === 'number' ? rule.value : null;
    let previous: number | null = null;
    if (typeof kind?.evaluate === 'function') {
      const verdict = kind.evaluate({ rule, reading, now, active: false, history: { at: () => undefined, range: () => [] } });
      if (verdict.status !== 'breach') out.write(`note: rule '${rule.name}' judges this reading '${verdict.status}': it would not fire on it\n`);
      value = verdict.value ?? value;
      threshold = verdict.threshold ?? threshold;
      previous = verdict.previous ?? null;
    } else if (typeof rule.field === 'string' && typeof reading.fields[rule.field] === 'number') {
      value = reading.fields[rule.field] as number;
    } else if (value === null) {
      for (const f of ['utilization', 'borrow_apy', 'value_usd']) if (typeof reading.fields[f] === 'number') value = reading.fields[f] as number;
    }
    const labels: Record<string, string> = { ...reading.labels, ...rule.labels, rule: rule.name, alertname: rule.name, severity: rule.severity };
    const scope = { ...reading.fields, labels, value, threshold };
    const annotations = Object.fromEntries(Object.entries(rule.annotations).map(([k, v]) => [k, previewTemplate(v, scope)]));
    const alert: Alert = {
      fingerprint: 'render',
      rule: rule.name,
      kind: rule.kind,
      entity: reading.entity,
      state: 'firing',
      flapping: false,
      severity: rule.severity,
      labels,
      annotations,
      value,
      threshold,
      previous_value: previous,
      peak: value,
      data_at: reading.at,
      block: typeof reading.fields.block === 'number' ? reading.fields.block : null,
      pending_since: now - rule.for,
      firing_since: now,
      resolved_at: null,
      last_eval_at: now,
      last_notified_at: null,
      absent_polls: 0,
      changes: [],
    };
    const resolved: Alert = { ...alert, state: 'resolved', resolved_at: now + 3_600_000 };
    const routing = new Routing({ routes: config.routes, notifiers: config.notifiers, ruleNotify: (r) => (r === rule.name ? rule.notify : undefined) });
    const routed = new Set(routing.destinations(alert).destinations.map((d) => d.notifier));
    const names = Object.keys(config.notifiers);
    if (names.length === 0) out.write('no notifiers configured; showing the console notifier\n');
    const list: Array<[string, NotifierConfig]> = names.length ? Object.entries(config.notifiers) : [['console', { type: 'console', color: 'never' }]];
    for (const [name, cfg] of list) {
      out.write(`=== ${name} (${cfg.type})${names.length && !routed.has(name) ? ' — not on this alert’s route' : ''} ===\n`);
      out.write(`--- firing ---\n${renderNotification(cfg, [alert], { name, now })}\n`);
      out.write(`--- resolved ---\n${renderNotification(cfg, [resolved], { name, now: now + 3_600_000 })}\n\n`);
    }
    return 0;
  } catch (e) {
    err.write(`lookout render: ${(e as Error).message}\n`);
    return e instanceof ConfigError || e instanceof LookoutError ? 1 : 2;
  }
}
