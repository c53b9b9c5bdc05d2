/**
 * Runs one alert timeline side by side, in real time: through lookout's notification pipeline (the real outbox,
 * dispatcher, silences and SQLite, its webhook notifier) and through a real Alertmanager (alerts posted the way
 * Prometheus posts them, silences through its API), each into its own webhook sink. Both use the same route
 * (group_by, group_wait, group_interval, repeat_interval, send_resolved) and the same inhibit rule; lookout runs with
 * `send_resolved_when_muted: false`, its one setting that departs from Alertmanager on purpose.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Alert, AlertEvent } from '../../src/model.js';
import { createNotifications, type Notifications } from '../../src/notify/index.js';
import type { Store } from '../../src/store/index.js';
import { alert, event, notifier, route, tempStores } from '../notify-helpers.js';
import { actionsOf, type Timeline, type TimelineAlert } from './timeline.js';
import { freePort } from '../fixtures/daemon/harness.js';

/** The shared timing (ms): events fall half-way between flush ticks (see timeline.ts). */
export const TIMING = { group_wait: 1000, group_interval: 2000, repeat_interval: 11000 };
// repeat_interval is not a multiple of group_interval: at a tick exactly repeat_interval after the last message, whether
// Alertmanager repeats would race its own notification-log timestamp against the tick.

/** One notification as compared: the group, its status, and the alerts listed firing and resolved. */
export interface Notice {
  at: number;
  group: string;
  status: string;
  firing: string[];
  resolved: string[];
}

interface WebhookBody {
  status: string;
  groupLabels: Record<string, string>;
  alerts: Array<{ status: string; labels: Record<string, string> }>;
}

/** A loopback server collecting webhook posts, sorted by run. */
export class Sink {
  private server: Server | undefined;
  readonly byRun = new Map<string, Notice[]>();
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      let text = '';
      req.on('data', (c) => (text += c));
      req.on('end', () => {
        const at = Date.now();
        try {
          const b = JSON.parse(text) as WebhookBody;
          const run = b.groupLabels.run ?? '';
          const names = (status: string) => b.alerts.filter((a) => a.status === status).map((a) => a.labels.market_id || a.labels.alertname || '?').sort();
          const list = this.byRun.get(run) ?? [];
          list.push({ at, group: b.groupLabels.rule ?? '', status: b.status, firing: names('firing'), resolved: names('resolved') });
          this.byRun.set(run, list);
        } catch {
          // not a webhook body: ignored
        }
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}/`;
    return this;
  }

  async stop(): Promise<void> {
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}

/** A real Alertmanager with the route and inhibit rule the timelines use. */
export class AlertmanagerUnderTest {
  private proc: ChildProcess | undefined;
  private dir = '';
  base = '';
  log = '';

  async start(binary: string, sinkUrl: string): Promise<this> {
    this.dir = mkdtempSync(join(tmpdir(), 'lookout-diff-am-'));
    const s = (ms: number) => `${ms / 1000}s`;
    writeFileSync(
      join(this.dir, 'am.yml'),
      [
        'route:',
        '  receiver: sink',
        '  group_by: [run, rule]',
        `  group_wait: ${s(TIMING.group_wait)}`,
        `  group_interval: ${s(TIMING.group_interval)}`,
        `  repeat_interval: ${s(TIMING.repeat_interval)}`,
        'receivers:',
        '  - name: sink',
        '    webhook_configs:',
        `      - url: ${JSON.stringify(sinkUrl)}`,
        '        send_resolved: true',
        'inhibit_rules:',
        '  - source_matchers: [\'alertname="source_down"\']',
        '    target_matchers: [\'alertname!="source_down"\']',
        '    equal: [run, poll]',
        '',
      ].join('\n'),
    );
    const port = await freePort();
    this.base = `http://127.0.0.1:${port}`;
    this.proc = spawn(binary, [`--config.file=${join(this.dir, 'am.yml')}`, `--storage.path=${this.dir}`, `--web.listen-address=127.0.0.1:${port}`, '--cluster.listen-address='], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    this.proc.stderr!.on('data', (c: Buffer) => (this.log = (this.log + c.toString()).slice(-20_000)));
    const deadline = Date.now() + 20_000;
    for (;;) {
      if (await fetch(`${this.base}/-/ready`).then((r) => r.ok, () => false)) return this;
      if (Date.now() > deadline || this.proc.exitCode !== null) throw new Error(`alertmanager did not become ready: ${this.log.slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async post(alerts: Array<{ labels: Record<string, string>; startsAt: number; endsAt: number }>): Promise<void> {
    if (alerts.length === 0) return;
    const body = alerts.map((a) => ({
      labels: Object.fromEntries(Object.entries(a.labels).filter(([, v]) => v !== '')),
      annotations: {},
      startsAt: new Date(a.startsAt).toISOString(),
      endsAt: new Date(a.endsAt).toISOString(),
    }));
    const r = await fetch(`${this.base}/api/v2/alerts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (!r.ok) throw new Error(`alertmanager refused alerts: ${r.status} ${await r.text()}`);
  }

  async silence(matchers: Record<string, string>, until: number): Promise<string> {
    const r = await fetch(`${this.base}/api/v2/silences`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        matchers: Object.entries(matchers).map(([name, value]) => ({ name, value, isRegex: false, isEqual: true })),
        startsAt: new Date().toISOString(),
        endsAt: new Date(until).toISOString(),
        createdBy: 'differential',
        comment: 'differential test',
      }),
    });
    if (!r.ok) throw new Error(`alertmanager refused a silence: ${r.status} ${await r.text()}`);
    return ((await r.json()) as { silenceID: string }).silenceID;
  }

