/**
 * The cross-site hole of issue 13, against the real daemon and its SQLite file: what a web page can send (a text/plain
 * POST with a foreign Origin, a DNS-rebinding Host) is refused and stores nothing, while the CLI and a curl-style JSON
 * request still create silences; with `server.token` set, a write without it is 401.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { CLI, DaemonProcess, getJson, ROOT} from './fixtures/daemon/harness.js';
import { daemonScope } from './fixtures/daemon/scope.js';
import { configObject, writeConfig } from './fixtures/daemon/world.js';
import { rawRequest } from './http-fixtures.js';

const { dirs, startSim } = daemonScope();

const TOKEN = 'daemon-guard-token';
const silence = (comment: string) =>
  JSON.stringify({ matchers: [{ name: 'severity', op: '=', value: 'critical' }], endsAt: new Date(Date.now() + 7 * 86_400_000).toISOString(), author: 'someone', comment });

/** Silences in the daemon's DB file, read by a second connection. */
function storedSilences(db: string): string[] {
  const conn = new Database(db, { readonly: true, fileMustExist: true });
  try {
    return (conn.prepare('SELECT comment FROM silences ORDER BY comment').all() as Array<{ comment: string }>).map((r) => r.comment);
  } finally {
    conn.close();
  }
}

describe('the daemon’s listener against web pages', () => {
  it('refuses a cross-site POST and a foreign Host (nothing in the DB); the CLI and curl-style JSON still create silences', async () => {
    const sim = await startSim({ scenario: 'calm' });
    const dir = dirs.make();
    const db = join(dir, 'lookout.db');
    const file = writeConfig(join(dir, 'lookout.yaml'), { sim, db });
    const { daemon, url } = await DaemonProcess.start(file);
    const api = `${url}/api/silences`;

    // What any page in the on-call engineer's browser can send without a preflight.
    const csrf = await rawRequest(api, { method: 'POST', headers: { 'content-type': 'text/plain', origin: 'http://evil.example' }, body: silence('csrf') });
    expect(csrf.status, csrf.body).toBe(403);
    expect(JSON.parse(csrf.body)).toMatchObject({ error: 'cross_site_request' });
    // A DNS-rebinding page: its own name resolves to 127.0.0.1, so the browser sends that name as Host.
    const port = new URL(url).port;
    const read = await rawRequest(`${url}/api/alerts`, { headers: { host: `evil.example:${port}` } });
    expect(read.status).toBe(403);
    expect(JSON.parse(read.body)).toMatchObject({ error: 'host_not_allowed' });
    const write = await rawRequest(api, { method: 'POST', headers: { host: `evil.example:${port}`, 'content-type': 'application/json' }, body: silence('rebinding') });
    expect(write.status).toBe(403);
    expect(storedSilences(db)).toEqual([]);

    // The CLI writes the DB directly; the running daemon serves what it wrote.
    const cli = spawnSync(process.execPath, [CLI, 'silence', 'add', '-c', file, '--match', 'rule=anything', '--for', '2h', '--comment', 'from the cli', '--author', 'ops'], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
    expect(cli.status, cli.stderr).toBe(0);
    const id = cli.stdout.trim();
    // curl -H 'content-type: application/json' -d @silence.json
    const curl = await rawRequest(api, { method: 'POST', headers: { 'content-type': 'application/json', 'user-agent': 'curl/8.5.0', accept: '*/*' }, body: silence('from curl') });
    expect(curl.status, curl.body).toBe(201);
    expect(storedSilences(db)).toEqual(['from curl', 'from the cli']);
    const listed = await getJson<Array<{ id: string; comment: string }>>(api);
    expect(listed.map((s) => s.comment).sort()).toEqual(['from curl', 'from the cli']);
    expect(listed.map((s) => s.id)).toContain(id);
    // And curl can expire it again without a body.
    const del = await rawRequest(`${api}/${id}`, { method: 'DELETE' });
    expect(del.status, del.body).toBe(200);
    expect(daemon.logs().filter((l) => l.level === 'error'), daemon.diag()).toEqual([]);
  }, 60_000);

  it('with server.token set, a write without it is 401 and stores nothing; with it, 201', async () => {
    const sim = await startSim({ scenario: 'calm' });
    const dir = dirs.make();
    const db = join(dir, 'lookout.db');
    const cfg = configObject({ sim, db }) as { server: Record<string, unknown> };
    cfg.server.token = TOKEN;
    const file = writeConfig(join(dir, 'lookout.yaml'), cfg);
    const { url } = await DaemonProcess.start(file);
    const api = `${url}/api/silences`;
    const none = await rawRequest(api, { method: 'POST', headers: { 'content-type': 'application/json' }, body: silence('no token') });
    expect(none.status).toBe(401);
    const wrong = await rawRequest(api, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer not-the-token' }, body: silence('wrong token') });
    expect(wrong.status).toBe(401);
    expect(storedSilences(db)).toEqual([]);
    const ok = await rawRequest(api, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` }, body: silence('with token') });
    expect(ok.status, ok.body).toBe(201);
    expect(storedSilences(db)).toEqual(['with token']);
  }, 60_000);
});
