/**
 * glibc's malloc settings lookout runs best with, read by glibc when the process starts (a process cannot set them
 * for itself): the Docker image sets them, the bench's daemon children run with them (B6, B6s), and `lookout run`
 * logs what it got (`heap_settings`), so a deployment without them shows. docs/performance.md has the measurements.
 * - `MALLOC_ARENA_MAX=2`: glibc keeps an arena per thread that allocates (up to 8 a core), each holding what it freed.
 * - `MALLOC_MMAP_THRESHOLD_=32768`: a block of 32 KB or more is mapped on its own and given back when freed, where
 *   glibc's default maps only blocks of 128 KB and more; blocks of 32–40 KB, likely V8's zone segments (its parser's
 *   and compilers' working memory, 32 KB at most), otherwise stayed in the arenas after use. Setting it also fixes
 *   the threshold, which glibc otherwise raises as mapped blocks are freed (and the trim threshold with it).
 * Other C libraries (musl, macOS) ignore both.
 */
export const RECOMMENDED_MALLOC: Readonly<Record<'MALLOC_ARENA_MAX' | 'MALLOC_MMAP_THRESHOLD_', string>> = { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '32768' };

/** The recommended settings as this process's environment has them: `KEY=value`, or `KEY not set (glibc: N recommended)`. */
export function mallocSettings(env: NodeJS.ProcessEnv = process.env): string {
  return Object.entries(RECOMMENDED_MALLOC)
    .map(([k, v]) => (env[k] !== undefined ? `${k}=${env[k]}` : `${k} not set (glibc: ${v} recommended)`))
    .join(', ');
}
