/**
 * Imported first, for its effect, by the bench's daemon children (`daemon-child`, `e2e-child`): the daemon's heap
 * settings as `lookout run` sets them, applied before the modules imported after it are evaluated — loading the
 * daemon's modules alone grows V8's young generation to 8 MB a semi-space (src/heap-growth.ts).
 */
import { applyDaemonHeapSettings } from '../heap-growth.js';

applyDaemonHeapSettings();
