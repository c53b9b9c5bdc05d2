/**
 * The `slack` notifier's bot mode (`token` + `channel`): one Slack message per incident of a group, edited in place.
 * A group's first message is posted (chat.postMessage) and its `ts` kept in SQLite; each later message edits it
 * (chat.update: the alerts, the header's count and colour) and replies in its thread with what changed; the resolve
 * turns it RESOLVED and closes the incident. Each message is two parts for the dispatcher's progress (edit, reply),
 * so a retry or restart resumes after the part Slack accepted. A parent a person deleted is posted again.
 */
import type Database from 'better-sqlite3';
import { LookoutError } from '../../errors.js';
import type { DeliveryProgress, NotificationMessage, Notifier } from '../message.js';
import { whenStoreFree, type NotifierDeps } from '../notifier-module.js';
import type { NotifierConfig } from '../schema.js';
import { SlackThreadStore, type SlackThread } from '../slack-threads.js';
import { isParentGone, slackApi, type SlackApi } from './slack-api.js';
import { changeNote, incidentMessage, parentContent } from './slack-incident.js';

/** A slack notifier's config in bot mode. */
export type SlackBotConfig = Extract<NotifierConfig, { type: 'slack' }> & { token: string; channel: string };

/** Parts of an edit: 0 the parent (edited, or posted again), 1 the thread reply. A first post is both at once. */
const PARENT = 0;
const REPLY = 1;

/** The incident a message belongs to; messages stored before schema 7 have none and use their group's key. */
const incidentOf = (m: NotificationMessage) => m.incident ?? `group:${m.groupKey}`;

/** Builds the bot-mode notifier; it needs the store (`deps.db`) to keep its parents. */
export function slackBotNotifier(name: string, cfg: SlackBotConfig, deps: NotifierDeps): Notifier {
  const db = deps.db;
  if (!db) throw new LookoutError('E_NOTIFIER_STORE', `${name}: slack bot mode keeps its messages in the store, and none was given`);
  const threads = new SlackThreadStore(db);
  const steps = { name, cfg, deps, db, threads };
  return {
    name,
    type: 'slack',
    async send(message, signal, progress) {
      const api = slackApi(name, cfg, deps, signal);
      const from = progress?.partsSent ?? 0;
      const thread = threads.get(name, incidentOf(message));
      if (from <= PARENT && !thread) return firstPost(steps, api, message, progress);
      if (!thread) return; // both parts done, or the incident closed by this very message
      if (from <= PARENT) {
        await editParent(steps, api, thread, message, progress);
        await progress?.beforePart(); // the reply spends a token of the rate limit like any post
      }
      await reply(steps, api, message, progress);
    },
  };
}

interface Steps {
  name: string;
  cfg: SlackBotConfig;
  deps: NotifierDeps;
  db: Database.Database;
  threads: SlackThreadStore;
}

/** Posts the incident's parent and records where it is, with the progress, at once: the restart edits this one. */
async function firstPost(s: Steps, api: SlackApi, message: NotificationMessage, progress: DeliveryProgress | undefined): Promise<void> {
  const incident = incidentMessage([], message);
  // A crash between Slack's answer and this record posts a second parent after the restart: nothing can close that window.
  const ref = await api.post(s.cfg.channel, parentContent(incident, s.cfg.max_alerts));
  await whenStoreFree(s.deps.gate, () => s.db.transaction(() => {
    // A first message that already says RESOLVED (its firing went out another way) has no incident to keep.
    if (message.status === 'firing') {
      s.threads.posted({ notifier: s.name, incident: incidentOf(message), groupKey: message.groupKey, ...ref, alerts: incident.alerts }, s.deps.clock.now());
    }
    progress?.partSent(REPLY); // a first post has no reply: both parts are done
  })());
}

/** Edits the parent to the incident after `message`; a parent that is gone (deleted by a person) is posted again. */
async function editParent(s: Steps, api: SlackApi, thread: SlackThread, message: NotificationMessage, progress: DeliveryProgress | undefined): Promise<void> {
  const content = parentContent(incidentMessage(thread.alerts, message), s.cfg.max_alerts);
  try {
    await api.update(thread, content);
  } catch (err) {
    if (!isParentGone(err)) throw err;
    const ref = await api.post(s.cfg.channel, content);
    await whenStoreFree(s.deps.gate, () => s.threads.posted({ ...thread, ...ref }, s.deps.clock.now()));
    s.deps.log.warn('slack_parent_reposted', { notifier: s.name, dedup_key: message.dedupKey, reason: (err as { slackError: string }).slackError });
  }
  await progress?.partSent(PARENT);
}

/** Replies in the parent's thread with what changed, then records what the parent shows (or closes the incident). */
async function reply(s: Steps, api: SlackApi, message: NotificationMessage, progress: DeliveryProgress | undefined): Promise<void> {
  // Read again: the edit may have posted a new parent.
  const thread = await whenStoreFree(s.deps.gate, () => s.threads.get(s.name, incidentOf(message)));
  if (!thread) return;
  const incident = incidentMessage(thread.alerts, message);
  await api.post(thread.channel, { text: changeNote(thread.alerts, message, incident) }, thread.ts);
  await whenStoreFree(s.deps.gate, () => s.db.transaction(() => {
    if (incident.status === 'resolved') s.threads.closed(s.name, thread.incident);
    else s.threads.shows(s.name, thread.incident, incident.alerts, s.deps.clock.now());
    progress?.partSent(REPLY);
  })());
}
