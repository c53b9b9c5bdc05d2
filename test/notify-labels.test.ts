/**
 * Label matching as routes and inhibit rules use it (src/notify/labels.ts): equality with one value or a list, anchored
 * regexes, and a label the alert does not have (matched as the empty text, as Alertmanager does); the routing labels
 * and the short digests that name routes and groups.
 */
import { describe, expect, it } from 'vitest';
import { digest, matchesConfig, routingLabels } from '../src/notify/labels.js';

describe('matchesConfig', () => {
  const labels = { chain: 'base', severity: 'critical', port: '8080' };

  it('equality with one value, or with any of a list; numbers and booleans compare as text', () => {
    expect(matchesConfig(labels, { chain: 'base' }, {})).toBe(true);
    expect(matchesConfig(labels, { chain: 'arbitrum' }, {})).toBe(false);
    expect(matchesConfig(labels, { chain: ['arbitrum', 'base'] }, {})).toBe(true);
    expect(matchesConfig(labels, { chain: ['arbitrum', 'mainnet'] }, {})).toBe(false);
    expect(matchesConfig(labels, { chain: [] }, {})).toBe(false);
    expect(matchesConfig(labels, { port: 8080 }, {})).toBe(true);
    expect(matchesConfig(labels, { port: [80, 8080] }, {})).toBe(true);
    expect(matchesConfig({ flag: 'true' }, { flag: true }, {})).toBe(true);
    expect(matchesConfig(labels, { chain: 'base', severity: 'warning' }, {})).toBe(false);
  });

  it('regexes match the whole value', () => {
    expect(matchesConfig(labels, {}, { chain: 'ba.e' })).toBe(true);
    expect(matchesConfig(labels, {}, { chain: 'bas' })).toBe(false);
    expect(matchesConfig(labels, {}, { chain: 'base|arbitrum', severity: 'crit.*' })).toBe(true);
    expect(matchesConfig(labels, { chain: 'base' }, { severity: 'warn.*' })).toBe(false);
  });

  it('a label the alert lacks is the empty text', () => {
    expect(matchesConfig(labels, { team: '' }, {})).toBe(true);
    expect(matchesConfig(labels, { team: ['', 'risk'] }, {})).toBe(true);
    expect(matchesConfig(labels, { team: 'risk' }, {})).toBe(false);
    expect(matchesConfig(labels, {}, { team: '.*' })).toBe(true);
    expect(matchesConfig(labels, {}, { team: '.+' })).toBe(false);
    expect(matchesConfig(labels, {}, {})).toBe(true);
  });
});

describe('routing labels and digests', () => {
  it('the routing labels add the rule kind as __kind__', () => {
    expect(routingLabels({ labels: { rule: 'r' }, kind: 'oracle_lag' })).toEqual({ rule: 'r', __kind__: 'oracle_lag' });
  });

  it('a digest is the sha256 hex of the JSON, cut to its length (20 unless told)', () => {
    // sha256('{"a":1}')
    const full = '015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862';
    expect(digest({ a: 1 })).toBe(full.slice(0, 20));
    expect(digest({ a: 1 }, 12)).toBe(full.slice(0, 12));
  });
});
