/**
 * `lookout silence add|list|expire --url`: the CLI functions against lookout's real HTTP server in this process, with
 * the real silence repository on a SQLite file behind it (as the daemon serves it: silenceApi), so the silences the
 * commands make are the ones a daemon stores. (test/daemon-cli-url.test.ts runs the same commands as child processes against `lookout run`; this one
 * reaches the code in-process, where mutation testing can see it.)
 */
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { SilenceRepo, silenceAddCommand, silenceApi, silenceExpireCommand, silenceListCommand } from '../src/silences/index.js';
import { openStore, type Store } from '../src/store/index.js';
import { startFakeDaemon, type FakeDaemon } from './http-fixtures.js';
import { NOW } from './metrics-fixtures.js';
import { tempDirs } from './store-helpers.js';

const dirs = tempDirs();
const open: Array<{ daemon: FakeDaemon; store: Store }> = [];
afterEach(async () => {
  for (const { daemon, store } of open.splice(0)) {
    await daemon.server.close();
    store.close();
  }
  dirs.cleanup();
});

/** Lookout's HTTP server over a real silence repository, and where the CLI's output goes. */
async function daemonWithSilences(token?: string) {
  const clock = new ManualClock(NOW);
  const store = openStore(join(dirs.make(), 'lookout.db'), { clock });
  const repo = new SilenceRepo(store.db, clock);
  const daemon = await startFakeDaemon({ ...(token ? { token } : {}), deps: { clock, silences: silenceApi(repo) } });
  open.push({ daemon, store });
  const sink = () => {
    const chunks: string[] = [];
    return { write: (t: string) => chunks.push(t), text: () => chunks.join('') };
  };
  // The DB-file mode is never taken: a config file that does not exist would fail it at once.
  const io = () => ({ configFile: '/nonexistent/lookout.yaml', out: sink(), err: sink(), clock });
  return { clock, repo, url: daemon.server.url, io };
}

it('add stores the silence the command line describes, list shows it, expire ends it, all through the API', async () => {
  const { repo, url, io, clock } = await daemonWithSilences();
  const add = io();
  expect(await silenceAddCommand({ ...add, target: { url }, match: ['rule=usdc-util-high', 'chain=~base|mainnet'], for: '2h', comment: 'upgrade', author: 'ana' })).toBe(0);
  const id = add.out.text().trim();
  expect(add.err.text()).toBe('');
  expect(repo.list()).toEqual([
    expect.objectContaining({
      id,
      matchers: [
        { name: 'rule', op: '=', value: 'usdc-util-high' },
        { name: 'chain', op: '=~', value: 'base|mainnet' },
      ],
      startsAt: NOW,
      endsAt: NOW + 2 * 3_600_000,
      author: 'ana',
      comment: 'upgrade',
    }),
  ]);

  const list = io();
  expect(await silenceListCommand({ ...list, target: { url } })).toBe(0);
  expect(list.out.text()).toBe(`${id}  active   rule=usdc-util-high chain=~base|mainnet  ends in 2h  by ana: upgrade\n`);

  clock.advance(30 * 60_000);
  const expire = io();
  expect(await silenceExpireCommand({ ...expire, target: { url }, id })).toBe(0);
  expect(expire.out.text()).toBe(`expired ${id}\n`);
  expect(repo.list()[0]!.endsAt).toBe(NOW + 30 * 60_000);

  const active = io();
  expect(await silenceListCommand({ ...active, target: { url } })).toBe(0);
  expect(active.out.text()).toBe('no active silences\n');
  const all = io();
  expect(await silenceListCommand({ ...all, target: { url }, all: true, json: true })).toBe(0);
  const listed = JSON.parse(all.out.text()) as Array<Record<string, unknown>>;
  expect(listed).toEqual([expect.objectContaining({ id, status: 'expired', endsAt: new Date(NOW + 30 * 60_000).toISOString(), author: 'ana' })]);
});

