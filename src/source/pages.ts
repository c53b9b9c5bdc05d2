/**
 * Page walks. Both stop on the service's own "last page" signal, and fail — never return a partial
 * list that would read as "the rest is gone" — on a repeated cursor, a missing cursor, or the page cap.
 */
import { DataServiceError, SOURCE_CODES } from './errors.js';
import type { HttpClient, HttpResponse } from './http.js';

/** Rows of a whole walk and how many pages it took. */
export interface PageWalk {
  /** The rows of every page; empty when they went to an `onPage` instead. */
  rows: unknown[];
  pages: number;
  /** More rows were there, left unread (only with `stopAtCap`: `lookout probe` reads one page). */
  truncated?: boolean;
}

function paginationError(endpoint: string, reason: string, message: string): DataServiceError {
  return new DataServiceError(SOURCE_CODES.pagination, `${endpoint}: ${message}; partial data discarded`, { endpoint, reason });
}

function schemaError(endpoint: string, message: string): DataServiceError {
  return new DataServiceError(SOURCE_CODES.schema, `${endpoint}: ${message}`, { endpoint, reason: 'schema' });
}

function append(into: unknown[], rows: readonly unknown[]): void {
  for (const r of rows) into.push(r);
}

/** The rows of a list page: `data` when it is an array, else the body's first array member, else the body if it is an array. */
export function pageRows(body: unknown): unknown[] | undefined {
  if (Array.isArray(body)) return body;
  if (!body || typeof body !== 'object') return undefined;
  const obj = body as Record<string, unknown>;
  if (Array.isArray(obj.data)) return obj.data;
  for (const v of Object.values(obj)) if (Array.isArray(v)) return v;
  return undefined;
}

/** `page_info` of a list page: whether more rows exist and the cursor to ask for them. */
export function pageInfo(body: unknown): { hasMore: boolean; next: string | undefined } {
  const obj = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  const info = (obj.page_info ?? obj.pageInfo ?? {}) as Record<string, unknown>;
  const raw = info.next_cursor ?? info.nextCursor ?? obj.next_cursor;
  const next = typeof raw === 'string' && raw !== '' ? raw : typeof raw === 'number' ? String(raw) : undefined;
  const more = info.has_more ?? info.hasMore;
  const hasMore = typeof more === 'boolean' ? more : more === 'true' ? true : more === 'false' ? false : next !== undefined;
  return { hasMore, next };
}

/**
 * A request sent ahead: answered or failed later, when it is awaited; `abort` drops it (the page before it failed).
 * Aborted with `signal` too (the walk's own).
 */
function requestAhead(http: HttpClient, url: URL, signal: AbortSignal | undefined): { response: Promise<HttpResponse>; abort(): void } {
  const stop = new AbortController();
  const onAbort = () => stop.abort(signal?.reason);
  if (signal?.aborted) onAbort();
  else signal?.addEventListener('abort', onAbort, { once: true });
  const response = http.request({ method: 'GET', url, signal: stop.signal, accept: [404] });
  void response.then(
    () => signal?.removeEventListener('abort', onAbort),
    () => signal?.removeEventListener('abort', onAbort), // its failure is the walk's when awaited, nothing when dropped
  );
  return { response, abort: () => stop.abort(new Error('the page before it failed')) };
}

/** What a cursor walk does after a page: stop (at the end, or truncated at the cap), fail, or go on to `cursor`. */
type CursorStep = { stop: true; truncated?: true } | { fail: DataServiceError } | { cursor: string };

function afterCursorPage(
  endpoint: string,
  page: number,
  body: unknown,
  seen: ReadonlySet<string>,
  maxPages: number,
  stopAtCap: boolean,
): CursorStep {
  const { hasMore, next } = pageInfo(body);
  if (!hasMore) return { stop: true };
  if (next === undefined) return { fail: paginationError(endpoint, 'missing_cursor', `page ${page} says has_more but gives no next_cursor`) };
  if (seen.has(next)) return { fail: paginationError(endpoint, 'repeated_cursor', `page ${page} repeats cursor ${JSON.stringify(next.slice(0, 64))}`) };
  if (page >= maxPages && stopAtCap) return { stop: true, truncated: true };
  if (page >= maxPages) return { fail: paginationError(endpoint, 'page_cap', `still more rows after ${maxPages} pages (source.max_pages)`) };
  return { cursor: next };
}

