/** Polling with a deadline: the benches wait for a condition this way, never with a bare sleep. */

/** Calls `check` every `everyMs` until it returns a value (not undefined); throws after `deadlineMs`, with `what` and the last error. */
export async function until<T>(what: string, check: () => Promise<T | undefined> | T | undefined, deadlineMs: number, everyMs = 100): Promise<T> {
  const end = Date.now() + deadlineMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) throw new Error(`timed out after ${deadlineMs} ms waiting for ${what}${last ? ` (${last instanceof Error ? last.message : String(last)})` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
