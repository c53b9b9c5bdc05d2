/**
 * Child-process entry: the real daemon (`startDaemon`) on a bench config, driven by the parent over IPC, in a
 * process of its own so its RSS and its event-loop stalls are the daemon's, and a receiver in the parent (a
 * Slack or webhook recorder) is not held while a poll runs. Started by {@link ./daemon-proc.ts} through
 * {@link ./daemon-entry.ts}, which sets the daemon's heap settings before this module loads.
 * Input (argv[2], JSON): {@link DaemonChildInput}; requests: {@link DaemonRequest}.
 */
import { getHeapSpaceStatistics, writeHeapSnapshot } from 'node:v8';
import { startDaemon } from '../daemon.js';
import { loadConfigInChild } from '../config/child-load.js';
import { benchConfigSource } from './config-source.js';
import { pollLog, type PollLine } from './poll-log.js';
import { procStatusMb } from './proc.js';

/** What the parent sends at start. */
export interface DaemonChildInput {
  /** A bench config (see benchConfigYaml). */
  yaml: string;
}


/** What the notification pipeline holds: events not yet grouped, messages waiting, sent, failed. */
export interface NotifyState {
  outbox: number;
  pending: number;
  sent: number;
  failed: number;
}

/** A request of the parent; the reply carries the same id and the value. */
export type DaemonRequest = { id: number } & (
  | { cmd: 'poll'; poll: string }
  | { cmd: 'memory'; detail?: boolean; gc?: boolean }
  | { cmd: 'notify' }
  | { cmd: 'snapshot'; path: string }
);

/**
 * The process's memory, MB: where its RSS is (B6s: mapped files, private memory, V8's young generation and old space);
 * with `detail`, every V8 heap space and the external and array-buffer memory too, for a study of B6.
 */
export interface DaemonMemory {
  rssMb: number;
  heapUsedMb: number;
  /** RSS of mapped files (the node binary's pages: shared with every Node process, but counted). */
  fileMb: number;
  /** Private RSS: V8's heap, malloc, native buffers. */
  anonMb: number;
  /** V8's young generation, committed (it grows under allocation and shrinks when allocation slows). */
  youngMb: number;
  /** V8's old space, committed and used (live and not yet collected). */
  oldMb: number;
  oldUsedMb: number;
  heapTotalMb?: number;
  externalMb?: number;
  arrayBuffersMb?: number;
  /** Each V8 heap space: its size (committed) and used, MB. */
  spaces?: Record<string, { sizeMb: number; usedMb: number }>;
}

const mb = (bytes: number) => bytes / 1e6;

function memory(detail: boolean): DaemonMemory {
  const m = process.memoryUsage();
  const all = getHeapSpaceStatistics();
  const space = (name: string) => all.find((s) => s.space_name === name);
  const base: DaemonMemory = {
    rssMb: mb(m.rss),
    heapUsedMb: mb(m.heapUsed),
    fileMb: procStatusMb('self', 'RssFile'),
    anonMb: procStatusMb('self', 'RssAnon'),
    youngMb: mb(space('new_space')?.physical_space_size ?? NaN),
    oldMb: mb(space('old_space')?.physical_space_size ?? NaN),
    oldUsedMb: mb(space('old_space')?.space_used_size ?? NaN),
  };
  if (!detail) return base;
  const spaces: NonNullable<DaemonMemory['spaces']> = {};
  for (const s of all) spaces[s.space_name] = { sizeMb: mb(s.space_size), usedMb: mb(s.space_used_size) };
  return { ...base, heapTotalMb: mb(m.heapTotal), externalMb: mb(m.external), arrayBuffersMb: mb(m.arrayBuffers), spaces };
}

const input = JSON.parse(process.argv[2] ?? '{}') as DaemonChildInput;
const lines: PollLine[] = [];
const log = pollLog(lines);
// Loaded as `lookout run` loads it, in a process of its own: B6s measures what the daemon's process holds.
const daemon = await startDaemon({ config: await loadConfigInChild(benchConfigSource(input.yaml)), log, consoleOut: { write: () => true } });

async function answer(req: DaemonRequest): Promise<unknown> {
  switch (req.cmd) {
    case 'poll': {
      const t0 = performance.now();
      await daemon.pollNow(req.poll);
      const ms = performance.now() - t0;
      // The poll runner's log lines since the last poll request (the scheduler's own runs included).
      return { ms, lines: lines.splice(0) };
    }
    case 'memory': {
      // A full collection first, when the child runs with --expose-gc: what the heap retains, not its garbage.
      const gc = (globalThis as { gc?: () => void }).gc;
      if (req.gc === true && gc) gc();
      return memory(req.detail === true);
    }
    case 'snapshot':
      return writeHeapSnapshot(req.path);
    case 'notify': {
      const db = daemon.store.db;
      const n = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
      return {
        outbox: n('SELECT count(*) AS n FROM notify_outbox'),
        pending: n("SELECT count(*) AS n FROM notify_messages WHERE status = 'pending'"),
        sent: n("SELECT count(*) AS n FROM notify_messages WHERE status = 'sent'"),
        failed: n("SELECT count(*) AS n FROM notify_messages WHERE status IN ('failed', 'dropped')"),
      } satisfies NotifyState;
    }
  }
}

process.send?.({ url: daemon.url, pid: process.pid });
process.on('message', (m: unknown) => {
  if (m === 'stop') {
    void daemon.stop().then(() => process.exit(0));
    return;
  }
  const req = m as DaemonRequest;
  answer(req).then(
    (value) => process.send?.({ id: req.id, value }),
    (err: unknown) => process.send?.({ id: req.id, error: err instanceof Error ? err.message : String(err) }),
  );
});
process.on('disconnect', () => void daemon.stop().then(() => process.exit(0)));
