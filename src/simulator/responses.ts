/** Response shapes shared by the simulator's routes: error bodies per endpoint group, and fault bodies. */
import { STATUS_CODES } from 'node:http';

/** Which error-body convention a path follows. */
export type EndpointGroup = 'rest' | 'graphql' | 'catalog';

/** A response before it is written: status, JSON body, extra headers. */
export interface SimResponse {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** The paths of the GraphQL endpoint (the interface names both). */
export const GRAPHQL_PATHS: ReadonlySet<string> = new Set(['/yields/graphql', '/api/graphql']);

/** The group of a request path on a listener. */
export function groupOf(listener: 'base' | 'catalog', path: string): EndpointGroup {
  if (listener === 'catalog') return 'catalog';
  return GRAPHQL_PATHS.has(path) ? 'graphql' : 'rest';
}

/** An error response in the group's shape: `{error, message, statusCode}`, `{error, details?}` or `{errors:[{message}]}`. */
export function errorResponse(group: EndpointGroup, status: number, message?: string, details?: unknown): SimResponse {
  const error = STATUS_CODES[status] ?? 'Error';
  if (group === 'graphql') return { status, body: { errors: [{ message: message ?? error }] } };
  if (group === 'catalog') return { status, body: details === undefined ? { error } : { error, details } };
  return { status, body: { error, message: message ?? error, statusCode: status } };
}

/** The 401 every group answers a missing or wrong key with. */
export function unauthorized(group: EndpointGroup): SimResponse {
  return errorResponse(group, 401, 'API key missing or rejected');
}
