/** The real daemon in a child process ({@link ./daemon-child.ts}), driven from the bench: polls, its memory, its outbox. */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { MALLOC_KEYS, mallocSetting, RECOMMENDED_MALLOC } from '../malloc-env.js';
import { requester, type IpcReply } from './ipc.js';
import type { DaemonChildInput, DaemonMemory, NotifyState } from './daemon-child.js';
import type { PollLine } from './poll-log.js';

/** A daemon running in a child process. */
export interface DaemonChild {
  /** Its HTTP listener. */
  url: string;
  pid: number;
  /** Runs one poll now (pollNow) and resolves when it is done: how long it took, as seen in the child, and the poll runner's log lines since the last call. */
  poll(name: string): Promise<{ ms: number; lines: PollLine[] }>;
  /** The child's RSS, heap used and where the RSS is, MB; with `detail`, by heap space; with `gc`, after a full collection (a child started with --expose-gc). */
  memory(opts?: { detail?: boolean; gc?: boolean }): Promise<DaemonMemory>;
  /** Writes a heap snapshot of the child to `path`; resolves with the path. */
  snapshot(path: string): Promise<string>;
  /** What its notification pipeline holds. */
  notifyState(): Promise<NotifyState>;
  /** Stops the daemon (it flushes and closes its DB) and waits for the process to exit. */
  stop(): Promise<void>;
}

/**
 * The environment a daemon child runs in: this process's, with each of glibc's malloc settings the image sets
 * ({@link RECOMMENDED_MALLOC}; test/deploy.test.ts holds the Dockerfile to them) that the bench's own environment does
 * not set otherwise, as a variable or a tunable — the bench measures the daemon as it is deployed.
 */
export function deployedEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of MALLOC_KEYS) if (!mallocSetting(process.env, k)) env[k] = RECOMMENDED_MALLOC[k];
  return env;
}

/** What a bench note says of the daemon children's malloc settings: each the image's, or the bench environment's own. */
export function mallocNote(): string {
  return MALLOC_KEYS.map((k) => {
    const own = mallocSetting(process.env, k);
    return own ? `${own} from the bench's environment (the image sets ${RECOMMENDED_MALLOC[k]})` : `${k}=${RECOMMENDED_MALLOC[k]} as the image sets it`;
  }).join(', ');
}

/** Starts the daemon on the bench config `yaml` in a child process; resolves once it listens. */
export async function startDaemonChild(yaml: string, opts: { execArgv?: string[] } = {}): Promise<DaemonChild> {
  const entry = fileURLToPath(new URL('./daemon-entry.js', import.meta.url));
  const child = fork(entry, [JSON.stringify({ yaml } satisfies DaemonChildInput)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: opts.execArgv ?? process.execArgv, env: deployedEnv() });
  const [msg] = (await Promise.race([
    once(child, 'message'),
    once(child, 'exit').then(([code]) => Promise.reject(new Error(`the daemon child exited with ${String(code)} before listening`))),
  ])) as [{ url: string; pid: number }];
  const ask = requester(child, 'the daemon child');
  const value = async <T>(body: object, timeoutMs?: number) => (await ask<IpcReply & { value: T }>(body, timeoutMs)).value;
  return {
    url: msg.url,
    pid: msg.pid,
    poll: (name) => value({ cmd: 'poll', poll: name }),
    memory: (o = {}) => value({ cmd: 'memory', ...o }, 30_000),
    snapshot: (path) => value({ cmd: 'snapshot', path }, 300_000),
    notifyState: () => value({ cmd: 'notify' }, 30_000),
    async stop() {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.send('stop');
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
