/**
 * Imported first, for its effect, by the bench's daemon children's entries (`daemon-entry`, `e2e-entry`): the
 * daemon's heap settings as `lookout run` sets them, applied before the daemon's modules are loaded — which is why the
 * entries import the children's modules dynamically, after this one: a static import is loaded (read and parsed)
 * before any module of the graph runs, and loading the daemon's modules alone grows V8's young generation to 4 MB a
 * semi-space (src/heap-growth.ts), as `lookout run` (which imports them after it sets these) never has it.
 */
import { applyDaemonHeapSettings } from '../heap-growth.js';

applyDaemonHeapSettings();
