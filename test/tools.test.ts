/** The real-tool guard: outside CI a missing tool skips its tests; under CI it fails them. */
import { describe, expect, it } from 'vitest';
import { tool } from './tools.js';

describe('tool', () => {
  it('finds an installed program on PATH and never skips it', () => {
    const node = tool('node', 'nodejs', { probe: true, ci: false });
    expect(node.path).toMatch(/node$/);
    expect(node.skip).toBe(false);
    expect(node.require()).toBe(node.path);
  });

  it('outside CI, a missing tool skips and says which package brings it', () => {
    const t = tool('lookout-no-such-tool', 'no-such-package', { ci: false });
    expect(t.path).toBeUndefined();
    expect(t.skip).toBe(true);
    expect(t.needs).toBe('needs lookout-no-such-tool, Debian package no-such-package; CI installs it');
  });

  it('under CI, a missing tool does not skip: require() fails the test with the reason', () => {
    const t = tool('lookout-no-such-tool', 'no-such-package', { ci: true });
    expect(t.skip).toBe(false);
    expect(() => t.require()).toThrow(/lookout-no-such-tool is not installed .*Debian package no-such-package.*under CI this test cannot skip/);
  });
});
