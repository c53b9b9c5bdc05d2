import { describe, expect, it } from 'vitest';
import { bool, getPath, num } from './coerce.js';

describe('num', () => {
  it.each([
    [' 1.5 ', 1.5],
    ['-2', -2],
    ['+3', 3],
    ['.55', 0.55],
    ['1e3', 1000],
    ['1E+3', 1000],
    ['1e-3', 0.001],
    ['1e10', 1e10],
    ['0x10', null], // Number() would read hex; the service never sends it
    ['1_000', null],
    ['', null],
    ['abc', null],
    [[5], null], // Number([5]) is 5: only strings are read as text
    [true, null],
    [Infinity, null],
  ])('%j → %j', (v, want) => {
    expect(num(v)).toBe(want);
  });
});

describe('bool', () => {
  it.each([
    [' TRUE ', true],
    ['False', false],
    ['maybe', null],
    ['', null],
    [1, null],
  ])('%j → %j', (v, want) => {
    expect(bool(v)).toBe(want);
  });
});

describe('getPath', () => {
  it('walks own object keys only: no string properties, no prototype members, no step through null', () => {
    expect(getPath({ a: { b: 2 } }, 'a.b')).toBe(2);
    expect(getPath({ a: 'str' }, 'a.length')).toBeUndefined();
    expect(getPath({ a: null }, 'a.b')).toBeUndefined();
    expect(getPath({}, 'toString')).toBeUndefined();
  });
});
