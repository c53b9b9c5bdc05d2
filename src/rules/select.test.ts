import picomatch from 'picomatch';
import { describe, expect, it } from 'vitest';
import { benchmark, market, position } from '../../test/rules-helpers.js';
import { anyOf, matchesSelect, SELECT_MEMO_LIMIT, selectCheck, selectKeyCheck, type Select } from './select.js';

describe('matchesSelect', () => {
  const m = market({ market: { chain: 'base', loan_asset_symbol: 'USDC', collateral_asset_symbol: 'wstETH', loan_asset_decimals: 6, oracle: '0xoracle01' } }, undefined, 'morpho-base-0xAbC123');
  it.each<{ name: string; select: Select; want: boolean }>([
    { name: 'empty select matches all', select: {}, want: true },
    { name: 'label equals', select: { chain: 'base' }, want: true },
    { name: 'label differs', select: { chain: 'mainnet' }, want: false },
    { name: 'list is any-of', select: { chain: ['mainnet', 'base'] }, want: true },
    { name: 'list with no match', select: { chain: ['mainnet', 'arbitrum'] }, want: false },
    { name: 'glob prefix on an id', select: { market_id: 'morpho-base-0xab*' }, want: true },
    { name: 'globs are case-insensitive (addresses)', select: { market_id: '*0XABC123' }, want: true },
    { name: 'glob without match', select: { market_id: 'aave-*' }, want: false },
    { name: 'brace alternatives', select: { loan_asset_symbol: '{USDC,USDT}' }, want: true },
    { name: 'every key must match (AND)', select: { chain: 'base', loan_asset_symbol: 'DAI' }, want: false },
    { name: 'falls back to fields', select: { utilization: '0.5' }, want: true },
    { name: 'falls back to fields.market', select: { oracle: '0xORACLE*' }, want: true },
    { name: 'numbers compare as text', select: { loan_asset_decimals: 6 }, want: true },
    { name: 'a number that differs', select: { loan_asset_decimals: 18 }, want: false },
    { name: 'dotted field path', select: { 'market.chain': 'base' }, want: true },
    { name: 'entity', select: { entity: 'morpho-base-*' }, want: true },
    { name: 'a key the reading lacks never matches', select: { network: '*' }, want: false },
    { name: 'negated glob', select: { chain: '!mainnet' }, want: true },
  ])('$name', ({ select, want }) => {
    expect(matchesSelect(select, m)).toBe(want);
  });

  it.each<{ name: string; select: Select; want: boolean }>([
    { name: 'boolean compares as text', select: { verified: false }, want: true },
    { name: 'boolean that differs', select: { verified: true }, want: false },
    { name: 'position wallet glob', select: { wallet: '0xwal*' }, want: true },
  ])('position: $name', ({ select, want }) => {
    expect(matchesSelect(select, position({ verified: false }))).toBe(want);
  });

  it('a label wins over a field of the same name; a boolean field compares as text; a glob matches a leading dot', () => {
    const r = market({ market: { chain: 'other' }, flag: true, path: '.hidden' });
    expect(matchesSelect({ chain: 'base' }, r)).toBe(true);
    expect(matchesSelect({ flag: true }, r)).toBe(true);
    expect(matchesSelect({ path: '*den' }, r)).toBe(true); // a pattern of its own: a cached one would hide the options
  });

  it('a plain word or address matches exactly what picomatch would (case-insensitively, the whole text, dots literal)', () => {
    const patterns = ['USDC', 'usdc', 'USDC.e', 'wstETH', 'morpho-base-0xabc', 'a:b', 'x_1', 'k', 'ss', 'i'];
    const texts = ['USDC', 'UsDc', 'USDC/', './USDC', 'USDC ', ' USDC', 'USDC.e', 'USDCxe', 'usdc.E', 'WSTETH', 'morpho-base-0xABC', 'morpho-base-0xabcd', 'A:B', 'X_1', 'K', '\u212A', 'ß', 'SS', 'İ', 'I', 'ı', '', 'USDC\n'];
    for (const p of patterns) {
      const oracle = picomatch(p, { nocase: true, dot: true });
      for (const t of texts) expect([p, t, matchesSelect({ symbol: p }, market({ symbol: t }))]).toEqual([p, t, oracle(t)]);
    }
  });

  it('benchmark network and code', () => {
    expect(matchesSelect({ network: ['base', 'mainnet'], code: 'usd' }, benchmark())).toBe(true);
    expect(matchesSelect({ code: 'eth' }, benchmark())).toBe(false);
  });
});

