/** The `webhook` notifier: a JSON POST of Alertmanager's webhook payload (version 4), optional bearer token and HMAC signature. */
import { createHmac } from 'node:crypto';
import type { NotifierModule } from '../notifier-module.js';
import type { NotificationMessage } from '../message.js';
import { evidence, valueUnit } from '../format.js';
import { postJson } from './http.js';

/** Header carrying the stable dedup key of a message. */
export const DEDUP_HEADER = 'X-Lookout-Dedup-Key';
/** Header carrying `sha256=<hex HMAC-SHA256 of the body>` when `hmac_secret` is set. */
export const SIGNATURE_HEADER = 'X-Lookout-Signature';

const iso = (ms: number | null | undefined) => (ms === null || ms === undefined ? '0001-01-01T00:00:00Z' : new Date(ms).toISOString());

/**
 * Alertmanager's webhook payload (version 4), plus `dedupKey` and each alert's evidence under `lookout`: the raw values in
 * `unit` (fraction, seconds, usd or number) and `evidence`, the same texts the other notifiers show (`value: "20s"`).
 */
export function webhookPayload(receiver: string, m: NotificationMessage, externalUrl = ''): Record<string, unknown> {
  return {
    version: '4',
    groupKey: m.groupKey,
    truncatedAlerts: 0,
    status: m.status,
    receiver,
    groupLabels: m.groupLabels,
    commonLabels: m.commonLabels,
    commonAnnotations: m.commonAnnotations,
    externalURL: externalUrl,
    dedupKey: m.dedupKey,
    alerts: m.alerts.map((ma) => {
      const { status, alert: a } = ma;
      return {
        status: status === 'resolved' ? 'resolved' : 'firing',
        labels: a.labels,
        annotations: a.annotations,
        startsAt: iso(a.firing_since ?? a.pending_since),
        endsAt: status === 'resolved' ? iso(a.resolved_at) : '0001-01-01T00:00:00Z',
        generatorURL: ma.url ?? externalUrl,
        fingerprint: a.fingerprint,
        lookout: {
          flapping: status === 'flapping',
          kind: a.kind,
          entity: a.entity,
          value: a.value,
          threshold: a.threshold,
          previous_value: a.previous_value,
          peak: a.peak,
          unit: ma.unit ?? valueUnit(a.kind),
          data_at: a.data_at === null ? null : iso(a.data_at),
          block: a.block,
          evidence: Object.fromEntries(evidence(ma)),
        },
      };
    }),
  };
}

/** Signs a body: `sha256=` + hex HMAC-SHA256 with the shared secret. */
export function signBody(secret: string, body: string): string {
  return 'sha256=' + createHmac('sha256', secret).update(body).digest('hex');
}

/** The webhook notifier module. */
export const webhookNotifier = {
  type: 'webhook',
  create(name, cfg, deps) {
    return {
      name,
      type: 'webhook',
      async send(message, signal) {
        const body = JSON.stringify(webhookPayload(name, message, cfg.external_url));
        const headers: Record<string, string> = { ...cfg.headers, [DEDUP_HEADER]: message.dedupKey };
        if (cfg.bearer_token) headers.authorization = `Bearer ${cfg.bearer_token}`;
        if (cfg.hmac_secret) headers[SIGNATURE_HEADER] = signBody(cfg.hmac_secret, body);
        await postJson(cfg.url, body, { notifier: name, what: 'webhook', headers, timeoutMs: cfg.timeout, signal, ...(deps.dispatcher ? { dispatcher: deps.dispatcher } : {}) });
      },
    };
  },
  render(name, cfg, message) {
    const headers = [`${DEDUP_HEADER}: ${message.dedupKey}`];
    if (cfg.bearer_token) headers.push('Authorization: Bearer [redacted]');
    if (cfg.hmac_secret) headers.push(`${SIGNATURE_HEADER}: sha256=…`);
    return `POST [webhook url]\n${headers.join('\n')}\n\n${JSON.stringify(webhookPayload(name, message, cfg.external_url), null, 2)}`;
  },
} satisfies NotifierModule<'webhook'>;