it('input the command itself can judge is refused before any request (exit 1), and the daemon stores nothing', async () => {
  const { repo, url, io } = await daemonWithSilences();
  for (const bad of [
    { match: ['rule=x'], for: '0s' },
    { match: ['rule=x'], for: 'soon' },
    { match: [], for: '1h' },
  ]) {
    const run = io();
    expect(await silenceAddCommand({ ...run, target: { url }, ...bad, comment: 'c', author: 'a' })).toBe(1);
    expect(run.err.text()).toMatch(/^lookout silence: (invalid --for|give at least one --match)/);
  }
  expect(repo.list()).toEqual([]);
});

it("the daemon's refusals come back as the command's: an unknown id exits 1, a bad matcher 1, no daemon there 2", async () => {
  const { repo, url, io } = await daemonWithSilences();
  const unknown = io();
  expect(await silenceExpireCommand({ ...unknown, target: { url }, id: 'no-such-id' })).toBe(1);
  expect(unknown.err.text()).toMatch(/^lookout silence: DELETE \/api\/silences\/no-such-id at .*: 404/);

  const badRegex = io();
  expect(await silenceAddCommand({ ...badRegex, target: { url }, match: ['rule=~('], for: '1h', comment: 'c', author: 'a' })).toBe(1);
  expect(repo.list()).toEqual([]);

  const gone = io();
  expect(await silenceListCommand({ ...gone, target: { url: 'http://127.0.0.1:9' } })).toBe(2);
  expect(gone.err.text()).toMatch(/^lookout silence: cannot reach the daemon at http:\/\/127\.0\.0\.1:9/);
});

it('with server.token set: refused without the token (nothing stored), accepted with it, and the token never printed', async () => {
  const TOKEN = 'silence-url-token-77c1';
  const { repo, url, io } = await daemonWithSilences(TOKEN);
  const without = io();
  expect(await silenceAddCommand({ ...without, target: { url }, match: ['rule=x'], for: '1h', comment: 'c', author: 'a' })).toBe(2);
  expect(without.err.text()).toContain('wants a token');
  expect(repo.list()).toEqual([]);

  const wrong = io();
  expect(await silenceListCommand({ ...wrong, target: { url, token: 'not-it' } })).toBe(2);
  expect(wrong.err.text()).toContain('did not accept the token');

  const ok = io();
  expect(await silenceAddCommand({ ...ok, target: { url, token: TOKEN }, match: ['rule=x'], for: '1h', comment: 'c', author: 'a' })).toBe(0);
  expect(repo.list()).toHaveLength(1);
  for (const run of [without, wrong, ok]) expect(run.out.text() + run.err.text()).not.toContain(TOKEN);
});

it("the API's view of the repository: in force (and starting later) when asked without options, as the status page asks, and expired too with all", async () => {
  const { repo, clock } = await daemonWithSilences();
  const api = silenceApi(repo);
  const now = clock.now();
  const active = repo.add({ matchers: [{ name: 'rule', op: '=', value: 'a' }], startsAt: now, endsAt: now + 60_000, author: 'a', comment: 'in force' });
  const later = repo.add({ matchers: [{ name: 'rule', op: '=', value: 'b' }], startsAt: now + 60_000, endsAt: now + 120_000, author: 'a', comment: 'later' });
  const over = repo.add({ matchers: [{ name: 'rule', op: '=', value: 'c' }], startsAt: now, endsAt: now + 1_000, author: 'a', comment: 'over' });
  clock.advance(2_000);
  const ids = (list: Array<{ id: string }>) => list.map((s) => s.id).sort();
  expect(ids(api.list())).toEqual(ids([active, later]));
  expect(ids(api.list({ all: false }))).toEqual(ids([active, later]));
  expect(ids(api.list({ all: true }))).toEqual(ids([active, later, over]));
  expect(api.expire(active.id)).toMatchObject({ id: active.id, endsAt: now + 2_000 });
});