describe('selectCheck', () => {
  it.each([
    { name: 'fine', select: { chain: ['base'], market_id: '0xab*' }, want: [] },
    { name: 'empty list', select: { chain: [] }, want: [{ path: ['chain'], message: 'an empty list matches nothing (leave the key out to match all)' }] },
    { name: 'empty pattern', select: { chain: '' }, want: [{ path: ['chain'], message: 'an empty pattern matches nothing' }] },
    { name: 'empty pattern in a list', select: { chain: ['base', ''] }, want: [{ path: ['chain', 1], message: 'an empty pattern matches nothing' }] },
  ])('$name', ({ select, want }) => {
    expect(selectCheck(select)).toEqual(want);
  });

  it('refuses a key no market reading has, suggesting the closest', () => {
    expect(selectKeyCheck({ loan_symbol: 'USDC', chain: 'base' }, ['market'])).toEqual([
      { path: ['select', 'loan_symbol'], message: "select: unknown key 'loan_symbol' for market readings (did you mean 'loan_asset_symbol'?)" },
    ]);
  });

  it('does not check readings whose fields are unspecified', () => {
    expect(selectKeyCheck({ anything: 'x' }, ['holding'])).toEqual([]);
  });

  it('knows entity, labels, fields and the nested market keys; unchecked when any kind read is unspecified; names every kind', () => {
    expect(selectKeyCheck({ entity: 'x', protocol: 'x', utilization: 'x', loan_asset_decimals: 6 }, ['market'])).toEqual([]);
    expect(selectKeyCheck({ anything: 'x' }, ['market', 'holding'])).toEqual([]);
    // `apy` is what slicing 'market.' off `borrow_apy` would leave: no key of a market's own (a position has one).
    expect(selectKeyCheck({ apy: 'x' }, ['market']).map((p) => p.message)).toEqual(["select: unknown key 'apy' for market readings (did you mean 'borrow_apy'?)"]);
    expect(selectKeyCheck({ apy: 'x' }, ['market', 'position'])).toEqual([]);
    expect(selectKeyCheck({ walet: 'x' }, ['market', 'position']).map((p) => p.message)).toEqual(["select: unknown key 'walet' for market/position readings (did you mean 'wallet'?)"]);
  });

});

describe('anyOf (a select key\'s patterns, remembered per text)', () => {
  const counted = (test: (t: string) => boolean) => {
    const calls = { n: 0 };
    return { calls, m: (t: string) => (calls.n++, test(t)) };
  };

  it('tests each text once while it has seen few, and answers as the patterns do', () => {
    const a = counted((t) => t === 'USDC');
    const b = counted((t) => t.endsWith('BTC'));
    const any = anyOf([a.m, b.m]);
    for (let i = 0; i < 100; i++) {
      expect(any('USDC')).toBe(true);
      expect(any('WBTC')).toBe(true);
      expect(any('WETH')).toBe(false);
    }
    // USDC: the first pattern only; WBTC and WETH: both.
    expect(a.calls.n).toBe(3);
    expect(b.calls.n).toBe(2);
  });

  it('remembers its first texts only (ids, not symbols): the others are tested each time, and all answer as the patterns do', () => {
    const a = counted((t) => t.startsWith('m-1'));
    const any = anyOf([a.m]);
    const texts = Array.from({ length: SELECT_MEMO_LIMIT + 50 }, (_, i) => `m-${i}`);
    for (const t of texts) expect(any(t)).toBe(t.startsWith('m-1'));
    expect(a.calls.n).toBe(texts.length);
    // The first ten are remembered; the ten past the limit are tested again.
    for (const t of [...texts.slice(0, 10), ...texts.slice(-10)]) expect(any(t)).toBe(t.startsWith('m-1'));
    expect(a.calls.n).toBe(texts.length + 10);
  });

  it('through matchesSelect: the same text in another case, and a glob, answer as picomatch does after being remembered', () => {
    const select: Select = { loan_asset_symbol: ['usdc', '*BTC'] };
    const withSymbol = (symbol: string) => ({ ...market(), labels: { ...market().labels, loan_asset_symbol: symbol } });
    for (let i = 0; i < 3; i++) {
      expect(matchesSelect(select, withSymbol('USDC'))).toBe(true);
      expect(matchesSelect(select, withSymbol('wbtc'))).toBe(true);
      expect(matchesSelect(select, withSymbol('WETH'))).toBe(false);
      expect(matchesSelect(select, withSymbol('a/BTC'))).toBe(picomatch.isMatch('a/BTC', '*BTC', { nocase: true, dot: true }));
    }
  });
});