  async expire(id: string): Promise<void> {
    const r = await fetch(`${this.base}/api/v2/silence/${id}`, { method: 'DELETE' });
    if (!r.ok) throw new Error(`alertmanager could not expire silence ${id}: ${r.status}`);
  }

  stop(): void {
    this.proc?.kill('SIGKILL');
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
  }
}

/** lookout's side of one run: a store, the notification pipeline on the real clock, and the engine's firing set. */
class LookoutSide {
  private store: Store;
  private n: Notifications;
  readonly firing = new Map<string, Alert>();

  constructor(
    private readonly stores: ReturnType<typeof tempStores>,
    private readonly sinkUrl: string,
    private readonly sendResolvedWhenMuted: boolean,
  ) {
    this.store = stores.open();
    this.n = this.pipeline();
    this.n.dispatcher.start();
  }

  private pipeline(): Notifications {
    return createNotifications({
      db: this.store.db,
      config: {
        notifiers: { sink: notifier({ type: 'webhook', url: this.sinkUrl }) },
        routes: [route({ default: true, notify: ['sink'], group_by: ['run', 'rule'], ...msTiming(), send_resolved: true, send_resolved_when_muted: this.sendResolvedWhenMuted })],
        inhibit: [{ source_match: { alertname: 'source_down' }, source_match_re: {}, target_match: {}, target_match_re: { alertname: '(?!source_down$).*' }, equal: ['run', 'poll'] }],
        delivery: { backoff: 200, max_backoff: 1000, give_up_after: 60_000 },
        watchdog: { enabled: false, severity: 'info' },
      },
      alerts: { firing: () => [...this.firing.values()], markNotified: () => undefined },
    });
  }

  /** What the alert engine does: change the firing set and enqueue the event in one transaction. */
  apply(e: AlertEvent): void {
    this.store.transaction(() => {
      if (e.type === 'firing') this.firing.set(e.alert.fingerprint, e.alert);
      else this.firing.delete(e.alert.fingerprint);
      this.n.outbox.enqueue([e], Date.now());
    });
    this.n.dispatcher.wake();
  }

  silence(matchers: Record<string, string>, until: number): string {
    const s = this.n.silences.add({ matchers: Object.entries(matchers).map(([name, value]) => ({ name, op: '=', value })), endsAt: until, author: 'differential', comment: 'differential test' });
    this.n.dispatcher.wake();
    return s.id;
  }

  expire(id: string): void {
    this.n.silences.expire(id);
    this.n.dispatcher.wake();
  }

  /** A daemon restart: the dispatcher stops, the database closes and reopens, the pipeline is built again. */
  async restart(): Promise<void> {
    await this.n.close();
    const path = this.store.path;
    this.store.close();
    this.store = this.stores.reopen(path);
    this.n = this.pipeline();
    this.n.dispatcher.start();
  }

