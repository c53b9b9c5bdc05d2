/** The `console` notifier: one readable line per alert, coloured by severity on a TTY (used by the demo). */
import type { NotifierModule } from '../notifier-module.js';
import { evidence, entityTitle, formatTime } from '../format.js';
import type { NotificationMessage } from '../message.js';

const COLORS: Record<string, string> = { critical: '\x1b[31m', warning: '\x1b[33m', info: '\x1b[36m' };
const GREEN = '\x1b[32m';
const RESET = '\x1b[0m';

/** The lines of a message; `color` adds ANSI colours by severity (green for resolved). */
export function consoleLines(m: NotificationMessage, color: boolean): string[] {
  return m.alerts.map((ma) => {
    const a = ma.alert;
    const facts = evidence(ma)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ');
    // Control characters from the data service must not drive the terminal.
    const entity = entityTitle(a).replace(/[\x00-\x1f\x7f]/g, '?');
    const head = `${ma.status.toUpperCase()} ${a.severity} ${a.rule}`;
    const painted = color ? `${ma.status === 'resolved' ? GREEN : (COLORS[a.severity] ?? '')}${head}${RESET}` : head;
    const summary = a.annotations.summary ? ` — ${a.annotations.summary.replace(/[\x00-\x1f\x7f]/g, '?')}` : '';
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
