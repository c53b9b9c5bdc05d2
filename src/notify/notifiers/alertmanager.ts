/** The `alertmanager` notifier: POST /api/v2/alerts to every peer; firing alerts are re-posted every resend_interval. */
import { NotifyError } from '../../errors.js';
import type { NotifierModule } from '../notifier-module.js';
import type { NotificationMessage } from '../message.js';
import { evidence } from '../format.js';
import { postJson } from './http.js';
import { ENTITY_ANNOTATION } from '../adopt.js';

const LABEL_NAME = /[^A-Za-z0-9_]/g;

function labelName(name: string): string {
  const s = name.replace(LABEL_NAME, '_');
  return /^[A-Za-z_]/.test(s) ? s : `_${s}`;
}

/** Alertmanager's postable alerts; a firing alert's endsAt is 4× resend_interval ahead (as Prometheus does), a resolved one's is its resolve time. */
export function alertmanagerAlerts(m: NotificationMessage, resendInterval: number, externalUrl = ''): Array<Record<string, unknown>> {
  return m.alerts.map((ma) => {
    const a = ma.alert;
    const labels: Record<string, string> = {};
    for (const [k, v] of Object.entries(a.labels)) if (v !== '') labels[labelName(k)] = v;
    labels.alertname ??= a.rule;
    const annotations: Record<string, string> = { ...a.annotations, lookout_dedup_key: m.dedupKey, [ENTITY_ANNOTATION]: a.entity };
    for (const [k, v] of evidence(ma)) annotations[labelName(k)] = v;
    const endsAt = ma.status === 'resolved' ? (a.resolved_at ?? m.createdAt) : m.createdAt + 4 * resendInterval;
    return {
      labels,
      annotations,
      startsAt: new Date(a.firing_since ?? a.pending_since ?? m.createdAt).toISOString(),
      endsAt: new Date(endsAt).toISOString(),
      ...(ma.url || externalUrl ? { generatorURL: ma.url ?? externalUrl } : {}),
    };
  });
}

/** The alertmanager notifier module: delivered when at least one peer accepts (peers gossip their notification log). */
export const alertmanagerNotifier = {
  type: 'alertmanager',
  create(name, cfg, deps) {
    return {
      name,
      type: 'alertmanager',
      async send(message, signal) {
        const body = JSON.stringify(alertmanagerAlerts(message, cfg.resend_interval, cfg.external_url));
        const results = await Promise.allSettled(
          cfg.urls.map((u, i) =>
            postJson(new URL('api/v2/alerts', u.endsWith('/') ? u : u + '/').toString(), body, {
              notifier: name,
              what: `alertmanager peer ${i + 1}`,
              headers: { 'X-Lookout-Dedup-Key': message.dedupKey },
              timeoutMs: cfg.timeout,
              signal,
              ...(deps.dispatcher ? { dispatcher: deps.dispatcher } : {}),
            }),
          ),
        );
        const failures = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as NotifyError] : []));
        if (failures.length === 0) return;
        if (failures.length < results.length) {
          deps.log.warn('alertmanager_peer_failed', { notifier: name, errors: failures.map((f) => f.message) });
          return;
        }
        const retryable = failures.some((f) => f.retryable);
        const after = failures.map((f) => f.retryAfterMs).filter((x): x is number => x !== undefined);
        throw new NotifyError(failures.map((f) => f.message).join('; '), {
          notifier: name,
          retryable,
          ...(after.length ? { retryAfterMs: Math.max(...after) } : {}),
          cause: failures[0],
        });
      },
    };
  },
  render(_name, cfg, message) {
    return `POST {alertmanager}/api/v2/alerts (to each of ${cfg.urls.length} peer(s))\n${JSON.stringify(alertmanagerAlerts(message, cfg.resend_interval, cfg.external_url), null, 2)}`;
  },
} satisfies NotifierModule<'alertmanager'>;
