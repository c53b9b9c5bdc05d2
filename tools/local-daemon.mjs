// The real daemon (startDaemon, the shipped starter rules) in this process on the bench's simulator (a child process)
// at SPEC §8 scale, for the profiling tools: built from `dist` (a build of any commit), its first polls done, then
// `warm` more of `poll` (default 2) so that the ones a tool looks at are warm. `onLine` gets each JSON log line at `level`. Returns the
// daemon, the simulator (bench/sim.js's ChildSimulator) and a stop.
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';

export async function startLocalDaemon(dist, { poll = 'markets', warm = 2, prefix = 'lookout-tool-', level = 'warn', onLine = () => undefined } = {}) {
  await import(join(dist, 'bench/heap-first.js'));
  const { startChildSimulator } = await import(join(dist, 'bench/sim.js'));
  const { loadBenchConfig } = await import(join(dist, 'bench/config.js'));
  const { startDaemon } = await import(join(dist, 'daemon.js'));
  const { createLogger } = await import(join(dist, 'log.js'));
  const sim = await startChildSimulator({ markets: 10000, positions: 50000 });
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const config = loadBenchConfig({ baseUrl: sim.url, catalogUrl: sim.catalogUrl, apiKey: sim.apiKey, dbPath: join(dir, 'd.db'), rules: 'starter', polls: ['markets', 'positions', 'benchmarks'] });
  const log = createLogger({ level, write: onLine });
  const daemon = await startDaemon({ config, log, consoleOut: { write: () => true } });
  await Promise.all(['markets', 'positions', 'benchmarks'].map((p) => daemon.pollNow(p)));
  for (let i = 0; i < warm; i++) await daemon.pollNow(poll);
  return {
    daemon,
    sim,
    async stop() {
      await daemon.stop?.();
      await sim.stop?.();
    },
  };
}
