/**
 * How often the engine makes the text of an active alert's labels (src/alerts/labels-seen.ts) as it judges the alert in
 * place poll after poll: once, when it first finds them equal — also when a label holds the separator and no text can
 * be made (then the labels are compared as they are every poll, but no text is tried again for the same labels and rule).
 * `labelsText` is the real one, counted as the engine calls it.
 */
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { fingerprint } from '../src/alerts/lifecycle.js';
import { labelsText } from '../src/alerts/labels-seen.js';
import { chainLabelledAlert, drive, T0, tempDirs } from './alerts-helpers.js';

vi.mock('../src/alerts/labels-seen.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../src/alerts/labels-seen.js')>();
  return { ...real, labelsText: vi.fn(real.labelsText) };
});

const dirs = tempDirs();
afterEach(() => dirs.cleanup());
beforeEach(() => vi.mocked(labelsText).mockClear());

it.each([
  { name: 'plain labels', chain: 'base', other: 'ethereum' },
  { name: 'a label holding the separator', chain: 'ba\u0000se', other: 'ether\u0000eum' },
])('makes the text of $name once while they stay, again when they change', ({ chain, other }) => {
  const { store, engine, poll, labelsNow } = chainLabelledAlert(dirs, 0.001);
  const calls = () => vi.mocked(labelsText).mock.calls.length;
  drive(store, engine, poll(0, chain)); // the alert is made: its labels built, no text
  expect(calls()).toBe(0);
  for (let i = 1; i <= 4; i++) drive(store, engine, poll(i, chain)); // judged in place: the first of them makes the text
  expect(calls()).toBe(1);
  expect(labelsNow().chain).toBe(chain);
  drive(store, engine, poll(5, other)); // new labels: a step, its new labels object
  expect(labelsNow().chain).toBe(other);
  for (let i = 6; i <= 8; i++) drive(store, engine, poll(i, other));
  expect(calls()).toBe(2);
  drive(store, engine, poll(9, chain)); // and back: the labels the reading gives, whatever the memo held
  expect(labelsNow()).toMatchObject({ chain, market_id: 'm1', rule: 'util' });
  expect(engine.repo.get(fingerprint('util', 'm1'))).toMatchObject({ state: 'pending', pending_since: T0 });
  store.close();
});
