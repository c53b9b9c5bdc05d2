/** Silences: matcher parsing and the four operators, the repository (validation, expiry), and the CLI functions over a real config and DB. */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { LookoutError } from '../src/errors.js';
import { matchesAll, parseMatcher, SilenceRepo, silenceAddCommand, silenceExpireCommand, silenceListCommand, validateMatcher } from '../src/silences/index.js';
import { openStore } from '../src/store/index.js';
import { tempStores } from './notify-helpers.js';

const execFileAsync = promisify(execFile);

const T0 = 1_700_000_000_000;
const stores = tempStores();
afterEach(() => stores.cleanup());

const labels = { rule: 'usdc-util-high', chain: 'base', market_id: '0xabc' };

describe('matchers', () => {
  it.each([
    ['rule=usdc-util-high', true],
    ['rule=usdc', false],
    ['chain!=mainnet', true],
    ['chain!=base', false],
    ['rule=~usdc-.*', true],
    ['rule=~usdc', false], // anchored
    ['market_id!~0xdef.*', true],
    ['market_id!~0xa.*', false],
    ['missing=', true], // an absent label reads as empty
    ['rule="usdc-util-high"', true],
  ])('%s → %s', (text, want) => {
    expect(matchesAll([parseMatcher(text)], labels)).toBe(want);
  });

  it.each(['rule', '=x', '1abc=x', 'rule=~(unclosed'])('refuses %s with E_BAD_REQUEST', (text) => {
    expect(() => parseMatcher(text)).toThrow(LookoutError);
    try {
      parseMatcher(text);
    } catch (e) {
      expect((e as LookoutError).code).toBe('E_BAD_REQUEST');
    }
  });

  it.each([
    ['a="x"', 'x'],
    ["a='x'", 'x'],
    ['a=""', ''],
    ['a="x', '"x'],
    ['a=x"', 'x"'],
    ["a='x", "'x"],
    ["a=x'", "x'"],
    ['a="x\'', '"x\''],
    ['a="', '"'],
  ])('%s reads the value %j: only a matching pair of quotes is removed', (text, value) => {
    expect(parseMatcher(text).value).toBe(value);
  });

  it('a="" matches an absent label, as a="" does in Alertmanager', () => {
    expect(matchesAll([parseMatcher('missing=""')], labels)).toBe(true);
  });

  it('an empty matcher list matches nothing; every matcher must hold, not one', () => {
    expect(matchesAll([], labels)).toBe(false);
    expect(matchesAll([parseMatcher('chain=base'), parseMatcher('rule=other')], labels)).toBe(false);
    expect(matchesAll([parseMatcher('rule=other'), parseMatcher('chain=base')], labels)).toBe(false);
    expect(matchesAll([parseMatcher('chain=base'), parseMatcher('rule=usdc-util-high')], labels)).toBe(true);
  });

  it.each([
    [{ name: '1abc', op: '=', value: 'x' }, "invalid label name '1abc'"],
    [{ name: 'rule-x', op: '=', value: 'x' }, "invalid label name 'rule-x'"],
    [{ name: 'rule', op: '~', value: 'x' }, "invalid matcher operator '~'"],
    [{ name: 'rule', op: '!~', value: '(' }, "invalid regular expression '('"],
  ] as const)('validateMatcher refuses %j', (m, message) => {
    let err: unknown;
    try {
      validateMatcher(m as never);
    } catch (e) {
      err = e;
    }
    expect((err as Error).message).toContain(message);
    expect((err as LookoutError).code).toBe('E_BAD_REQUEST');
  });

  it('a regex-looking value of an = or != matcher is plain text, not compiled', () => {
    expect(() => validateMatcher({ name: 'rule', op: '=', value: '(' })).not.toThrow();
    expect(() => validateMatcher({ name: 'rule', op: '!=', value: '(' })).not.toThrow();
  });

  it('a bad regex keeps the SyntaxError as its cause', () => {
    let err: unknown;
    try {
      parseMatcher('rule=~(unclosed');
    } catch (e) {
      err = e;
    }
    expect((err as LookoutError).cause).toBeInstanceOf(SyntaxError);
  });
});

