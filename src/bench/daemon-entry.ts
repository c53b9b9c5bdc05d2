/**
 * Process entry of a bench daemon child ({@link ./daemon-child.ts}): the heap settings first, then the child's modules,
 * loaded only once they are set, as `lookout run` loads the daemon's (src/bench/heap-first.ts).
 */
import './heap-first.js';

await import('./daemon-child.js');
