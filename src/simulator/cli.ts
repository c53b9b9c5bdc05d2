/** `lookout simulate`: runs the simulator alone until the process is stopped. */
import { startSimulator, type Simulator } from './index.js';

/** Options of `lookout simulate`. */
export interface SimulateCommandOptions {
  port?: number;
  catalogPort?: number;
  scenario?: string;
  seed?: number;
  markets?: number;
  positions?: number;
  apiKey?: string | null;
  host?: string;
  timeScale?: number;
  /** `--encoding`: a preset name or family=choice list (encoding.ts). */
  encoding?: string;
  /** Where the one-line banner goes; default stdout. */
  write?: (line: string) => void;
}

/** Starts the simulator and prints one line with both URLs, the key and the scenario. */
export async function runSimulateCommand(opts: SimulateCommandOptions): Promise<Simulator> {
  const { write = (line: string) => process.stdout.write(line + '\n'), ...rest } = opts;
  const sim = await startSimulator(rest);
  const key = sim.apiKey === null ? '(any key accepted)' : sim.apiKey;
  write(`simulator: base_url=${sim.url} catalog_url=${sim.catalogUrl} api_key=${key} scenario=${sim.world.scenario.name} seed=${sim.world.seed} markets=${sim.world.markets.length} positions=${sim.world.positions.length} encoding=${opts.encoding ?? 'mixed'}`);
  return sim;
}
