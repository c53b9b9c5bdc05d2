/**
 * Child-process entry: runs the simulator in its own process, so serving 10,000 markets does not share
 * the bench's event loop (the data service is another machine in production). Started by {@link ./sim.ts}.
 */
import { startSimulator } from '../simulator/index.js';

const opts = JSON.parse(process.argv[2] ?? '{}') as { markets?: number; positions?: number; seed?: number };
const sim = await startSimulator({ ...opts, maxGraphqlRows: Math.max(50_000, opts.markets ?? 0) });
process.send?.({ url: sim.url, catalogUrl: sim.catalogUrl, apiKey: sim.apiKey });
process.on('message', (m) => {
  if (m === 'stop') void sim.close().then(() => process.exit(0));
});
process.on('disconnect', () => void sim.close().then(() => process.exit(0)));
