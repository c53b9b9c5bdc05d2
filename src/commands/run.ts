/** `lookout run -c config.yaml`: the daemon, with reload on SIGHUP or a change of the config or rule files. */
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { ConfigError, formatProblem } from '../errors.js';
import type { Config } from '../config/load.js';
import { loadConfigInChild } from '../config/child-load.js';
import { createLogger, resolveLogFormat, type Logger } from '../log.js';
import { startDaemon, type Daemon } from '../daemon.js';
import { applyDaemonHeapSettings } from '../heap-growth.js';
import { onCompilersLifted } from '../compiler-tiers.js';
import { mallocSettings } from '../malloc-env.js';
import { problemCount, reportConfigError, type Output } from './config-report.js';

/** Starts the daemon and resolves with its exit code once it has stopped on SIGTERM/SIGINT. */
export async function runDaemonCommand(file: string, io: Output & { version?: string }): Promise<number> {
  // A SIGHUP must not kill the daemon (the default action), also while its config loads and it starts: one before
  // the reloader exists reloads once it does.
  let reloader: Reloader | undefined;
  let hupWhileStarting = false;
  process.on('SIGHUP', () => (reloader ? void reloader.reload('SIGHUP') : (hupWhileStarting = true)));

  // Loaded in a process of its own: the config's parser and schema libraries never load into the daemon's.
  const config = await loadConfigInChild({ file }).catch((err: unknown) => reportConfigError(err, io, (n) => `lookout: invalid config, not starting (${problemCount(n)})`));
  if (!config) return 1;
  let current = config;
  const log = createLogger({ level: config.log.level, format: resolveLogFormat(config.log.format, process.stderr.isTTY), secrets: () => current.secrets, base: { service: 'lookout' } });
  // SIGTERM/SIGINT are handled from here on, also while the daemon starts: one during start-up stops it cleanly once
  // started (before, nothing is open yet, and the default action ends the process at once).
  const stopRequested = new Promise<string>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });

  // Process-wide V8 settings, so set by the command and not by startDaemon; the CLI set them already, before this
  // module loaded, and this returns what it set (src/heap-growth.ts).
  const heap = applyDaemonHeapSettings({ onCapIgnored: () => log.info('heap_young_cap_ignored', { note: 'this V8 does not take a growth factor of 1 once running; the young generation grows as V8 decides' }) });
  log.info('heap_settings', { ...heap, malloc: mallocSettings() });
  onCompilersLifted((why) => log.info('compilers_lifted', { ...why, note: "work this large runs with V8's compilers from now on" }));
  const daemon = await startDaemon({ config, log, ...(io.version ? { version: io.version } : {}) });
  reloader = new Reloader(file, daemon, log, (c) => (current = c));
  reloader.watchFiles(config);
  if (hupWhileStarting) void reloader.reload('SIGHUP');

  const signal = await stopRequested;
  log.info('stopping', { signal });
  // The SIGHUP listener stays (a late SIGHUP must not kill the process mid-shutdown); the closed reloader ignores it.
  reloader.close();
  await daemon.stop();
  return 0;
}

/** Reloads the config on request; an invalid new config is reported and the old one keeps running. */
export class Reloader {
  private watchers: FSWatcher[] = [];
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private closed = false;
  /** Stops the loader of the reload under way, if any. */
  private readonly stopLoading = new AbortController();

  constructor(
    private readonly file: string,
    private readonly daemon: Daemon,
    private readonly log: Logger,
    private readonly onConfig: (c: Config) => void,
  ) {}

  /** Validates the file again and, if valid, applies it; reloads are serialized. */
  reload(why: string): Promise<void> {
    if (this.closed) return this.running;
    this.running = this.running.then(async () => {
      if (this.closed) return;
      let next: Config;
      try {
        next = await loadConfigInChild({ file: this.file }, { signal: this.stopLoading.signal });
      } catch (err) {
        // Closed meanwhile: close() stopped the loader, nothing was rejected.
        if (this.closed) return;
        const problems = err instanceof ConfigError ? err.problems.map(formatProblem) : [String(err)];
        this.log.error('reload_rejected', { why, problems, note: 'the previous config keeps running' });
        return;
      }
      if (this.closed) return;
      try {
        this.onConfig(next);
        await this.daemon.reload(next);
        if (!this.closed) this.watchFiles(next);
      } catch (err) {
        this.log.error('reload_failed', { why, err });
      }
    });
    return this.running;
  }

  /**
   * Watches the config and rule files; a burst of changes reloads once. It watches their directories, not the files:
   * an editor that saves by writing a new file and renaming it over the old one (vim, VS Code, `sed -i`, Kubernetes'
   * ConfigMap swap) replaces the inode a file watch is attached to, and after a rejected reload nothing would watch
   * the new one.
   */
  watchFiles(config: Config): void {
    this.closeWatchers();
    const byDir = new Map<string, Set<string>>();
    for (const f of [config.file, ...config.ruleFiles]) {
      const names = byDir.get(dirname(f)) ?? new Set<string>();
      names.add(basename(f));
      byDir.set(dirname(f), names);
    }
    for (const [dir, names] of byDir) {
      try {
        const w = watch(dir, (_event, name) => {
          const n = name === null ? null : String(name);
          // null: the platform did not say which file; `..data`: the ConfigMap symlink swap.
          if (n !== null && !names.has(n) && !n.startsWith('..')) return;
          clearTimeout(this.timer);
          this.timer = setTimeout(() => void this.reload(`file changed: ${n === null ? dir : join(dir, n)}`), 300);
        });
        w.on('error', (err) => this.log.warn('watch_failed', { dir, err }));
        w.unref();
        this.watchers.push(w);
      } catch (err) {
        this.log.warn('watch_failed', { dir, err });
      }
    }
  }

  /** Stops watching and the loader of a reload under way; later reload requests are ignored. */
  close(): void {
    this.closed = true;
    this.stopLoading.abort();
    clearTimeout(this.timer);
    this.closeWatchers();
  }

  private closeWatchers(): void {
    for (const w of this.watchers) w.close();
    this.watchers = [];
  }
}