describe('SilenceRepo', () => {
  it('adds, lists, matches while active, and expires', () => {
    const clock = new ManualClock(T0);
    const repo = new SilenceRepo(stores.open().db, clock);
    const s = repo.add({ matchers: [parseMatcher('rule=~usdc-.*')], endsAt: T0 + 3_600_000, author: 'ana', comment: 'upgrade' });
    expect(s.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(s.status).toBe('active');
    expect(repo.isSilenced(labels, T0 + 1000)).toBe(true);
    expect(repo.isSilenced({ ...labels, rule: 'other' }, T0 + 1000)).toBe(false);
    expect(repo.isSilenced(labels, T0 + 3_600_000)).toBe(false); // ends at endsAt
    expect(repo.list({ active: true }).map((x) => x.id)).toEqual([s.id]);
    clock.advance(60_000);
    expect(repo.expire(s.id).status).toBe('expired');
    expect(repo.isSilenced(labels, clock.now())).toBe(false);
    expect(repo.list({ active: true })).toEqual([]);
    expect(repo.list({ active: false }).map((x) => x.id)).toEqual([s.id]);
    expect(repo.get(s.id)?.endsAt).toBe(T0 + 60_000);
    expect(() => repo.expire('nope')).toThrow(/no silence/);
  });

  it('a silence that starts later mutes nothing until then', () => {
    const repo = new SilenceRepo(stores.open().db, new ManualClock(T0));
    const s = repo.add({ matchers: [parseMatcher('chain=base')], startsAt: new Date(T0 + 60_000).toISOString(), endsAt: T0 + 120_000, author: 'a', comment: 'c' });
    expect(s.status).toBe('pending');
    expect(repo.isSilenced(labels, T0)).toBe(false);
    expect(repo.isSilenced(labels, T0 + 60_000)).toBe(true);
  });

  it('one matcher that an empty label satisfies is fine beside one that it does not', () => {
    const repo = new SilenceRepo(stores.open().db, new ManualClock(T0));
    const s = repo.add({ matchers: [parseMatcher('rule!=x'), parseMatcher('chain=base')], endsAt: T0 + 1000, author: 'a', comment: 'c' });
    expect(repo.isSilenced(labels, T0)).toBe(true);
    expect(s.matchers).toEqual([{ name: 'rule', op: '!=', value: 'x' }, { name: 'chain', op: '=', value: 'base' }]);
  });

  it('list() with no filter gives active and expired silences, newest first', () => {
    const clock = new ManualClock(T0);
    const repo = new SilenceRepo(stores.open().db, clock);
    const old = repo.add({ matchers: [parseMatcher('chain=base')], endsAt: T0 + 1000, author: 'a', comment: 'c' });
    clock.advance(2000);
    const live = repo.add({ matchers: [parseMatcher('chain=base')], endsAt: T0 + 60_000, author: 'a', comment: 'c' });
    expect(repo.list().map((x) => [x.id, x.status])).toEqual([
      [live.id, 'active'],
      [old.id, 'expired'],
    ]);
  });

  it('expiring a silence that is already over changes nothing, also one that ends this very ms', () => {
    const clock = new ManualClock(T0);
    const repo = new SilenceRepo(stores.open().db, clock);
    const s = repo.add({ matchers: [parseMatcher('chain=base')], endsAt: T0 + 1000, author: 'a', comment: 'c' });
    clock.advance(1000); // ends_at === now: over already
    expect(repo.expire(s.id)).toEqual({ ...s, status: 'expired' });
    clock.advance(5000);
    expect(repo.expire(s.id)).toEqual({ ...s, status: 'expired' });
  });

  it('prune deletes silences that ended before the cut, keeps one ending at it', () => {
    const repo = new SilenceRepo(stores.open().db, new ManualClock(T0));
    const gone = repo.add({ matchers: [parseMatcher('chain=base')], endsAt: T0 + 999, author: 'a', comment: 'c' });
    const kept = repo.add({ matchers: [parseMatcher('chain=base')], endsAt: T0 + 1000, author: 'a', comment: 'c' });
    expect(repo.prune(T0 + 1000)).toBe(1);
    expect(repo.get(gone.id)).toBeUndefined();
    expect(repo.get(kept.id)?.id).toBe(kept.id);
  });

  it.each([
    ['no matchers', { matchers: [], endsAt: T0 + 1000, author: 'a', comment: 'c' }, /at least one matcher/],
    ['bad op', { matchers: [{ name: 'rule', op: '~', value: 'x' }], endsAt: T0 + 1000, author: 'a', comment: 'c' }, /matchers\.0\.op/],
    ['bad regex', { matchers: [{ name: 'rule', op: '=~', value: '(' }], endsAt: T0 + 1000, author: 'a', comment: 'c' }, /invalid regular expression/],
    ['matches everything', { matchers: [{ name: 'rule', op: '!=', value: 'x' }], endsAt: T0 + 1000, author: 'a', comment: 'c' }, /mute every alert/],
    ['ends in the past', { matchers: [{ name: 'rule', op: '=', value: 'x' }], endsAt: T0 - 1, author: 'a', comment: 'c' }, /endsAt must be later/],
    ['no comment', { matchers: [{ name: 'rule', op: '=', value: 'x' }], endsAt: T0 + 1000, author: 'a', comment: ' ' }, /comment is required/],
    ['bad time', { matchers: [{ name: 'rule', op: '=', value: 'x' }], endsAt: 'soon', author: 'a', comment: 'c' }, /endsAt/],
    ['unknown key', { matchers: [{ name: 'rule', op: '=', value: 'x' }], endsAt: T0 + 1000, author: 'a', comment: 'c', extra: 1 }, /extra/],
    ['ends exactly now', { matchers: [{ name: 'rule', op: '=', value: 'x' }], endsAt: T0, author: 'a', comment: 'c' }, /endsAt must be later/],
    ['no author', { matchers: [{ name: 'rule', op: '=', value: 'x' }], endsAt: T0 + 1000, author: '  ', comment: 'c' }, /^invalid silence: author: author is required$/],
    ['a time that is not ISO-8601', { matchers: [{ name: 'rule', op: '=', value: 'x' }], endsAt: 'soon', author: 'a', comment: 'c' }, /^invalid silence: endsAt: must be an ISO-8601 time$/],
    ['a bad label name', { matchers: [{ name: 'rule-x', op: '=', value: 'x' }], endsAt: T0 + 1000, author: 'a', comment: 'c' }, /invalid label name 'rule-x'/],
    ['a bad !~ regex', { matchers: [{ name: 'rule', op: '!~', value: '(' }], endsAt: T0 + 1000, author: 'a', comment: 'c' }, /invalid regular expression/],
    ['no object at all', null, /^invalid silence: Invalid input: expected object, received null$/],
  ])('add refuses %s with E_BAD_REQUEST', (_name, input, message) => {
    const repo = new SilenceRepo(stores.open().db, new ManualClock(T0));
    let err: unknown;
    try {
      repo.add(input);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(LookoutError);
    expect((err as LookoutError).code).toBe('E_BAD_REQUEST');
    expect((err as Error).message).toMatch(message);
  });
});

describe('CLI functions', () => {
  function config(): string {
    const dir = stores.dir();
    const file = join(dir, 'config.yaml');
    writeFileSync(file, `source: { base_url: http://127.0.0.1:1 }\nstorage: { path: ./l.db }\npolls:\n  - { name: markets, kind: metrics, cron: "*/30 * * * * *" }\n`);
    return file;
  }
  const sink = () => {
    const chunks: string[] = [];
    return { write: (t: string) => chunks.push(t), text: () => chunks.join('') };
  };

  it('add prints the id, list shows it, expire ends it', async () => {
    const configFile = config();
    const clock = new ManualClock(T0);
    const out = sink();
    const err = sink();
    expect(await silenceAddCommand({ configFile, match: ['rule=usdc-util-high', 'chain=~base|mainnet'], for: '2h', comment: 'upgrade', author: 'ana', out, err, clock })).toBe(0);
    const id = out.text().trim();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);

    const list = sink();
    expect(await silenceListCommand({ configFile, out: list, clock })).toBe(0);
    expect(list.text()).toContain(id);
    expect(list.text()).toContain('rule=usdc-util-high chain=~base|mainnet');
    expect(list.text()).toContain('ends in 2h');

    const store = openStore(join(configFile, '..', 'l.db'));
    expect(new SilenceRepo(store.db, clock).isSilenced(labels, T0 + 1000)).toBe(true);
    store.close();

    expect(await silenceExpireCommand({ configFile, id, out: sink(), clock })).toBe(0);
    const after = sink();
    await silenceListCommand({ configFile, out: after, clock });
    expect(after.text()).toBe('no active silences\n');
    const all = sink();
    await silenceListCommand({ configFile, out: all, all: true, json: true, clock });
    expect((JSON.parse(all.text()) as Array<{ status: string }>)[0]!.status).toBe('expired');
  });

  it('list on a config whose DB does not exist yet refuses (exit 2) and creates no DB, as `lookout alerts` does', async () => {
    const configFile = config();
    const err = sink();
    expect(await silenceListCommand({ configFile, out: sink(), err })).toBe(2);
    expect(err.text()).toMatch(/^lookout silence: cannot open database .*l\.db: the file does not exist or cannot be read\n$/);
    expect(existsSync(join(configFile, '..', 'l.db'))).toBe(false);
  });

  it('expire on a config whose DB does not exist refuses (exit 2) and creates no DB', async () => {
    const configFile = config();
    const err = sink();
    expect(await silenceExpireCommand({ configFile, id: 'no-such-id', out: sink(), err })).toBe(2);
    expect(err.text()).toMatch(/^lookout silence: cannot open database .*l\.db: the file does not exist/);
    expect(existsSync(join(configFile, '..', 'l.db'))).toBe(false);
  });

  it('expire on a config whose store is in memory is not refused for a missing file: it looks for the id (exit 1)', async () => {
    const configFile = config();
    writeFileSync(configFile, readFileSync(configFile, 'utf8').replace('./l.db', "':memory:'"));
    const err = sink();
    expect(await silenceExpireCommand({ configFile, id: 'no-such-id', out: sink(), err })).toBe(1);
    expect(err.text()).not.toContain('does not exist');
    expect(err.text()).toContain('no-such-id');
  });

  it('the built CLI: silence add, then list --json and --all --json after expire, as child processes', async () => {
    const configFile = config();
    const cli = (...args: string[]) =>
      execFileAsync(process.execPath, ['dist/cli.js', 'silence', ...args, '-c', configFile], { timeout: 20_000 }).then((r) => r.stdout);
    const id = (await cli('add', '--match', 'rule=usdc-util-high', '--for', '2h', '--comment', 'upgrade')).trim();
    const listed = JSON.parse(await cli('list', '--json')) as Array<{ id: string; status: string; matchers: unknown[]; startsAt: string; endsAt: string }>;
    expect(listed.map((s) => [s.id, s.status])).toEqual([[id, 'active']]);
    // Times as the API gives them (ISO 8601), not Unix ms.
    const span = Date.parse(listed[0]!.endsAt) - Date.parse(listed[0]!.startsAt);
    expect(span).toBeGreaterThan(2 * 3_600_000 - 60_000);
    expect(span).toBeLessThanOrEqual(2 * 3_600_000);
    expect(listed[0]!.endsAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    await cli('expire', id);
    expect(JSON.parse(await cli('list', '--json'))).toEqual([]);
    expect((JSON.parse(await cli('list', '--all', '--json')) as Array<{ status: string }>).map((s) => s.status)).toEqual(['expired']);
  });

  it.each([
    ['a bad matcher', { match: ['rule'], for: '1h' }, /invalid matcher/],
    ['a bad duration', { match: ['rule=x'], for: 'soon' }, /invalid --for/],
    ['no matcher', { match: [], for: '1h' }, /at least one --match/],
  ])('add with %s exits 1 with a message', async (_n, o, message) => {
    const err = sink();
    expect(await silenceAddCommand({ configFile: config(), comment: 'c', author: 'a', out: sink(), err, ...o })).toBe(1);
    expect(err.text()).toMatch(message);
  });

  it('list prints one exact line per silence: active, pending and (with all) expired; JSON ends with a newline', async () => {
    const configFile = config();
    const clock = new ManualClock(T0);
    const out = sink();
    expect(await silenceAddCommand({ configFile, match: ['chain=base'], for: '2h', comment: 'upgrade', author: 'ana', out, clock })).toBe(0);
    const active = out.text().trim();
    const store = openStore(join(configFile, '..', 'l.db'));
    const repo = new SilenceRepo(store.db, clock);
    const over = repo.add({ matchers: [parseMatcher('rule=y')], endsAt: T0 + 1000, author: 'cy', comment: 'short' });
    clock.advance(1000);
    const pending = repo.add({ matchers: [parseMatcher('rule=x')], startsAt: T0 + 30 * 60_000, endsAt: T0 + 60 * 60_000, author: 'bo', comment: 'later' });
    store.close();

    const list = sink();
    expect(await silenceListCommand({ configFile, out: list, clock })).toBe(0);
    expect(list.text()).toBe(
      `${pending.id}  pending  rule=x  starts in 29m59s  by bo: later\n` + `${active}  active   chain=base  ends in 1h59m59s  by ana: upgrade\n`,
    );
    const all = sink();
    expect(await silenceListCommand({ configFile, out: all, all: true, clock })).toBe(0);
    expect(all.text().split('\n')).toContain(`${over.id}  expired  rule=y  ended ${new Date(T0 + 1000).toISOString()}  by cy: short`);
    const json = sink();
    expect(await silenceListCommand({ configFile, out: json, json: true, clock })).toBe(0);
    expect(json.text().endsWith(']\n')).toBe(true);
  });

  it('list --all with none says no silences; expire prints what it ended', async () => {
    const configFile = config();
    const clock = new ManualClock(T0);
    openStore(join(configFile, '..', 'l.db')).close(); // an empty DB (list never creates one)
    const none = sink();
    expect(await silenceListCommand({ configFile, out: none, all: true, clock })).toBe(0);
    expect(none.text()).toBe('no silences\n');
    const added = sink();
    await silenceAddCommand({ configFile, match: ['chain=base'], for: '1h', comment: 'c', author: 'a', out: added, clock });
    const id = added.text().trim();
    const out = sink();
    expect(await silenceExpireCommand({ configFile, id, out, clock })).toBe(0);
    expect(out.text()).toBe(`expired ${id}\n`);
  });

  it('add without --author records the login name of the user', async () => {
    const configFile = config();
    const clock = new ManualClock(T0);
    await silenceAddCommand({ configFile, match: ['chain=base'], for: '1h', comment: 'c', out: sink(), clock });
    const json = sink();
    await silenceListCommand({ configFile, out: json, json: true, clock });
    expect((JSON.parse(json.text()) as Array<{ author: string }>).map((s) => s.author)).toEqual([userInfo().username]);
  });

  it('add --for 0s is refused as a bad duration, not left to the end-time check', async () => {
    const err = sink();
    expect(await silenceAddCommand({ configFile: config(), match: ['chain=base'], for: '0s', comment: 'c', author: 'a', out: sink(), err })).toBe(1);
    expect(err.text()).toBe("lookout silence: invalid --for '0s': write it like 30m, 2h or 1d\n");
  });

  it('a store that cannot be opened exits 2, not 1 (not the user input at fault)', async () => {
    const dir = stores.dir();
    writeFileSync(join(dir, 'afile'), 'x');
    const configFile = join(dir, 'config.yaml');
    writeFileSync(configFile, `source: { base_url: http://127.0.0.1:1 }\nstorage: { path: ./afile/l.db }\npolls:\n  - { name: markets, kind: metrics, cron: "*/30 * * * * *" }\n`);
    const err = sink();
    expect(await silenceAddCommand({ configFile, match: ['rule=x'], for: '1h', comment: 'c', out: sink(), err })).toBe(2);
    expect(err.text()).toMatch(/^lookout silence: cannot create the directory of database /);
  });

  it('the store the CLI creates stamps its migrations with the command clock', async () => {
    const configFile = config();
    await silenceAddCommand({ configFile, match: ['rule=x'], for: '1h', comment: 'c', out: sink(), clock: new ManualClock(T0) });
    const store = openStore(join(configFile, '..', 'l.db'));
    const stamps = store.db.prepare(`SELECT DISTINCT applied_at FROM schema_migrations`).all() as Array<{ applied_at: number }>;
    store.close();
    expect(stamps).toEqual([{ applied_at: T0 }]);
  });

  it('expire of an unknown id exits 1', async () => {
    const configFile = config();
    expect(await silenceAddCommand({ configFile, match: ['rule=x'], for: '1h', comment: 'c', out: sink() })).toBe(0); // a DB with another silence
    const err = sink();
    expect(await silenceExpireCommand({ configFile, id: 'nope', out: sink(), err })).toBe(1);
    expect(err.text()).toContain('no silence with id nope');
  });
});
