/**
 * The text of a reading's labels kept with an alert's row (src/alerts/labels-seen.ts): equal exactly when the
 * reading's labels (but the rule's own) are, in order, the ones it was made of — a label that moved, came or went,
 * or a value that holds the separator and would spell other labels, is never taken for the same. And the engine:
 * an active alert judged in place whose reading's labels change takes the new labels (SPEC §5: `/api/alerts` shows them).
 */
import { afterEach, expect, it } from 'vitest';
import { fingerprint } from '../src/alerts/lifecycle.js';
import { labelsText, sameAsText } from '../src/alerts/labels-seen.js';
import { chainLabelledAlert, drive, T0, tempDirs } from './alerts-helpers.js';

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

const over = new Set(['rule', 'alertname', 'severity', 'team']);
const labels = { market_id: '0xabc', chain: 'base', team: 'ignored: the rule sets it', poll: 'markets' };

it('is the same text exactly for the same labels, in the same order, the rule’s own aside', () => {
  const text = labelsText(labels, over)!;
  expect(text).toBe('market_id\u00000xabc\u0000chain\u0000base\u0000poll\u0000markets\u0000');
  expect(sameAsText(text, { ...labels }, over)).toBe(true);
  expect(sameAsText(text, { ...labels, team: 'another: still the rule’s' }, over)).toBe(true);
  expect(sameAsText(text, { ...labels, chain: 'ethereum' }, over)).toBe(false);
  expect(sameAsText(text, { ...labels, chain: 'bas' }, over)).toBe(false);
  expect(sameAsText(text, { ...labels, chain: 'base2' }, over)).toBe(false);
  expect(sameAsText(text, { ...labels, extra: 'x' }, over)).toBe(false);
  const { poll: _, ...fewer } = labels;
  expect(sameAsText(text, fewer, over)).toBe(false);
  // Another order: not taken for the same (the engine then compares the alert's labels themselves).
  expect(sameAsText(text, { chain: 'base', market_id: '0xabc', poll: 'markets' }, over)).toBe(false);
  expect(sameAsText('', {}, over)).toBe(true);
  expect(sameAsText('', { chain: 'base' }, over)).toBe(false);
});

it('never reads a value holding the separator as other labels', () => {
  // One label whose value spells two: it gets no text, and a text of two labels never matches it.
  expect(labelsText({ market_id: '0xabc\u0000chain\u0000base' }, over)).toBeUndefined();
  expect(labelsText({ 'market_id\u0000x': '0xabc' }, over)).toBeUndefined();
  const two = labelsText({ market_id: '0xabc', chain: 'base' }, over)!;
  expect(sameAsText(two, { market_id: '0xabc\u0000chain\u0000base' }, over)).toBe(false);
  expect(sameAsText(two, { 'market_id\u00000xabc\u0000chain': 'base' }, over)).toBe(false);
});

it('an alert judged in place takes the labels its reading now gives', () => {
  const { store, engine, poll, labelsNow } = chainLabelledAlert(dirs);
  drive(store, engine, poll(0, 'base'));
  drive(store, engine, poll(1, 'base'));
  drive(store, engine, poll(2, 'base'));
  expect(labelsNow().chain).toBe('base');
  drive(store, engine, poll(3, 'ethereum'));
  expect(labelsNow().chain).toBe('ethereum');
  drive(store, engine, poll(4, 'ethereum'));
  drive(store, engine, poll(5, 'base'));
  expect(labelsNow()).toMatchObject({ chain: 'base', market_id: 'm1', rule: 'util' });
  expect(engine.repo.get(fingerprint('util', 'm1'))).toMatchObject({ state: 'pending', value: 1, pending_since: T0 });
  store.close();
});
