/** The `email` notifier: SMTP via nodemailer (STARTTLS/auth options), a text and an HTML part. */
import type { Transporter } from 'nodemailer';
import { NotifyError, redact } from '../../errors.js';
import type { NotifierModule } from '../notifier-module.js';
import type { NotificationMessage } from '../message.js';
import { counts, entityTitle, escapeHtml, evidence, formatTime, groupText, messageRule, messageSeverity } from '../format.js';

/** `[FIRING:n] rule (group)` or `[RESOLVED] rule (group)` (SPEC §4). */
export function emailSubject(m: NotificationMessage): string {
  const c = counts(m);
  const g = groupText(m);
  const head = m.status === 'firing' ? `[FIRING:${c.firing + c.flapping}]` : '[RESOLVED]';
  return `${head} ${messageRule(m)}${g ? ` (${g})` : ''}`.replace(/[\r\n]+/g, ' ');
}

/** The plain-text body. */
export function emailText(m: NotificationMessage): string {
  const lines = [`${emailSubject(m)} — severity ${messageSeverity(m)}`, ''];
  for (const ma of m.alerts) {
    const a = ma.alert;
    lines.push(`${ma.status.toUpperCase()} ${a.severity} ${a.rule} — ${entityTitle(a)}`);
    for (const [k, v] of evidence(ma)) lines.push(`  ${k}: ${v}`);
    if (a.annotations.summary) lines.push(`  summary: ${a.annotations.summary}`);
    if (a.annotations.description) lines.push(`  description: ${a.annotations.description}`);
    lines.push(`  labels: ${Object.entries(a.labels).map(([k, v]) => `${k}=${v}`).join(', ')}`);
    if (ma.url) lines.push(`  chart and history: ${ma.url}`);
    lines.push('');
  }
  lines.push(`sent by lookout at ${formatTime(m.createdAt)} · dedup key ${m.dedupKey}`);
  return lines.join('\n');
}

/** The HTML body; every value from the data service is escaped. */
export function emailHtml(m: NotificationMessage): string {
  const colour = m.status === 'resolved' ? '#2e7d32' : ({ critical: '#c62828', warning: '#ef6c00', info: '#1565c0' }[messageSeverity(m)] ?? '#333');
  const rows = m.alerts
    .map((ma) => {
      const a = ma.alert;
      const facts = evidence(ma)
        .map(([k, v]) => `<tr><td style="color:#666;padding-right:12px">${escapeHtml(k)}</td><td><b>${escapeHtml(v)}</b></td></tr>`)
        .join('');
      const ann = [a.annotations.summary, a.annotations.description]
        .filter((x): x is string => !!x)
        .map((x) => `<p style="margin:4px 0">${escapeHtml(x)}</p>`)
        .join('');
      const labels = Object.entries(a.labels)
        .map(([k, v]) => `<code>${escapeHtml(k)}=${escapeHtml(v)}</code>`)
        .join(' ');
      return (
        `<div style="border-left:4px solid ${ma.status === 'resolved' ? '#2e7d32' : colour};padding:4px 12px;margin:12px 0">` +
        `<h3 style="margin:0">${escapeHtml(ma.status.toUpperCase())} ${escapeHtml(a.severity)} · ${escapeHtml(a.rule)} · ${escapeHtml(entityTitle(a))}</h3>` +
        `<table>${facts}</table>${ann}<p style="font-size:12px;color:#666">${labels}</p>` +
        (ma.url ? `<p style="margin:4px 0"><a href="${escapeHtml(ma.url)}">chart and history</a></p>` : '') +
        `</div>`
      );
    })
    .join('\n');
  return (
    `<!DOCTYPE html><html><body style="font-family:sans-serif">` +
    `<h2 style="color:${colour}">${escapeHtml(emailSubject(m))}</h2>\n${rows}\n` +
    `<p style="font-size:11px;color:#999">sent by lookout at ${escapeHtml(formatTime(m.createdAt))} · dedup key ${escapeHtml(m.dedupKey)}</p>` +
    `</body></html>`
  );
}

/** The email notifier module. */
export const emailNotifier = {
  type: 'email',
  create(name, cfg) {
    const s = cfg.smtp;
    const options = {
      host: s.host,
      port: s.port,
      secure: s.secure,
      requireTLS: s.require_tls,
      ...(s.user ? { auth: { user: s.user, pass: s.pass ?? '' } } : {}),
      tls: { rejectUnauthorized: s.tls_reject_unauthorized },
      connectionTimeout: cfg.timeout,
      greetingTimeout: cfg.timeout,
      socketTimeout: cfg.timeout,
    };
    // nodemailer is loaded with the first message: it is ~15 MB of memory a daemon without email never needs (B6s).
    let transport: Promise<Transporter> | undefined;
    const open = () => (transport ??= import('nodemailer').then((m) => m.default.createTransport(options)));
    // The password as AUTH PLAIN (with the user) and AUTH LOGIN (alone) send it in base64: a relay may echo either.
    const base64 = (t: string) => Buffer.from(t).toString('base64');
    const secrets = [s.pass, s.user && s.pass ? base64(`\0${s.user}\0${s.pass}`) : undefined, s.pass ? base64(s.pass) : undefined];
    return {
      name,
      type: 'email',
      async send(message, signal) {
        if (signal.aborted) throw new NotifyError(`${name}: aborted`, { notifier: name, retryable: true });
        const aborted = new Promise<never>((_, reject) => {
          signal.addEventListener('abort', () => reject(new NotifyError(`${name}: aborted`, { notifier: name, retryable: true })), { once: true });
        });
        try {
          const sending = open().then((t) =>
            t.sendMail({
              from: cfg.from,
              to: cfg.to,
              subject: emailSubject(message),
              text: emailText(message),
              html: emailHtml(message),
              messageId: `<${message.dedupKey}@lookout>`,
              headers: { 'X-Lookout-Dedup-Key': message.dedupKey },
            }),
          );
          await Promise.race([sending, aborted]);
        } catch (err) {
          if (err instanceof NotifyError) throw err;
          throw classifySmtpError(name, err, secrets);
        }
      },
      async close() {
        if (transport) (await transport).close();
      },
    };
  },
  render(_name, cfg, message) {
    return [
      `From: ${cfg.from}`,
      `To: ${cfg.to.join(', ')}`,
      `Subject: ${emailSubject(message)}`,
      `Message-ID: <${message.dedupKey}@lookout>`,
      `X-Lookout-Dedup-Key: ${message.dedupKey}`,
      '',
      '--- text/plain ---',
      emailText(message),
      '',
      '--- text/html ---',
      emailHtml(message),
    ].join('\n');
  },
} satisfies NotifierModule<'email'>;

const PERMANENT_CODES = new Set(['EAUTH', 'EENVELOPE', 'EMESSAGE', 'ETLS']);

/** SMTP failures: 5xx replies, auth and envelope problems are permanent; 4xx and connection trouble are retried. */
export function classifySmtpError(name: string, err: unknown, secrets: ReadonlyArray<string | undefined>): NotifyError {
  const e = err as { code?: string; responseCode?: number; message?: string };
  const permanent = (typeof e.responseCode === 'number' && e.responseCode >= 500) || (e.code !== undefined && PERMANENT_CODES.has(e.code));
  const detail = redact(`${e.code ?? 'error'}${e.responseCode ? ` ${e.responseCode}` : ''}: ${e.message ?? String(err)}`, secrets);
  return new NotifyError(`${name}: SMTP ${detail}${permanent ? ' (not retried)' : ''}`, { notifier: name, retryable: !permanent });
}
