/** A record of the requests the simulator received, so tests can assert retries and headers. */

/** One received request. */
export interface RequestEntry {
  seq: number;
  /** Clock time it arrived, ms. */
  at: number;
  listener: 'base' | 'catalog';
  method: string;
  path: string;
  /** The raw query string, without `?`. */
  query: string;
  /** Header names lower-cased, as node gives them. */
  headers: Record<string, string | string[] | undefined>;
  /** Status sent, once the response is written. */
  status?: number;
  /** The fault that shaped the response, if any (its id). */
  faultId?: number;
}

/** Counts of requests by method + path, and the last N requests in full. */
export class RequestLog {
  private readonly byKey = new Map<string, number>();
  private readonly recent: RequestEntry[] = [];
  private seq = 0;

  constructor(private readonly keep = 500) {}

  /** Records a request and returns its entry (the status is filled in later). */
  record(e: Omit<RequestEntry, 'seq'>): RequestEntry {
    const entry: RequestEntry = { ...e, seq: ++this.seq };
    const key = `${e.method} ${e.path}`;
    this.byKey.set(key, (this.byKey.get(key) ?? 0) + 1);
    this.recent.push(entry);
    if (this.recent.length > this.keep) this.recent.shift();
    return entry;
  }

  /** How many requests hit `path` (all paths when omitted), optionally only of one method. */
  count(path?: string, method?: string): number {
    let n = 0;
    for (const [key, c] of this.byKey) {
      const [m, p] = [key.slice(0, key.indexOf(' ')), key.slice(key.indexOf(' ') + 1)];
      if ((path === undefined || p === path) && (method === undefined || m === method.toUpperCase())) n += c;
    }
    return n;
  }

  /** Every count, keyed `METHOD /path`. */
  counts(): Record<string, number> {
    return Object.fromEntries(this.byKey);
  }

  /** The last `n` requests (all kept ones when omitted), oldest first. */
  last(n?: number): RequestEntry[] {
    return n === undefined ? [...this.recent] : this.recent.slice(-n);
  }

  /** Total requests seen since start or the last clear. */
  get total(): number {
    return this.seq;
  }

  /** Forgets everything. */
  clear(): void {
    this.byKey.clear();
    this.recent.length = 0;
    this.seq = 0;
  }
}
