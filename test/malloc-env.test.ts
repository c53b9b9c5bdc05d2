/** How lookout reads glibc's malloc settings from an environment, as glibc does (src/malloc-env.ts). */
import { describe, expect, it } from 'vitest';
import { mallocSetting, mallocSettings } from '../src/malloc-env.js';

describe('malloc settings', () => {
  it('says what is set and what is missing, by the variable', () => {
    expect(mallocSettings({})).toBe('MALLOC_ARENA_MAX not set (glibc: 2 recommended), MALLOC_MMAP_THRESHOLD_ not set (glibc: 32768 recommended)');
    expect(mallocSettings({ MALLOC_ARENA_MAX: '4', MALLOC_MMAP_THRESHOLD_: '32768' })).toBe('MALLOC_ARENA_MAX=4, MALLOC_MMAP_THRESHOLD_=32768');
  });

  it('reads GLIBC_TUNABLES, which glibc takes over the variable (the last of a name, among other tunables)', () => {
    const env = { GLIBC_TUNABLES: 'glibc.malloc.tcache_count=0:glibc.malloc.mmap_threshold=16384:glibc.malloc.mmap_threshold=65536', MALLOC_MMAP_THRESHOLD_: '32768' };
    expect(mallocSetting(env, 'MALLOC_MMAP_THRESHOLD_')).toBe('glibc.malloc.mmap_threshold=65536 (GLIBC_TUNABLES)');
    expect(mallocSetting(env, 'MALLOC_ARENA_MAX')).toBeUndefined();
    expect(mallocSettings({ GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' })).toBe(
      'glibc.malloc.arena_max=2 (GLIBC_TUNABLES), MALLOC_MMAP_THRESHOLD_ not set (glibc: 32768 recommended)',
    );
    // A name that only ends like the tunable's, or a part without a value, sets nothing.
    expect(mallocSetting({ GLIBC_TUNABLES: 'x.glibc.malloc.arena_max=2:glibc.malloc.arena_max' }, 'MALLOC_ARENA_MAX')).toBeUndefined();
  });
});