/**
 * Walks a cursor-paginated list (positions, assets, holdings) to its end. `url(cursor)` builds the
 * request of each page; a 404 is "nothing matched", an empty last page. With `onPage`, each page's rows go to it
 * (awaited before the walk goes on) instead of into the result, so a caller that reads them page by page
 * never holds every raw row at once (50,000 positions: ~19 MB); the next page is asked for before a page's rows go
 * to `onPage` (its cursor is known by then), so the service prepares it while they are read — at most two pages'
 * rows are held. A page that ends the walk, or fails it, is still handed to `onPage` first; nothing is asked after it.
 */
export async function walkCursorPages(
  http: HttpClient,
  endpoint: string,
  url: (cursor: string | undefined) => URL,
  maxPages: number,
  signal?: AbortSignal,
  stopAtCap = false,
  onPage?: (rows: unknown[]) => void | Promise<void>,
): Promise<PageWalk> {
  const rows: unknown[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  let ahead: ReturnType<typeof requestAhead> | undefined;
  for (let page = 1; ; page++) {
    const res = ahead ? await ahead.response : await http.request({ method: 'GET', url: url(cursor), signal, accept: [404] });
    ahead = undefined;
    if (res.status === 404) return { rows, pages: page };
    const items = pageRows(res.body);
    if (!items) throw schemaError(endpoint, `page ${page} has no array of rows`);
    const step = afterCursorPage(endpoint, page, res.body, seen, maxPages, stopAtCap);
    if (onPage) {
      if ('cursor' in step) ahead = requestAhead(http, url(step.cursor), signal);
      try {
        await onPage(items);
      } catch (err) {
        ahead?.abort();
        throw err;
      }
    } else append(rows, items);
    if ('fail' in step) throw step.fail;
    if ('stop' in step) return step.truncated ? { rows, pages: page, truncated: true } : { rows, pages: page };
    seen.add(step.cursor);
    cursor = step.cursor;
  }
}

/**
 * Walks a page-numbered list (historical benchmarks: `page` from 0, `nextPage` absent on the last page).
 * A 404 is an empty last page.
 */
export async function walkNumberedPages(
  http: HttpClient,
  endpoint: string,
  url: (page: number) => URL,
  maxPages: number,
  signal?: AbortSignal,
  stopAtCap = false,
): Promise<PageWalk> {
  const rows: unknown[] = [];
  const seen = new Set<number>();
  let page = 0;
  for (let count = 1; ; count++) {
    seen.add(page);
    const res = await http.request({ method: 'GET', url: url(page), signal, accept: [404] });
    if (res.status === 404) return { rows, pages: count };
    const body = res.body as Record<string, unknown> | null;
    const items = pageRows(body);
    if (!items) throw schemaError(endpoint, `page ${page} has no array of rows`);
    append(rows, items);
    const rawNext = body && !Array.isArray(body) ? body.nextPage : undefined;
    if (rawNext === undefined || rawNext === null) return { rows, pages: count };
    const next = Number(rawNext);
    if (!Number.isInteger(next) || next < 0) throw schemaError(endpoint, `page ${page} gives nextPage ${JSON.stringify(rawNext)}, not a page number`);
    if (seen.has(next)) throw paginationError(endpoint, 'repeated_cursor', `page ${page} points back to page ${next}`);
    if (count >= maxPages && stopAtCap) return { rows, pages: count, truncated: true };
    if (count >= maxPages) throw paginationError(endpoint, 'page_cap', `still more pages after ${maxPages} (source.max_pages)`);
    page = next;
  }
}
