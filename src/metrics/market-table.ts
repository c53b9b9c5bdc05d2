/**
 * The per-market gauges, kept as one table row per market instead of seven prom-client gauges:
 * at 10,000 markets prom-client re-escapes every label of every series on each scrape, while here
 * a market's label text is escaped and encoded once when it first appears. A family's exposition is
 * written straight into bytes once per change of the table (a poll), kept, and sent as is by every scrape.
 * Each family is also registered on the prom-client registry, so `registry.metrics()` stays complete.
 */
import type { Registry } from 'prom-client';
import { nextTurn, ROWS_PER_STEP, runSync, runYielding, type Steps } from '../yielding.js';
import { writeNumberText } from './number-text.js';

/** How long a scrape waits for another's render of the same table before rendering itself ({@link MarketFamily.freshen}). */
const RENDER_WAIT_MS = 2_000;

/** Label names of the per-market gauges, in order. */
export const MARKET_LABELS = ['market_id', 'chain', 'loan_asset', 'collateral_asset'] as const;

/** The market families: name and HELP text, in the order of {@link MarketRow.values}. */
export const MARKET_FAMILIES = [
  ['lookout_market_utilization_ratio', 'Borrowed over supplied of a lending market (0.95 = 95%).'],
  ['lookout_market_borrow_apy_ratio', 'Borrow APY of a lending market, as a fraction.'],
  ['lookout_market_supply_apy_ratio', 'Supply APY of a lending market, as a fraction.'],
  ['lookout_market_oracle_lag_seconds', "Seconds between the oracle's last update and the poll that read it."],
  ['lookout_market_oracle_price', 'Oracle price of the collateral in loan-asset units (raw price scaled by 1e36 and the decimals).'],
  ['lookout_market_total_supplied_usd', 'Total supplied to a lending market, in USD.'],
  ['lookout_market_total_borrowed_usd', 'Total borrowed from a lending market, in USD.'],
] as const;

/** One market's series: its labels and one value per family (NaN: no sample). */
export interface MarketRow {
  labels: Record<(typeof MARKET_LABELS)[number], string>;
  values: number[];
}

interface Entry {
  labels: MarketRow['labels'];
  /** `{market_id="…",…}`, escaped and UTF-8 encoded once. */
  bytes: Buffer;
  values: number[];
  refs: number;
}

/** A family's rendered bytes, and how many readers hold them ({@link MarketFamily.lend}). */
interface Bytes {
  buf: Buffer;
  lent: number;
}

/**
 * What a replace changes ({@link MarketTable.replaceSteps}): the owner's entries and their values, the entries new to
 * the table, those the owner did not report before (another owner does), those it no longer reports.
 */
interface Plan {
  next: Map<Entry, number[]>;
  fresh: Entry[];
  joined: Entry[];
  gone: Entry[];
}

/** The longest text String() gives a number: sign, "0.00000", 17 digits. */
const MAX_NUMBER_TEXT = 25;

