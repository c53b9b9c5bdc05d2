/** Request and reply over a child process's IPC channel: each request carries an id, its reply the same id. */
import type { ChildProcess } from 'node:child_process';

/** A reply: the request's id, and an error when the child could not do it. */
export interface IpcReply {
  id: number;
  error?: string;
}

/** Returns `ask(body, timeoutMs)`: sends `{ id, ...body }` and resolves with the child's reply of that id (rejects on its error, its exit or the timeout). */
export function requester(child: ChildProcess, what: string): <R extends IpcReply>(body: object, timeoutMs?: number) => Promise<R> {
  let next = 1;
  const waiting = new Map<number, { resolve: (r: IpcReply) => void; reject: (e: Error) => void }>();
  child.on('message', (m: unknown) => {
    const r = m as IpcReply;
    if (typeof r !== 'object' || r === null || typeof r.id !== 'number') return;
    const w = waiting.get(r.id);
    waiting.delete(r.id);
    if (r.error !== undefined) w?.reject(new Error(`${what}: ${r.error}`));
    else w?.resolve(r);
  });
  child.on('exit', (code) => {
    for (const w of waiting.values()) w.reject(new Error(`${what} exited with ${String(code)} before answering`));
    waiting.clear();
  });
  return <R extends IpcReply>(body: object, timeoutMs = 600_000) =>
    new Promise<R>((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(new Error(`${what} did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      waiting.set(id, {
        resolve: (r) => {
          clearTimeout(timer);
          resolve(r as R);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      child.send({ id, ...body });
    });
}
