/**
 * The soak's world: the simulator, a Slack recorder, a webhook recorder and a real SMTP server on loopback, with all
 * four secrets lookout must never repeat (API key, SMTP password, webhook URL, server token) set in its config.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { SimHandle, SlackRecorder, writeConfig } from '../fixtures/daemon/world.js';
import { startSmtpRecorder, type SmtpRecorder } from '../smtp-recorder.js';

/** The four secrets of the soak config; none may appear in anything lookout produces. */
export const SECRETS = {
  'API key': 'soak-api-key-Q7v2Lr9x',
  'SMTP password': 'soak-smtp-pass-Hk4mZ8w1',
  'webhook URL': '/hooks/soak-webhook-secret-Jd3Pq6',
  'server token': 'soak-server-token-Xc5Nt0b8',
} as const;

/** A loopback HTTP server that keeps every body posted to it and answers 200. */
export class BodyRecorder {
  readonly bodies: string[] = [];
  private server: Server | undefined;
  url = '';

  /** Starts on a free port; the URL ends in `path`. */
  async start(path: string): Promise<this> {
    this.server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString()));
      req.on('end', () => {
        this.bodies.push(raw);
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
    return this;
  }

  /** Stops the server. */
  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}

/** Everything the soak runs against, and the config file that points the daemon at it. */
export interface SoakWorld {
  sim: SimHandle;
  slack: SlackRecorder;
  hook: BodyRecorder;
  smtp: SmtpRecorder;
  file: string;
  db: string;
  retentionMs: number;
  stop(): Promise<void>;
}

/** Starts the world in `dir`: three polls every second, rules of three kinds, Slack + email + webhook on every route. */
export async function startWorld(dir: string, retention = '3m'): Promise<SoakWorld> {
  const sim = await SimHandle.start({ scenario: 'utilization_spike', startedAt: Date.now() - 60_000, apiKey: SECRETS['API key'] });
  const slack = await new SlackRecorder().start('/services/T0SOAK/B0SOAK/soak-slack-path');
  const hook = await new BodyRecorder().start(SECRETS['webhook URL']);
  const smtp = await startSmtpRecorder(SECRETS['SMTP password']);
  const db = join(dir, 'lookout.db');
  const file = writeConfig(join(dir, 'lookout.yaml'), {
    source: { base_url: sim.url, catalog_url: sim.catalogUrl, api_key: SECRETS['API key'], timeout: '2s', retries: 0, backoff: '100ms', max_backoff: '200ms' },
    storage: { path: db, retention },
    server: { listen: '127.0.0.1:0', token: SECRETS['server token'] },
    log: { level: 'info' },
    polls: [
      { name: 'markets', kind: 'metrics', cron: '*/1 * * * * *', limit: 1000 },
      { name: 'positions', kind: 'positions', cron: '*/1 * * * * *' },
      { name: 'benchmarks', kind: 'benchmarks', cron: '*/1 * * * * *', networks: 'all', codes: ['usd'], lookback: '7d' },
    ],
    rules: {
      inline: [
        { name: 'util-high', kind: 'utilization_above', severity: 'critical', threshold: 0.95, clear_below: 0.92 },
        { name: 'unverified', kind: 'unverified_position', severity: 'warning', min_value_usd: 10_000 },
        { name: 'bench-stale', kind: 'stale_benchmark', severity: 'warning', max_age: '36h', incomplete_for: '30m' },
      ],
    },
    // A tick of 1 s: the backtest places timer transitions at their deadline, live they wait for the tick.
    alerting: { tick: '1s', flap_threshold: 50 },
    source_down: { after: 3, severity: 'warning' },
    notifiers: {
      slack: { type: 'slack', webhook_url: slack.url, rate_limit: 10 },
      mail: { type: 'email', smtp: { host: '127.0.0.1', port: smtp.port, user: 'lookout', pass: SECRETS['SMTP password'] }, from: 'lookout@example.com', to: ['risk@example.com'] },
      hook: { type: 'webhook', url: hook.url },
    },
    routes: [{ default: true, notify: ['slack', 'mail', 'hook'], group_wait: '0s', group_interval: '1s', repeat_interval: '1m' }],
    delivery: { backoff: '200ms', max_backoff: '2s', give_up_after: '1h' },
  });
  const retentionMs = Number(/^(\d+)m$/.exec(retention)?.[1] ?? 3) * 60_000;
  return {
    sim,
    slack,
    hook,
    smtp,
    file,
    db,
    retentionMs,
    async stop() {
      await sim.close();
      await slack.stop();
      await hook.stop();
      await smtp.stop();
    },
  };
}
