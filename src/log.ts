/** Structured logs: one JSON object per line on stderr (or any sink), or a short text line for a terminal; secrets scrubbed. */
import { redact } from './errors.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const order: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** A logger: `msg` is a short event name, `fields` the details. */
export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** A logger that adds `fields` to every line. */
  child(fields: Record<string, unknown>): Logger;
}

/** Options for {@link createLogger}. */
export interface LoggerOptions {
  level?: LogLevel;
  write?: (line: string) => void;
  /** Values that must never be printed (API key, SMTP password, webhook URLs, tokens). */
  secrets?: () => readonly (string | undefined)[];
  base?: Record<string, unknown>;
  /** `json` (default): one JSON object per line, for collectors; `text`: `12:03:07 WARN poll poll=markets …`, for a terminal. */
  format?: LogFormat;
}

/** How log lines are written. */
export type LogFormat = 'json' | 'text';

/** `log.format: auto` is text when the log goes to a terminal, else JSON. */
export function resolveLogFormat(format: LogFormat | 'auto' | undefined, isTTY: boolean | undefined): LogFormat {
  return format === 'text' || format === 'json' ? format : isTTY ? 'text' : 'json';
}

/** A record as one human line: time, level, event, then key=value (quoted when it needs it). */
function textLine(rec: Record<string, unknown>): string {
  const { time, level, msg, service: _service, ...rest } = rec;
  const value = (v: unknown) => {
    const s = typeof v === 'string' ? v : JSON.stringify(v);
    return /^[^\s"=]*$/.test(s ?? '') ? s : JSON.stringify(s);
  };
  const pairs = Object.entries(rest)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${value(v)}`);
  return [String(time).slice(11, 19), String(level).toUpperCase().padEnd(5), String(msg), ...pairs].join(' ');
}

function errorFields(err: unknown): unknown {
  if (err instanceof Error) {
    const e = err as Error & { code?: unknown };
    return { name: e.name, message: e.message, ...(e.code !== undefined ? { code: e.code } : {}) };
  }
  return err;
}

/** Creates a JSON-lines logger. */
export function createLogger(opts: LoggerOptions = {}): Logger {
  const min = order[opts.level ?? 'info'];
  const write = opts.write ?? ((line: string) => process.stderr.write(line + '\n'));
  const secrets = opts.secrets ?? (() => []);
  const make = (base: Record<string, unknown>): Logger => {
    const emit = (level: LogLevel, msg: string, fields?: Record<string, unknown>) => {
      if (order[level] < min) return;
      const rec: Record<string, unknown> = { time: new Date().toISOString(), level, msg, ...base };
      for (const [k, v] of Object.entries(fields ?? {})) rec[k] = k === 'err' || v instanceof Error ? errorFields(v) : v;
      write(redact(opts.format === 'text' ? textLine(rec) : JSON.stringify(rec), secrets()));
    };
    return {
      debug: (m, f) => emit('debug', m, f),
      info: (m, f) => emit('info', m, f),
      warn: (m, f) => emit('warn', m, f),
      error: (m, f) => emit('error', m, f),
      child: (f) => make({ ...base, ...f }),
    };
  };
  return make(opts.base ?? {});
}

/** A logger that prints nothing: for tests that don't look at logs. */
export const silentLogger: Logger = createLogger({ write: () => {} });
