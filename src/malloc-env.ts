/**
 * glibc's malloc settings lookout runs best with, read by glibc when the process starts (a process cannot set them
 * for itself): the Docker image sets them, the bench's daemon children run with them (B6, B6s), and `lookout run`
 * logs what it got (`heap_settings`), so a deployment without them shows. docs/performance.md has the measurements.
 * - `MALLOC_ARENA_MAX=2`: glibc keeps an arena per thread that allocates (up to 8 a core), each holding what it freed.
 * - `MALLOC_MMAP_THRESHOLD_=32768`: a block of 32 KB or more that no free memory of the arena holds is mapped on its
 *   own and given back when freed, where glibc's default maps only blocks of 128 KB and more; blocks of 32–40 KB,
 *   likely V8's zone segments (its parser's and compilers' working memory, 32 KB at most), otherwise grew the arenas
 *   and stayed there after use. Setting it also fixes the threshold, which glibc otherwise raises as mapped blocks
 *   are freed (and the trim threshold with it).
 * Either may also come as a tunable in `GLIBC_TUNABLES`, which wins over the variable (glibc 2.36, either order in the
 * environment). Other C libraries (musl, macOS) ignore both.
 */
export const RECOMMENDED_MALLOC: Readonly<Record<MallocKey, string>> = { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '32768' };

type MallocKey = 'MALLOC_ARENA_MAX' | 'MALLOC_MMAP_THRESHOLD_';

/** The settings' variable names, in {@link RECOMMENDED_MALLOC}'s order. */
export const MALLOC_KEYS = Object.keys(RECOMMENDED_MALLOC) as readonly MallocKey[];

/** The `GLIBC_TUNABLES` name of each setting. */
const TUNABLE: Readonly<Record<MallocKey, string>> = { MALLOC_ARENA_MAX: 'glibc.malloc.arena_max', MALLOC_MMAP_THRESHOLD_: 'glibc.malloc.mmap_threshold' };

/**
 * How `env` sets `key` for glibc, if it does, as said in a log or a note: the tunable in `GLIBC_TUNABLES`
 * (`name=value:…`, the last one; `glibc.malloc.arena_max=2 (GLIBC_TUNABLES)`) first, then the variable (`KEY=value`).
 */
export function mallocSetting(env: NodeJS.ProcessEnv, key: MallocKey): string | undefined {
  let tuned: string | undefined;
  for (const part of (env.GLIBC_TUNABLES ?? '').split(':')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq) === TUNABLE[key]) tuned = part.slice(eq + 1);
  }
  if (tuned !== undefined) return `${TUNABLE[key]}=${tuned} (GLIBC_TUNABLES)`;
  const v = env[key];
  return v === undefined ? undefined : `${key}=${v}`;
}

/** The recommended settings as `env` has them for glibc: `KEY=value`, the tunable, or `KEY not set (glibc: N recommended)`. */
export function mallocSettings(env: NodeJS.ProcessEnv = process.env): string {
  return MALLOC_KEYS.map((k) => mallocSetting(env, k) ?? `${k} not set (glibc: ${RECOMMENDED_MALLOC[k]} recommended)`)
    .join(', ');
}
