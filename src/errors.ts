/** Base of every error lookout raises on purpose: a stable `code`, a `cause`, and a message a person can act on. */
export class LookoutError extends Error {
  /** Stable machine-readable code, e.g. `E_CONFIG`, `E_SOURCE_HTTP`. */
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** One problem in a config or rule file, located as file:line:col. */
export interface ConfigProblem {
  file: string;
  line: number;
  col: number;
  message: string;
}

/** Formats a problem the way compilers do, so editors and terminals can jump to it. */
export function formatProblem(p: ConfigProblem): string {
  return `${p.file}:${p.line}:${p.col}: ${p.message}`;
}

/** A config (or rule file) that failed to load; carries every problem found, not just the first. */
export class ConfigError extends LookoutError {
  readonly problems: ConfigProblem[];
  constructor(problems: ConfigProblem[]) {
    super('E_CONFIG', problems.map(formatProblem).join('\n'));
    this.problems = problems;
  }
}

/**
 * The config could not be loaded for a reason other than its problems: the process that reads it
 * (src/config/child-load.ts) failed, was killed, hung, or answered no config — the message names the file and that,
 * never the loader's output or stderr — or it met an unexpected error, whose message is forwarded as in-process
 * loading printed it (that message is the loader's code's, e.g. a file system error naming a path).
 */
export class ConfigLoaderError extends LookoutError {
  readonly file: string;
  constructor(file: string, why: string, options?: { cause?: unknown }) {
    super('E_CONFIG_LOADER', `cannot load config ${file}: ${why}`, options);
    this.file = file;
  }
}

/** A request to the data service that failed; never carries the API key. */
export class SourceError extends LookoutError {
  readonly endpoint: string;
  readonly status: number | undefined;
  readonly retryable: boolean;
  constructor(
    code: string,
    message: string,
    opts: { endpoint: string; status?: number; retryable: boolean; cause?: unknown },
  ) {
    super(code, message, { cause: opts.cause });
    this.endpoint = opts.endpoint;
    this.status = opts.status;
    this.retryable = opts.retryable;
  }
}

/** A notification that could not be delivered; `retryable` tells the dispatcher whether to try again. */
export class NotifyError extends LookoutError {
  readonly notifier: string;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;
  constructor(
    message: string,
    opts: { notifier: string; retryable: boolean; retryAfterMs?: number; cause?: unknown },
  ) {
    super('E_NOTIFY', message, { cause: opts.cause });
    this.notifier = opts.notifier;
    this.retryable = opts.retryable;
    this.retryAfterMs = opts.retryAfterMs;
  }
}

/** Replaces every occurrence of each secret in `text` with `[redacted]`; empty secrets are ignored. */
export function redact(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const s of secrets) {
    if (s && s.length >= 4) out = out.split(s).join('[redacted]');
  }
  return out;
}
