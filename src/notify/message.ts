/** What a notifier is given to send: one message for one group and one notifier, frozen with its dedup key. */
import type { Alert } from '../model.js';
import type { NotifyError } from '../errors.js';
import type { ValueUnit } from './format.js';

/** The status of one alert inside a message. */
export type MessageAlertStatus = 'firing' | 'resolved' | 'flapping';

/** One alert of a message, with the state it is announced in. */
export interface MessageAlert {
  status: MessageAlertStatus;
  alert: Alert;
  /** The unit of the alert's values when its kind alone does not say (a `threshold` rule's field); else the kind's. */
  unit?: ValueUnit;
  /** The alert's page (`server.external_url` + `/alerts/{fingerprint}`), when an external URL is configured. */
  url?: string;
  /** Already announced in this state: the group is sent again (a repeat, or another alert of it changed). */
  repeat?: boolean;
}

/** A notification: a group's batch for one notifier. Persisted before it is sent; resent with the same `dedupKey`. */
export interface NotificationMessage {
  /** Stable across retries and restarts: put it in headers/payloads so receivers can drop duplicates. */
  dedupKey: string;
  notifier: string;
  groupKey: string;
  /** The group's incident: one id from its first alert firing until the whole group has resolved (absent in messages stored before schema 7). */
  incident?: string;
  groupLabels: Record<string, string>;
  /** `firing` when any alert fires (or flaps), else `resolved`. */
  status: 'firing' | 'resolved';
  alerts: MessageAlert[];
  /** Labels and annotations every alert of the message shares. */
  commonLabels: Record<string, string>;
  commonAnnotations: Record<string, string>;
  /** When the message was composed, ms. */
  createdAt: number;
}

/** Labels (or annotations) with the same value in every record. */
export function commonOf(records: ReadonlyArray<Readonly<Record<string, string>>>): Record<string, string> {
  if (records.length === 0) return {};
  const out: Record<string, string> = { ...records[0] };
  for (const r of records.slice(1)) {
    for (const k of Object.keys(out)) if (r[k] !== out[k]) delete out[k];
  }
  return out;
}

/** Builds a message from its alerts. */
export function buildMessage(init: Omit<NotificationMessage, 'status' | 'commonLabels' | 'commonAnnotations'>): NotificationMessage {
  const status = init.alerts.some((a) => a.status !== 'resolved') ? 'firing' : 'resolved';
  return {
    ...init,
    status,
    commonLabels: commonOf(init.alerts.map((a) => a.alert.labels)),
    commonAnnotations: commonOf(init.alerts.map((a) => a.alert.annotations)),
  };
}

/**
 * Where a message sent as several posts (a long Slack group) stands: kept by the dispatcher across retries
 * and restarts, so a retry resumes after the last part the receiver accepted and no part is posted twice.
 */
export interface DeliveryProgress {
  /** Parts already accepted by earlier attempts: post from this index on. */
  readonly partsSent: number;
  /** Await before each part after the first one this call posts: resolves when the rate limit lets it go; rejects (let it propagate) when it must wait, and the dispatcher resumes later. */
  beforePart(): Promise<void>;
  /** Records that part `index` (0-based) was accepted; persisted at once, or once a poll's open transaction has closed (await it). */
  partSent(index: number): void | Promise<void>;
}

/** A notifier: delivers a message or throws a {@link NotifyError} that says whether trying again can help. */
export interface Notifier {
  /** The name in the config (`risk-slack`). */
  readonly name: string;
  /** The type (`slack`, `email`, ...). */
  readonly type: string;
  /** Sends one message; must stop when `signal` aborts. Throws NotifyError (retryable or not). Notifiers that post once ignore `progress`. */
  send(message: NotificationMessage, signal: AbortSignal, progress?: DeliveryProgress): Promise<void>;
  /** Releases connections (SMTP pools); optional. */
  close?(): Promise<void>;
}

/** Re-exported for notifier modules. */
export type { NotifyError };
