/**
 * A loopback receiver of Alertmanager-format webhooks (lookout's webhook notifier and Alertmanager's webhook
 * receiver send the same version-4 payload): for each market_id, when a notification first listed it firing.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The receiver. */
export interface WebhookSink {
  url: string;
  /** market_id → when (ms) a notification first listed it firing. */
  readonly firing: ReadonlyMap<string, number>;
  /** market_id → the `startsAt` (ms) of that notification's alert: when the sender judged it firing. */
  readonly startsAt: ReadonlyMap<string, number>;
  /** Notifications received. */
  readonly received: number;
  close(): Promise<void>;
}

interface Payload {
  alerts?: Array<{ status?: string; labels?: Record<string, string>; startsAt?: string }>;
}

/** Starts a sink on a free loopback port. */
export async function startWebhookSink(): Promise<WebhookSink> {
  const firing = new Map<string, number>();
  const startsAt = new Map<string, number>();
  let received = 0;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const at = Date.now();
      received++;
      try {
        for (const a of (JSON.parse(body) as Payload).alerts ?? []) {
          const id = a.labels?.market_id;
          if (a.status === 'firing' && id && !firing.has(id)) {
            firing.set(id, at);
            startsAt.set(id, Date.parse(a.startsAt ?? ''));
          }
        }
      } catch {
        // not a webhook body: counted, nothing recorded
      }
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    firing,
    startsAt,
    get received() {
      return received;
    },
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}
