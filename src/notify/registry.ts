/** The notifier registry: one line per type; builds the configured notifiers by name. */
import { LookoutError } from '../errors.js';
import type { Notifier, NotificationMessage } from './message.js';
import type { NotifierDeps, NotifierModule } from './notifier-module.js';
import type { NotifierConfig } from './schema.js';
import { alertmanagerNotifier } from './notifiers/alertmanager.js';
import { consoleNotifier } from './notifiers/console.js';
import { emailNotifier } from './notifiers/email.js';
import { slackNotifier } from './notifiers/slack.js';
import { webhookNotifier } from './notifiers/webhook.js';

/** Every notifier module lookout ships. A new type is one module plus one line here (and its schema in schema.ts). */
export const notifierModules = [slackNotifier, emailNotifier, webhookNotifier, alertmanagerNotifier, consoleNotifier] as const satisfies readonly NotifierModule<
  NotifierConfig['type']
>[];

/** Modules by type; refuses two modules of the same type. */
export class NotifierRegistry {
  private readonly byType = new Map<string, NotifierModule>();

  /** Registers each module; throws on a duplicate type. */
  constructor(modules: readonly NotifierModule<NotifierConfig['type']>[] = notifierModules as unknown as NotifierModule[]) {
    for (const m of modules) this.register(m);
  }

  /** Adds one module; throws LookoutError E_NOTIFIER_DUPLICATE when its type is taken. */
  register(m: NotifierModule<NotifierConfig['type']>): void {
    if (this.byType.has(m.type)) throw new LookoutError('E_NOTIFIER_DUPLICATE', `notifier type '${m.type}' is registered twice`);
    this.byType.set(m.type, m as NotifierModule);
  }

  /** The module of a type; throws for an unknown one. */
  module(type: string): NotifierModule {
    const m = this.byType.get(type);
    if (!m) throw new LookoutError('E_NOTIFIER_UNKNOWN', `unknown notifier type '${type}'`);
    return m;
  }

  /** Builds every configured notifier, keyed by name. */
  createAll(configs: Readonly<Record<string, NotifierConfig>>, deps: NotifierDeps): Map<string, Notifier> {
    const out = new Map<string, Notifier>();
    for (const [name, cfg] of Object.entries(configs)) {
      if (out.has(name)) throw new LookoutError('E_NOTIFIER_DUPLICATE', `notifier '${name}' is defined twice`);
      out.set(name, this.module(cfg.type).create(name, cfg as never, deps));
    }
    return out;
  }

  /** What the notifier `name` would send for `message`, without sending. */
  render(name: string, cfg: NotifierConfig, message: NotificationMessage, deps: NotifierDeps): string {
    return this.module(cfg.type).render(name, cfg as never, message, deps);
  }
}
