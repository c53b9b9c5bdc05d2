/** GET /metrics again and again from a child process ({@link ./scraper-child.ts}) while the caller's work runs: target B5's p99. */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { ScrapeTimes, ScraperInput } from './scraper-child.js';

/** A scrape every this many ms while the markets polls of the scrape phase run. */
export const SCRAPE_EVERY_MS = 100;

/** Scrapes `url` every `everyMs` while `work` runs; resolves with what `work` resolved and each scrape's latency, ms. */
export async function scrapeWhile<T>(url: string, everyMs: number, work: () => Promise<T>): Promise<{ result: T; scrapes: number[] }> {
  const entry = fileURLToPath(new URL('./scraper-child.js', import.meta.url));
  const child = fork(entry, [JSON.stringify({ url, everyMs } satisfies ScraperInput)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = once(child, 'exit').then(([code]) => Promise.reject(new Error(`the scraper exited with ${String(code)} before reporting`)));
  exited.catch(() => {});
  try {
    await Promise.race([once(child, 'message'), exited]);
    child.send('start');
    const result = await work();
    const reply = Promise.race([once(child, 'message'), exited]);
    child.send('stop');
    const [times] = (await reply) as [ScrapeTimes];
    return { result, scrapes: times.ms };
  } finally {
    if (child.exitCode === null) child.kill();
  }
}
