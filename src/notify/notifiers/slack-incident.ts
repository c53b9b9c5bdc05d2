/**
 * What the Slack bot mode says, as pure functions: the parent message of an incident (the group's alerts now, and
 * those that resolved during it) and the short thread reply that says what a message changed.
 */
import { entityTitle, escapeSlack, messageRule } from '../format.js';
import { buildMessage, type MessageAlert, type MessageAlertStatus, type NotificationMessage } from '../message.js';
import { SLACK_MAX_BLOCKS, slackPayloads } from './slack-blocks.js';
import type { SlackContent } from './slack-api.js';

/** Most alerts a parent lists, so it stays one message (two blocks an alert, four fixed). */
export const PARENT_MAX_ALERTS = Math.floor((SLACK_MAX_BLOCKS - 4) / 2);

const ORDER: Record<MessageAlertStatus, number> = { firing: 0, flapping: 1, resolved: 2 };

/**
 * The incident as the parent shows it after `message`: the message's alerts, plus the alerts the parent showed as
 * resolved before (a group's message lists an alert's resolve once; the parent keeps it). Firing before, resolved after.
 */
export function incidentMessage(shown: readonly MessageAlert[], message: NotificationMessage): NotificationMessage {
  const inMessage = new Set(message.alerts.map((a) => a.alert.fingerprint));
  const kept = shown.filter((a) => a.status === 'resolved' && !inMessage.has(a.alert.fingerprint));
  const alerts = [...message.alerts, ...kept].sort((a, b) => ORDER[a.status] - ORDER[b.status]);
  const { status: _s, commonLabels: _l, commonAnnotations: _a, ...init } = message;
  return buildMessage({ ...init, alerts });
}

/** The parent's text and blocks: the webhook mode's rendering (header with count and colour), kept to one message. */
export function parentContent(incident: NotificationMessage, maxAlerts: number): SlackContent {
  const [first] = slackPayloads(incident, Math.min(maxAlerts, PARENT_MAX_ALERTS));
  return { text: first!.text, blocks: first!.blocks };
}

/** The names of a few alerts, `WETH/USDC on base (0x…), … +3 more`, escaped. */
function names(list: readonly MessageAlert[]): string {
  const shown = list.slice(0, 5).map((a) => escapeSlack(entityTitle(a.alert)));
  return shown.join(', ') + (list.length > 5 ? ` +${list.length - 5} more` : '');
}

/**
 * The thread reply for `message`, against what the parent showed before it: who joined, who resolved, who flaps,
 * and where the incident stands; a message that changed nothing is a reminder (repeat_interval).
 */
export function changeNote(shown: readonly MessageAlert[], message: NotificationMessage, incident: NotificationMessage): string {
  const before = new Map(shown.map((a) => [a.alert.fingerprint, a.status]));
  const joined: MessageAlert[] = [];
  const resolved: MessageAlert[] = [];
  const flapping: MessageAlert[] = [];
  const refiring: MessageAlert[] = [];
  for (const a of message.alerts) {
    const was = before.get(a.alert.fingerprint);
    if (was === a.status) continue;
    if (a.status === 'resolved') resolved.push(a);
    else if (a.status === 'flapping') flapping.push(a);
    else if (was === undefined || was === 'resolved') joined.push(a);
    else refiring.push(a);
  }
  const lines: string[] = [];
  if (joined.length) lines.push(`:red_circle: *${joined.length} firing*: ${names(joined)}`);
  if (refiring.length) lines.push(`:red_circle: *${refiring.length} settled firing*: ${names(refiring)}`);
  if (flapping.length) lines.push(`:large_orange_circle: *${flapping.length} flapping*: ${names(flapping)}`);
  if (resolved.length) lines.push(`:white_check_mark: *${resolved.length} resolved*: ${names(resolved)}`);
  const active = incident.alerts.filter((a) => a.status !== 'resolved').length;
  const done = incident.alerts.length - active;
  if (incident.status === 'resolved') lines.push(`:white_check_mark: *RESOLVED*: all ${incident.alerts.length} of ${escapeSlack(messageRule(incident))} resolved`);
  else if (lines.length === 0) lines.push(`:repeat: still firing: ${active}${done ? `, ${done} resolved` : ''}`);
  else lines.push(`now ${active} firing${done ? `, ${done} resolved` : ''}`);
  return lines.join('\n');
}
