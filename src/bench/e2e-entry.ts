/**
 * Process entry of the end-to-end benchmark's child ({@link ./e2e-child.ts}): the heap settings first, then the child's
 * modules, loaded only once they are set, as `lookout run` loads the daemon's (src/bench/heap-first.ts).
 */
import './heap-first.js';

await import('./e2e-child.js');
