/**
 * A daemon without an email notifier never loads nodemailer, and one without a Slack bot never loads @slack/web-api
 * (together ~20 MB of memory, a quarter of what watching 200 markets may cost: B6s); a notifier that needs one loads
 * it with its first message. Checked in a child process of the
 * built code, with a module hook (node:module `register`) that reports every module Node resolves.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { dist, loaded, RECORD, root, runScript } from './module-graph-helpers.js';

const hasNodemailer = loaded('nodemailer');
const hasWebApi = loaded('@slack/web-api');

beforeAll(() => {
  if (!existsSync(join(root, 'dist', 'daemon.js'))) throw new Error('dist/daemon.js is missing: run `npm run build`');
});

it('the daemon and every notifier module load without nodemailer; an email notifier loads it when it sends', async () => {
  const out = await runScript(`
    ${RECORD}
    await import(${JSON.stringify(dist('daemon.js'))});
    const { emailNotifier } = await import(${JSON.stringify(dist('notify/notifiers/email.js'))});
    const before = ${hasNodemailer};
    const n = emailNotifier.create('mail', { smtp: { host: '127.0.0.1', port: 9, secure: false, require_tls: false, tls_reject_unauthorized: true }, from: 'a@b.c', to: ['d@e.f'], timeout: 2000 });
    const created = ${hasNodemailer};
    // Port 9 (discard) refuses: the send fails, after loading nodemailer to try.
    await n.send({ dedupKey: 'k', createdAt: 0, groups: [] }, new AbortController().signal).catch(() => undefined);
    const sent = ${hasNodemailer};
    console.log(JSON.stringify({ before, created, sent, daemon: resolved.some((u) => u.endsWith('/dist/daemon.js')) }));
    await n.close();
  `);
  expect(JSON.parse(out)).toEqual({ before: false, created: false, sent: true, daemon: true });
});

it('the daemon and the Slack notifier load without @slack/web-api; the bot mode loads it with its first call', async () => {
  const out = await runScript(`
    ${RECORD}
    await import(${JSON.stringify(dist('daemon.js'))});
    await import(${JSON.stringify(dist('notify/notifiers/slack.js'))});
    const { slackApi } = await import(${JSON.stringify(dist('notify/notifiers/slack-api.js'))});
    const { silentLogger } = await import(${JSON.stringify(dist('log.js'))});
    const before = ${hasWebApi};
    const api = slackApi('bot', { token: 'xoxb-1', api_url: 'http://127.0.0.1:9/api/', timeout: 2000 }, { log: silentLogger }, new AbortController().signal);
    // Port 9 (discard) refuses: the call fails, after loading the library to make it.
    const err = await api.post('C1', { text: 'hi' }).then(() => 'posted', (e) => e.constructor.name);
    console.log(JSON.stringify({ before, after: ${hasWebApi}, err }));
  `);
  expect(JSON.parse(out)).toEqual({ before: false, after: true, err: 'NotifyError' });
});

it("a Slack webhook message goes out without undici's index (its fetch loads the whole package)", async () => {
  const out = await runScript(`
    ${RECORD}
    const { createServer } = await import('node:http');
    const server = createServer((req, res) => { req.resume(); req.on('end', () => res.end('ok')); });
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    await import(${JSON.stringify(dist('daemon.js'))});
    const { slackNotifier } = await import(${JSON.stringify(dist('notify/notifiers/slack.js'))});
    const { silentLogger } = await import(${JSON.stringify(dist('log.js'))});
    const n = slackNotifier.create('s', { webhook_url: 'http://127.0.0.1:' + server.address().port + '/services/T/B/x', max_alerts: 10, timeout: 2000 }, { log: silentLogger });
    const message = { dedupKey: 'k', notifier: 's', groupKey: 'g', groupLabels: {}, status: 'resolved', alerts: [], commonLabels: {}, commonAnnotations: {}, createdAt: 0 };
    const sent = await n.send(message, new AbortController().signal).then(() => 'sent', (e) => String(e));
    server.close();
    // The resolve hook does not see require() on Node 20: undici's index by the CommonJS cache too, and node's own
    // bundled undici (globalThis.fetch's) by its list of loaded modules.
    const { createRequire } = await import('node:module');
    const cache = Object.keys(createRequire(import.meta.url).cache);
    console.log(JSON.stringify({
      sent,
      index: ${loaded('undici').replace("'/node_modules/undici/'", "'/node_modules/undici/index.js'")} || cache.some((f) => /node_modules[\\\\/]undici[\\\\/]index\\.js$/.test(f)),
      nodeUndici: process.moduleLoadList.some((m) => m.includes('internal/deps/undici')),
    }));
  `);
  expect(JSON.parse(out)).toEqual({ sent: 'sent', index: false, nodeUndici: false });
});

