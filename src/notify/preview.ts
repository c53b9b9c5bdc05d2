/**
 * What a notifier would send for some alerts, as text, without sending it: `lookout render`'s output and tests'
 * previews. Apart from the command (./render.ts), which loads a config: the daemon's modules re-export this one.
 */
import { systemClock } from '../clock.js';
import { silentLogger } from '../log.js';
import type { Alert, AlertEvent } from '../model.js';
import type { ValueUnit } from './format.js';
import { buildMessage, type MessageAlert, type NotificationMessage } from './message.js';
import { NotifierRegistry } from './registry.js';
import type { NotifierConfig } from './schema.js';

const registry = new NotifierRegistry();

function toMessageAlert(x: Alert | AlertEvent, unit: ValueUnit | undefined): MessageAlert {
  let ma: MessageAlert;
  if ('alert' in x && 'type' in x) {
    const status = x.type === 'resolved' || (x.type === 'settled' && x.alert.state !== 'firing') ? 'resolved' : x.type === 'flapping' ? 'flapping' : 'firing';
    ma = { status, alert: x.alert };
  } else {
    ma = { status: x.state === 'resolved' ? 'resolved' : 'firing', alert: x };
  }
  return unit ? { ...ma, unit } : ma;
}

/** The message a notifier of this config would send for these alerts (or events), as text; nothing is sent. `unit`: as in the daemon's messages (a `threshold` rule's field). */
export function renderNotification(
  notifierCfg: NotifierConfig,
  items: ReadonlyArray<Alert | AlertEvent>,
  opts: { name?: string; now?: number; unit?: ValueUnit | undefined } = {},
): string {
  const name = opts.name ?? notifierCfg.type;
  const alerts = items.map((x) => toMessageAlert(x, opts.unit));
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
