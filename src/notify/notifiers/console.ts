/** The `console` notifier: one readable line per alert, coloured by severity on a TTY (used by the demo). */
import type { NotifierModule } from '../notifier-module.js';
import { evidence, entityTitle, formatTime } from '../format.js';
import type { NotificationMessage } from '../message.js';

const COLORS: Record<string, string> = { critical: '\x1b[31m', warning: '\x1b[33m', info: '\x1b[36m' };
const GREEN = '\x1b[32m';
const RESET = '\x1b[0m';

/** Facts a console line leaves out: the time heads the line; the rest is in Slack, email and the alert's page. */
const LONG_FACTS = new Set(['since', 'data at', 'block', 'resolved']);

/** A long id as its head and tail (`0x69de…c92d`); the full id is in JSON output, the labels and the alert's page. */
export function shortId(id: string): string {
  return id.length > 16 ? `${id.slice(0, 6)}…${id.slice(-4)}` : id;
}

/** Control characters from the data service must not drive the terminal. */
const plain = (s: string) => s.replace(/[\x00-\x1f\x7f]/g, '?');

/**
 * The lines of a message, one per alert: time, status, severity, rule, the entity (collateral/loan on chain, a short
 * id), its value against the threshold, and the summary while it fires. A repeat of an unchanged alert says so; a
 * resolve says what it peaked at and how long it lasted instead of the firing summary (which would describe a
 * condition that no longer holds: "up 0 bps"). `color` adds ANSI colours by severity (green for resolved).
 */
export function consoleLines(m: NotificationMessage, color: boolean): string[] {
  return m.alerts.map((ma) => {
    const a = ma.alert;
    const facts = evidence(ma)
      .filter(([k]) => !LONG_FACTS.has(k))
      .map(([k, v]) => `${k}=${v}`)
      .join(' ');
    const entity = plain(entityTitle({ ...a, entity: shortId(a.entity) }));
    const head = `${ma.status.toUpperCase()}${ma.repeat ? ' (repeat)' : ''} ${a.severity} ${a.rule}`;
    const painted = color ? `${ma.status === 'resolved' ? GREEN : (COLORS[a.severity] ?? '')}${head}${RESET}` : head;
    const summary = ma.status !== 'resolved' && a.annotations.summary ? ` — ${plain(a.annotations.summary)}` : '';
    return `${formatTime(m.createdAt)} ${painted} ${entity}: ${facts}${summary} [${m.dedupKey}]`;
  });
}

/** The console notifier module. */
export const consoleNotifier = {
  type: 'console',
  create(name, cfg, deps) {
    const out = deps.stdout ?? process.stdout;
    const color = cfg.color === 'always' || (cfg.color === 'auto' && out.isTTY === true);
    return {
      name,
      type: 'console',
      async send(message) {
        out.write(consoleLines(message, color).join('\n') + '\n');
      },
    };
  },
  render(_name, _cfg, message) {
    return consoleLines(message, false).join('\n');
  },
} satisfies NotifierModule<'console'>;
