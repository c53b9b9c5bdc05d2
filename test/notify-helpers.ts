/** Shared fixtures for the notify tests: a temp store, alerts, a recording Slack server on loopback. */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../src/clock.js';
import type { Alert, AlertEvent } from '../src/model.js';
import { notifierSchema, routeSchema, type NotifierConfig, type RouteConfig } from '../src/notify/schema.js';
import { openStore, type Store } from '../src/store/index.js';

/** Opens a store on a fresh temp file (or `reopen`s one, as a restart does); `cleanup()` closes and removes them all. */
export function tempStores(): { open(): Store; reopen(path: string): Store; dir(): string; cleanup(): void } {
  const dirs: string[] = [];
  const stores: Store[] = [];
  const dir = () => {
    const d = mkdtempSync(join(tmpdir(), 'lookout-notify-'));
    dirs.push(d);
    return d;
  };
  return {
    dir,
    open() {
      const s = openStore(join(dir(), 'lookout.db'));
      stores.push(s);
      return s;
    },
    reopen(path) {
      const s = openStore(path);
      stores.push(s);
      return s;
    },
    cleanup() {
      for (const s of stores.splice(0)) s.close();
      for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
    },
  };
}

/** A firing alert of `rule` on `entity`, with evidence. */
export function alert(rule: string, entity: string, over: Partial<Alert> = {}, labels: Record<string, string> = {}): Alert {
  const t = over.firing_since ?? 1_700_000_000_000;
  return {
    fingerprint: `${rule}/${entity}`,
    rule,
    kind: 'utilization_above',
    entity,
    state: 'firing',
    flapping: false,
    severity: 'critical',
    labels: { rule, alertname: rule, severity: over.severity ?? 'critical', market_id: entity, chain: 'base', poll: 'markets', loan_asset: 'USDC', collateral_asset: 'WETH', ...labels },
    annotations: { summary: `utilization high on ${entity}` },
    value: 0.97,
    threshold: 0.95,
    previous_value: 0.93,
    peak: 0.99,
    data_at: t - 5000,
    block: 123456,
    pending_since: t - 60_000,
    firing_since: t,
    resolved_at: null,
    last_eval_at: t,
    last_notified_at: null,
    absent_polls: 0,
    changes: [],
    ...over,
  };
}

/** An event for an alert (a resolved one gets its resolved state and time). */
export function event(type: AlertEvent['type'], a: Alert, at: number): AlertEvent {
  const al = type === 'resolved' ? { ...a, state: 'resolved' as const, resolved_at: at } : a;
  return { type, at, alert: al };
}

/** A validated route. */
export function route(r: Record<string, unknown>): RouteConfig {
  return routeSchema.parse(r);
}

/** A validated notifier config. */
export function notifier(n: Record<string, unknown>): NotifierConfig {
  return notifierSchema.parse(n);
}

export { SlackRecorder, type SlackPost } from './fixtures/slack-recorder.js';

/** The dispatcher's timer seam on a manual clock: records each timer with its delay; `fireDue()` runs those due at the clock's now. */
export class ManualTimers {
  private seq = 0;
  private readonly pending = new Map<number, { fn: () => void; ms: number; at: number }>();

  constructor(private readonly clock: Clock) {}

  setTimeout(fn: () => void, ms: number): unknown {
    this.seq += 1;
    this.pending.set(this.seq, { fn, ms, at: this.clock.now() + ms });
    return this.seq;
  }

  clearTimeout(handle: unknown): void {
    this.pending.delete(handle as number);
  }

  /** The delays of the timers set and neither run nor cleared, in the order they were set. */
  delays(): number[] {
    return [...this.pending.values()].map((t) => t.ms);
  }

  /** Runs each timer due at the clock's now once, earliest first; returns how many ran. */
  fireDue(): number {
    const now = this.clock.now();
    const due = [...this.pending].filter(([, t]) => t.at <= now).sort(([, a], [, b]) => a.at - b.at);
    for (const [id, t] of due) {
      this.pending.delete(id);
      t.fn();
    }
    return due.length;
  }
}

/**
 * The timers that keep this thread's event loop alive (referenced `setTimeout`/`setInterval`s not yet run or cleared),
 * counted: compared before and after, a difference is a timer left behind.
 */
export function activeTimers(): number {
  return process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
}

/** A loopback port nothing listens on (bound, then closed): a connection to it is refused. */
export async function closedPort(): Promise<number> {
  const s = createTcpServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}
