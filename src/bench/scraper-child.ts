/**
 * Child-process entry of the scrape-while-polling measurement (see {@link ./scraper.ts}): GETs a URL one request at a
 * time, starting one every `everyMs` (at once when the last took longer), from the parent's 'start' until its 'stop';
 * then sends the latency of each (request sent to last byte read, ms) and exits. A process of its own, so the scraper
 * shares neither the daemon's event loop nor its RSS.
 */
import { once } from 'node:events';
import { request } from 'undici';

/** What the parent passes (argv[2], JSON). */
export interface ScraperInput {
  url: string;
  everyMs: number;
}

/** The reply to 'stop': each scrape's latency, ms, in the order they ran. */
export interface ScrapeTimes {
  ms: number[];
}

async function scrape(url: string): Promise<number> {
  const t0 = performance.now();
  const res = await request(url);
  // Read to the last byte, not decoded: what a scraper waits for, without this process's text decoding in the figure.
  for await (const _chunk of res.body);
  if (res.statusCode !== 200) throw new Error(`GET ${url}: ${res.statusCode}`);
  return performance.now() - t0;
}

const input = JSON.parse(process.argv[2] ?? '{}') as ScraperInput;
let stop = false;
process.on('message', (m) => {
  if (m === 'stop') stop = true;
});
process.send?.('ready');
await once(process, 'message');
const ms: number[] = [];
// A scrape starts only before 'stop' arrives, so every one started while the parent's work ran.
while (!stop) {
  const started = performance.now();
  ms.push(await scrape(input.url));
  const wait = input.everyMs - (performance.now() - started);
  // Pacing, not synchronisation: the next scrape starts `everyMs` after the last one started.
  if (wait > 0 && !stop) await new Promise((resolve) => setTimeout(resolve, wait));
}
process.send?.({ ms } satisfies ScrapeTimes);
process.disconnect();
