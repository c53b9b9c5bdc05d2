/** Slack's Block Kit rendering of a message: severity header with count and colour, evidence, labels; split under Slack's limits. */
import type { MessageAlert, NotificationMessage } from '../message.js';
import { clip, counts, entityTitle, escapeSlack, evidence, groupText, messageRule, messageSeverity, titleLine } from '../format.js';

/** Slack's limits: blocks per message, characters per section text, per header. */
export const SLACK_MAX_BLOCKS = 50;
export const SLACK_MAX_TEXT = 3000;
const HEADER_MAX = 150;

/** One Slack post. */
export interface SlackPayload {
  text: string;
  blocks: Array<Record<string, unknown>>;
  unfurl_links: false;
  unfurl_media: false;
}

const ICON: Record<string, string> = { critical: ':red_circle:', warning: ':large_orange_circle:', info: ':large_blue_circle:' };

const mrkdwn = (text: string) => ({ type: 'mrkdwn', text: clip(text, SLACK_MAX_TEXT) });
const section = (text: string) => ({ type: 'section', text: mrkdwn(text) });
const context = (text: string) => ({ type: 'context', elements: [mrkdwn(text)] });

function alertBlocks(ma: MessageAlert): Array<Record<string, unknown>> {
  const a = ma.alert;
  const facts = evidence(ma)
    .map(([k, v]) => `${k} *${escapeSlack(v)}*`)
    .join(' · ');
  const lines = [`*${ma.status.toUpperCase()}* ${escapeSlack(a.severity)} · *${escapeSlack(a.rule)}* · ${escapeSlack(entityTitle(a))}`, facts];
  if (a.annotations.summary) lines.push(`> ${escapeSlack(a.annotations.summary)}`);
  if (a.annotations.description) lines.push(escapeSlack(a.annotations.description));
  // A link only to an http(s) URL of our own config (Slack's <url|text> syntax; the URL holds no `|` or `>`).
  if (ma.url && /^https?:\/\/[^\s|<>]+$/i.test(ma.url)) lines.push(`<${ma.url}|chart and history>`);
  const labels = Object.entries(a.labels)
    .map(([k, v]) => `${escapeSlack(k)}=\`${escapeSlack(v)}\``)
    .join('  ');
  return [section(lines.join('\n')), context(labels || 'no labels')];
}

/** Builds the Slack posts of a message: at most `maxAlerts` alerts listed (the rest counted), split so each post stays under 50 blocks. */
export function slackPayloads(m: NotificationMessage, maxAlerts: number): SlackPayload[] {
  const c = counts(m);
  const severity = messageSeverity(m);
  const icon = m.status === 'resolved' ? ':white_check_mark:' : (ICON[severity] ?? '');
  const header = clip(`${icon} ${titleLine(m)}`, HEADER_MAX);
  const shown = m.alerts.slice(0, maxAlerts);
  const hidden = m.alerts.length - shown.length;
  const g = groupText(m);
  const summary =
    `*${escapeSlack(messageRule(m))}* · severity *${severity}*` +
    (g ? ` · group ${escapeSlack(g)}` : '') +
    ` · ${c.firing} firing${c.flapping ? `, ${c.flapping} flapping` : ''}${c.resolved ? `, ${c.resolved} resolved` : ''}`;
  const perAlert = shown.map(alertBlocks);
  const fixed = 4; // header, summary, "more", footer
  const perPost = Math.max(1, Math.floor((SLACK_MAX_BLOCKS - fixed) / 2));
  const chunks: Array<Array<Record<string, unknown>>> = [];
  for (let i = 0; i < perAlert.length || i === 0; i += perPost) chunks.push(perAlert.slice(i, i + perPost).flat());
  const fallback = escapeSlack(
    `${titleLine(m)}: ` +
      shown
        .slice(0, 5)
        .map((ma) => `${entityTitle(ma.alert)} ${evidence(ma).slice(0, 2).map(([k, v]) => `${k} ${v}`).join(', ')}`)
        .join('; ') +
      (m.alerts.length > 5 ? ` and ${m.alerts.length - 5} more` : ''),
  );
  return chunks.map((blocks, i) => {
    const part = chunks.length > 1 ? ` · part ${i + 1}/${chunks.length}` : '';
    const all: Array<Record<string, unknown>> = [{ type: 'header', text: { type: 'plain_text', text: header, emoji: true } }, section(summary), ...blocks];
    if (hidden > 0 && i === chunks.length - 1) all.push(section(`…and *${hidden}* more not shown`));
    all.push(context(`lookout · dedup key \`${m.dedupKey}\`${part}`));
    return { text: clip(fallback, SLACK_MAX_TEXT), blocks: all, unfurl_links: false, unfurl_media: false };
  });
}
