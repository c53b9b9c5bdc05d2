/**
 * The data-service client's failures: a {@link SourceError} with a stable `code` and a short
 * `reason` that the scheduler uses as the `reason` label of `lookout_poll_errors_total`.
 */
import { SourceError, redact } from '../errors.js';

/** Stable codes of the client's failures. */
export const SOURCE_CODES = {
  auth: 'E_SOURCE_AUTH',
  http: 'E_SOURCE_HTTP',
  timeout: 'E_SOURCE_TIMEOUT',
  network: 'E_SOURCE_NETWORK',
  badJson: 'E_SOURCE_BAD_JSON',
  graphql: 'E_SOURCE_GRAPHQL',
  pagination: 'E_SOURCE_PAGINATION',
  schema: 'E_SOURCE_SCHEMA',
  aborted: 'E_SOURCE_ABORTED',
} as const;

/** One of {@link SOURCE_CODES}. */
export type SourceCode = (typeof SOURCE_CODES)[keyof typeof SOURCE_CODES];

/**
 * Short failure classes, bounded so they can be a metric label:
 * `http_400`, `http_401`, `http_403`, `http_404`, `http_429`, `http_4xx` (other 4xx), `http_3xx`, `http_5xx`, `timeout`, `network`,
 * `bad_json`, `graphql`, `schema`, `page_cap`, `repeated_cursor`, `missing_cursor`, `limit_reached`, `aborted`.
 */
export type SourceReason = string;

/** A failed call to the data service: what failed (endpoint, status), why (`reason`), never the API key. */
export class DataServiceError extends SourceError {
  /** Metric label of the failure class, see {@link SourceReason}. */
  readonly reason: SourceReason;
  constructor(
    code: SourceCode,
    message: string,
    opts: { endpoint: string; reason: SourceReason; status?: number; retryable?: boolean; cause?: unknown },
  ) {
    super(code, message, { endpoint: opts.endpoint, status: opts.status, retryable: opts.retryable ?? false, cause: opts.cause });
    this.reason = opts.reason;
  }
}

/** The metric reason of any error a poll run threw: the client's own reason, else `aborted` or `internal`. */
export function failureReason(err: unknown): SourceReason {
  if (err instanceof DataServiceError) return err.reason;
  if (err instanceof Error && err.name === 'AbortError') return 'aborted';
  return 'internal';
}

/**
 * A copy of an error chain that is safe to keep as `cause`: same names, codes and messages with
 * every secret replaced, and no other properties (an undici error may carry request options).
 */
export function scrubCause(err: unknown, secrets: readonly (string | undefined)[], depth = 0): Error | undefined {
  if (err === undefined || err === null || depth > 4) return undefined;
  const source = err instanceof Error ? err : new Error(String(err));
  const copy = new Error(redact(source.message, secrets), { cause: scrubCause(source.cause, secrets, depth + 1) });
  copy.name = source.name;
  const code = (source as { code?: unknown }).code;
  if (typeof code === 'string') (copy as Error & { code?: string }).code = code;
  return copy;
}
