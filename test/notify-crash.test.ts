/** kill -9 in the middle of delivery, then a restart: the rest is delivered, the in-flight one again with the same dedup key. */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { openStore } from '../src/store/index.js';
import { slackRecorders } from './fixtures/slack-recorder.js';
import { tempStores } from './notify-helpers.js';

const stores = tempStores();
const children: ChildProcess[] = [];
const startSlack = slackRecorders();
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  stores.cleanup();
});

function child(db: string, url: string, count: number): { proc: ChildProcess; exited: Promise<number | null>; stderr: () => string } {
  const proc = spawn(process.execPath, ['--import', './test/fixtures/ts-register.mjs', 'test/fixtures/notify-child.ts', db, url, String(count)], {
    cwd: join(import.meta.dirname, '..'),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(proc);
  let err = '';
  proc.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
  return { proc, exited, stderr: () => err };
}

it('kill -9 mid-delivery, restart: every message delivered, the interrupted one resent with the same key', async () => {
  const slack = await startSlack();
  const db = join(stores.dir(), 'crash.db');
  // The 4th post never gets an answer (nor any after it): the process dies while it is in flight.
  slack.respondInTurn(200, 200, 200);
  slack.respond(200, { hang: true });
  const first = child(db, slack.url, 10);
  await slack.waitForCount(4, 20_000).catch((e: Error) => {
    throw new Error(`${e.message}; child stderr: ${first.stderr()}`);
  });
  expect(slack.posts.slice(0, 4).map((p) => p.status)).toEqual([200, 200, 200, 0]);
  first.proc.kill('SIGKILL');
  expect(await first.exited).toBeNull();
  const beforeRestart = slack.posts.length;
  const inFlight = slack.posts.filter((p) => p.status === 0).map((p) => p.key);
  expect(inFlight.length).toBeGreaterThanOrEqual(1);

  slack.respond(200);
  const second = child(db, slack.url, 0);
  const code = await Promise.race([second.exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 20_000))]);
  expect(code, second.stderr()).toBe(0);

  const store = openStore(db);
  const rows = store.db.prepare(`SELECT dedup_key, status FROM notify_messages ORDER BY id`).all() as Array<{ dedup_key: string; status: string }>;
  store.close();
  expect(rows).toHaveLength(10);
  expect(rows.every((r) => r.status === 'sent')).toBe(true);
  const delivered = slack.delivered().map((p) => p.key);
  // Every message was delivered exactly once with a 200, under the key it was stored with.
  expect([...delivered].sort()).toEqual(rows.map((r) => r.dedup_key).sort());
  // The one in flight at the kill went again after the restart, with the same key.
  const resent = slack.posts.slice(beforeRestart).map((p) => p.key);
  for (const k of inFlight) expect(resent).toContain(k);
}, 60_000);