/** Escapes a label value for the text format. */
export function escapeLabelValue(v: string): string {
  return /[\\\n"]/.test(v) ? v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"') : v;
}

/** Whether two markets' labels are the same (their market ids are known to be). */
const sameLabels = (a: MarketRow['labels'], b: MarketRow['labels']) => a.chain === b.chain && a.loan_asset === b.loan_asset && a.collateral_asset === b.collateral_asset;
const textOf = (l: MarketRow['labels']) =>
  `{market_id="${escapeLabelValue(l.market_id)}",chain="${escapeLabelValue(l.chain)}",loan_asset="${escapeLabelValue(l.loan_asset)}",collateral_asset="${escapeLabelValue(l.collateral_asset)}"}`;

/** Where a family's render writes: its buffer (replaced when it grows), how far it is written, and its bytes' record. */
interface LinesOut {
  out: Buffer;
  at: number;
  bytes: Bytes;
}

/**
 * Writes the lines of up to `max` entries `rows` has left (their family's value `i`; none for a NaN) into `w`, growing
 * its buffer when a line would not fit: whether rows may be left.
 */
function writeLines(rows: Iterator<Entry>, i: number, prefix: Buffer, w: LinesOut, max: number): boolean {
  let { out, at } = w;
  try {
    for (let n = 0; n < max; n++) {
      const r = rows.next();
      if (r.done === true) return false;
      const e = r.value;
      const v = e.values[i]!;
      if (Number.isNaN(v)) continue;
      const need = prefix.length + e.bytes.length + 1 + MAX_NUMBER_TEXT;
      if (at + need > out.length) {
        const grown = Buffer.allocUnsafe(Math.max(out.length * 2, at + need));
        grown.set(out.subarray(0, at), 0);
        out = grown;
        w.bytes = { buf: grown, lent: 0 };
      }
      out.set(prefix, at);
      at += prefix.length;
      out.set(e.bytes, at);
      at += e.bytes.length;
      out[at++] = 0x20;
      // The text format spells infinities +Inf and -Inf (as prom-client writes them); String() gives Infinity.
      if (v === Infinity || v === -Infinity) {
        out[at++] = v > 0 ? 0x2b : 0x2d;
        out[at++] = 0x49; // I
        out[at++] = 0x6e; // n
        out[at++] = 0x66; // f
      } else at = writeNumberText(out, at, v);
    }
    return true;
  } finally {
    w.out = out;
    w.at = at;
  }
}

/** A gauge family backed by the table, shaped like a prom-client metric for the registry. */
export class MarketFamily {
  readonly type = 'gauge';
  readonly aggregator = 'sum';
  readonly labelNames = [...MARKET_LABELS];
  constructor(
    readonly name: string,
    readonly help: string,
    private readonly index: number,
    /** The table the family renders a column of (a test changes it as a poll would, between a poll's steps). */
    readonly table: MarketTable,
  ) {}

  /** prom-client's metric interface: the samples as objects (slow path, for registry.metrics()). */
  async get() {
    const values: { labels: Record<string, string>; value: number }[] = [];
    for (const e of this.table.entries()) {
      const v = e.values[this.index]!;
      if (!Number.isNaN(v)) values.push({ labels: { ...e.labels }, value: v });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  private cached: { version: number; body: Buffer; bytes: Bytes } | undefined;

  /**
   * The family in the text format, without a trailing newline: kept until the table changes (the next poll). Its
   * bytes are then written over by the next render unless they are lent ({@link lend}): read them at once.
   */
  body(): Buffer {
    return this.cached?.version === this.table.version ? this.cached.body : runSync(this.render());
  }

  /**
   * {@link body} lent to a reader that holds it past the next render (a response the socket takes in its time):
   * no render writes into its bytes until `release` is called (once; later calls do nothing).
   */
  lend(): { body: Buffer; release: () => void } {
    const body = this.body();
    const bytes = this.cached?.body === body ? this.cached.bytes : undefined;
    if (!bytes) return { body, release: () => {} }; // rendered for a table that changed meanwhile: kept by nobody else
    bytes.lent++;
    let held = true;
    return {
      body,
      release: () => {
        if (held) bytes.lent--;
        held = false;
      },
    };
  }

  /**
   * Brings the kept text up to the table when it is older (a poll changed the markets and its own render is not done),
   * in slices: a scrape then gives the event loop its turns where {@link body} renders every line at once (58–80 ms
   * for 10,000 markets on a slow VM, the longest block of a markets poll, B9). A render under way for the same table
   * (the poll's, another scrape's) is waited for, a turn at a time, not done twice; for at most
   * {@link RENDER_WAIT_MS}, in case its steps were left unfinished.
   */
  async freshen(sliceMs?: number): Promise<void> {
    const until = performance.now() + RENDER_WAIT_MS;
    while (this.rendering && performance.now() < until) await nextTurn();
    // A render left unfinished is not waited for again.
    if (this.rendering) this.renderingFor = undefined;
    if (!this.fresh) await runYielding(this.render(), sliceMs);
  }

  /** Whether a render for the table as it is now is under way (and the kept text older): its result is to come. */
  get rendering(): boolean {
    return !this.fresh && this.renderingFor === this.table.version;
  }

  /** The table version a render is under way for, if one is. */
  private renderingFor: number | undefined;

  /** Whether {@link body} is ready without rendering. */
  get fresh(): boolean {
    return this.cached?.version === this.table.version;
  }

  /**
   * Renders {@link body}, pausing between rows: one pass, each line written straight into the buffer (grown when a
   * line would not fit). The result is kept only if the table did not change meanwhile (a later poll's render, or the
   * next scrape, then renders afresh).
   */
  *render(): Steps<Buffer> {
    const version = this.table.version;
    this.renderingFor = version;
    try {
      return yield* this.renderSteps(version);
    } finally {
      if (this.renderingFor === version) this.renderingFor = undefined;
    }
  }

  private *renderSteps(version: number): Steps<Buffer> {
    const head = Buffer.from(`# HELP ${this.name} ${this.help}\n# TYPE ${this.name} gauge`, 'utf8');
    const prefix = Buffer.from('\n' + this.name, 'utf8');
    // Room for every line at the longest a number's text can be (25 chars, e.g. -0.0000012345678901234567): one
    // allocation, a little too large, rather than a pass to size it (the values' text) and a second to write it.
    const size = head.length + this.table.labelBytes + this.table.size * (prefix.length + 1 + MAX_NUMBER_TEXT);
    // The last render's bytes again when no reader holds them: a new 1.7 MB buffer a family and poll was 12 MB of
    // ArrayBuffers a markets poll, freed only by a full collection (B6: ~18 MB of RSS). Only a finished render's bytes
    // are kept, and a render that takes them drops them from the cache as it starts: a render that comes between its
    // slices (a scrape's) finds none to take, and no two renders ever write into the same bytes.
    // Not when they are more than twice what this render needs (the markets went): they go, as a smaller table's should.
    const last = this.cached?.bytes;
    let bytes: Bytes;
    if (last !== undefined && last.lent === 0 && last.buf.length >= size && last.buf.length <= 2 * size) {
      bytes = last;
      this.cached = undefined;
    } else bytes = { buf: Buffer.allocUnsafe(size), lent: 0 };
    const w: LinesOut = { out: bytes.buf, at: head.length, bytes };
    w.out.set(head, 0);
    // The rows a slice at a time by a plain function: a generator's own loop over the Set's iterator made an object
    // per step (70,000 a markets poll); a plain function's loop makes none. Rows a poll adds during a pause are
    // written too (the iterator is the Set's own).
    const rows = this.table.entries();
    while (writeLines(rows, this.index, prefix, w, ROWS_PER_STEP)) yield;
    const { out, at } = w;
    bytes = w.bytes;
    // The room left over (~10%, numbers' text being shorter than the longest) is kept with it: the next render
    // writes into the same bytes.
    const body = out.subarray(0, at);
    if (this.table.version === version) this.cached = { version, body, bytes };
    return body;
  }

  /** Required by the registry's resetMetrics(); the table is owned by polls, so nothing to do. */
  reset(): void {}
}

/** All markets' rows, owned per poll: a market no poll reports any more is dropped. */
export class MarketTable {
  /** Every market's entry, in the order first reported (the families' order). */
  private readonly all = new Set<Entry>();
  /**
   * The entries by market id (one, or a list when a market id came with other labels too), found by comparing the
   * other three labels: no key text built from the four labels per market per poll (a tenth of a replace's time).
   */
  private readonly byId = new Map<string, Entry | Entry[]>();
  /**
   * Each owner's values per market, keyed by the market's entry: not the poll's row (its labels, and a key made
   * from them, were a second copy of every market's label texts, ~3 MB at SPEC §8 scale).
   */
  private readonly byOwner = new Map<string, Map<Entry, number[]>>();
  /** Bytes of every entry's label text together, for the families' renders to size their buffers. */
  labelBytes = 0;
  /** Bumped on every change, so the families know when their cached text is stale. */
  version = 0;
  /** The families, in {@link MARKET_FAMILIES} order. */
  readonly families: MarketFamily[];

  constructor(registries: Registry[]) {
    this.families = MARKET_FAMILIES.map(([name, help], i) => new MarketFamily(name, help, i, this));
    for (const r of registries) for (const f of this.families) r.registerMetric(f as never);
  }

  /** Current entries, for the families. */
  entries(): IterableIterator<Entry> {
    return this.all.values();
  }

  /** Renders every family whose kept bytes are stale, pausing between rows (after a poll, so that scrapes find them ready). */
  *render(): Steps<void> {
    // A family a scrape is rendering for this table is left to it: not rendered twice.
    for (const f of this.families) if (!f.fresh && !f.rendering) yield* f.render();
  }

  /** Number of markets exported. */
  get size(): number {
    return this.all.size;
  }

  /** Replaces the markets `owner` reports with `rows`; markets it no longer reports lose their series. */
  replace(owner: string, rows: readonly MarketRow[]): void {
    runSync(this.replaceSteps(owner, rows));
  }

  /**
   * {@link replace} in steps: the rows are matched to their entries a step at a time with the table left as it is (a
   * scrape between the steps renders the table before the poll, whole), then swapped in at once — values, new
   * markets, owners gained and lost — in a pass without lookups (issue 14, B9: the match was the longest block after
   * a 10,000-market poll). When the table changed between the steps (another owner's replace or forget), the match
   * may be stale: it is made again, at once.
   */
  *replaceSteps(owner: string, rows: readonly MarketRow[]): Steps<void> {
    // A poll without markets (positions, benchmarks) that had none before changes nothing: the rendered families stay.
    if (!this.byOwner.has(owner) && rows.length === 0) return;
    const version = this.version;
    let plan = yield* this.plan(owner, rows);
    if (this.version !== version) plan = runSync(this.plan(owner, rows));
    this.swap(owner, plan);
  }

  /** What {@link replaceSteps} changes, found against the table as it is, a step every few rows. */
  private *plan(owner: string, rows: readonly MarketRow[]): Steps<Plan> {
    const old = this.byOwner.get(owner);
    const next = new Map<Entry, number[]>();
    // New markets by their label text (made once for the entry's bytes): two rows of one poll for the same new market
    // share one entry, as they would in the table.
    const fresh = new Map<string, Entry>();
    const joined: Entry[] = [];
    for (let i = 0; i < rows.length; i++) {
      if (i > 0 && i % ROWS_PER_STEP === 0) yield;
      const row = rows[i]!;
      let e = this.find(row.labels);
      if (e) {
        if (!next.has(e) && !old?.has(e)) joined.push(e);
      } else {
        const text = textOf(row.labels);
        e = fresh.get(text);
        if (!e) fresh.set(text, (e = { labels: row.labels, bytes: Buffer.from(text, 'utf8'), values: row.values, refs: 0 }));
      }
      next.set(e, row.values);
    }
    const gone: Entry[] = [];
    if (old && old.size > next.size - fresh.size - joined.length) {
      yield;
      for (const e of old.keys()) if (!next.has(e)) gone.push(e);
    }
    return { next, fresh: [...fresh.values()], joined, gone };
  }

  /** Puts a plan in as `owner`'s markets, in one pass without lookups. */
  private swap(owner: string, { next, fresh, joined, gone }: Plan): void {
    this.version += 1;
    for (const [e, values] of next) e.values = values;
    for (const e of fresh) {
      e.refs = 1;
      this.add(e);
    }
    for (const e of joined) e.refs += 1;
    if (next.size > 0) this.byOwner.set(owner, next);
    else this.byOwner.delete(owner);
    for (const e of gone) this.release(e);
  }

  /** Drops every market of `owner`. */
  forget(owner: string): void {
    const old = this.byOwner.get(owner);
    if (!old) return;
    this.version += 1;
    this.byOwner.delete(owner);
    for (const e of old.keys()) this.release(e);
  }

  /** The entry of the market with `labels`, if there is one. */
  private find(labels: MarketRow['labels']): Entry | undefined {
    const found = this.byId.get(labels.market_id);
    if (found === undefined || !Array.isArray(found)) return found && sameLabels(found.labels, labels) ? found : undefined;
    for (const e of found) if (sameLabels(e.labels, labels)) return e;
    return undefined;
  }

  private add(e: Entry): void {
    this.all.add(e);
    this.labelBytes += e.bytes.length;
    const id = e.labels.market_id;
    const found = this.byId.get(id);
    if (found === undefined) this.byId.set(id, e);
    else if (Array.isArray(found)) found.push(e);
    else this.byId.set(id, [found, e]);
  }

  private release(e: Entry): void {
    e.refs -= 1;
    if (e.refs <= 0) {
      this.all.delete(e);
      this.labelBytes -= e.bytes.length;
      const id = e.labels.market_id;
      const found = this.byId.get(id);
      if (found === e) this.byId.delete(id);
      else if (Array.isArray(found)) {
        const rest = found.filter((x) => x !== e);
        if (rest.length === 1) this.byId.set(id, rest[0]!);
        else this.byId.set(id, rest);
      }
      return;
    }
    // Another poll still reports this market: show that poll's values, not the ones that left.
    for (const rows of this.byOwner.values()) {
      const values = rows.get(e);
      if (values) {
        e.values = values;
        return;
      }
    }
  }
}