  async close(): Promise<void> {
    await this.n.close();
    this.store.close();
  }
}

function msTiming() {
  const s = (ms: number) => `${ms}ms`;
  return { group_wait: s(TIMING.group_wait), group_interval: s(TIMING.group_interval), repeat_interval: s(TIMING.repeat_interval) };
}

/** The lookout alert of a timeline alert (or of the source_down alert) in run `run`. */
function lookoutAlert(run: string, a: TimelineAlert | 'source_down', firedAt: number): Alert {
  if (a === 'source_down') return alert('source_down', `${run}/p1`, { kind: 'source_down', firing_since: firedAt }, { run, poll: 'p1', market_id: '' });
  return alert(a.rule, a.entity, { firing_since: firedAt, fingerprint: `${run}/${a.rule}/${a.entity}` }, { run, poll: a.poll });
}

/** Options of {@link runTimeline}. */
export interface RunOptions {
  run: string;
  am: AlertmanagerUnderTest;
  lookoutSink: Sink;
  stores: ReturnType<typeof tempStores>;
  sendResolvedWhenMuted?: boolean;
  /** How often the Prometheus-like sender re-posts firing alerts, ms. */
  resendMs?: number;
}

/** Runs a timeline on both sides in real time; resolves when both have had time for their last flush. */
export async function runTimeline(t: Timeline, o: RunOptions): Promise<void> {
  const slot = TIMING.group_interval;
  const start = Date.now() + 300;
  const lookout = new LookoutSide(o.stores, o.lookoutSink.url, o.sendResolvedWhenMuted ?? false);
  // The Prometheus side: every firing alert re-posted each evaluation with endsAt ahead; a resolve as endsAt now.
  const amFiring = new Map<string, { labels: Record<string, string>; startsAt: number }>();
  const resendMs = o.resendMs ?? 1000;
  const resend = setInterval(() => {
    const now = Date.now();
    void o.am.post([...amFiring.values()].map((a) => ({ ...a, endsAt: now + 4 * resendMs }))).catch(() => undefined);
  }, resendMs);
  const lookoutSilences = new Map<number, string>();
  const amSilences = new Map<number, string>();
  const firedAt = new Map<string, number>();
  try {
    const actions = actionsOf(t);
    const last = Math.max(t.slots, ...actions.map((a) => a.at + 1));
    for (const a of actions) {
      // Half-way between ticks: a group's ticks fall on whole slots (see timeline.ts).
      const due = start + a.at * slot + slot / 2;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const now = Date.now();
      if (a.do === 'fire' || a.do === 'resolve' || a.do === 'down' || a.do === 'up') {
        const which = 'alert' in a ? a.alert : 'source_down';
        const key = which === 'source_down' ? 'source_down' : which.entity;
        if (a.do === 'fire' || a.do === 'down') firedAt.set(key, now);
        const la = lookoutAlert(o.run, which, firedAt.get(key) ?? now);
        const firing = a.do === 'fire' || a.do === 'down';
        lookout.apply(event(firing ? 'firing' : 'resolved', la, now));
        if (firing) {
          amFiring.set(key, { labels: la.labels, startsAt: now });
          await o.am.post([{ labels: la.labels, startsAt: now, endsAt: now + 4 * resendMs }]);
        } else {
          amFiring.delete(key);
          await o.am.post([{ labels: la.labels, startsAt: firedAt.get(key) ?? now, endsAt: now }]);
        }
      } else if (a.do === 'silence') {
        const matchers = { run: o.run, market_id: a.silence.entity };
        const until = now + 3_600_000;
        lookoutSilences.set(a.index, lookout.silence(matchers, until));
        amSilences.set(a.index, await o.am.silence(matchers, until));
      } else if (a.do === 'unsilence') {
        const l = lookoutSilences.get(a.index);
        const m = amSilences.get(a.index);
        if (l) lookout.expire(l);
        if (m) await o.am.expire(m);
      } else {
        await lookout.restart();
      }
    }
    // Two more slots for the last flushes (and a resolve's next tick on Alertmanager's side).
    const end = start + (last + 2) * slot + slot / 2;
    await new Promise((r) => setTimeout(r, Math.max(0, end - Date.now())));
  } finally {
    clearInterval(resend);
    await lookout.close();
  }
}
