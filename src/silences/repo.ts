/** Silences: label matchers with a time window, author and comment; they mute notifications, never evaluation. */
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import type Database from 'better-sqlite3';
import type { Clock } from '../clock.js';
import { LookoutError } from '../errors.js';
import { MATCH_OPS, matches, matchesAll, validateMatcher, type Matcher } from './matcher.js';

/** A silence as stored and as the HTTP API returns it; times are Unix ms. */
export interface Silence {
  id: string;
  matchers: Matcher[];
  startsAt: number;
  endsAt: number;
  author: string;
  comment: string;
  createdAt: number;
  updatedAt: number;
  /** Derived from the time of the query: not started yet, in force, or over. */
  status: 'pending' | 'active' | 'expired';
}

/** Input of {@link SilenceRepo.add}: times as Unix ms or ISO-8601 text. */
export interface SilenceInput {
  matchers: Matcher[];
  startsAt?: number | string;
  endsAt: number | string;
  author: string;
  comment: string;
}

const require = createRequire(import.meta.url);

/** The zod schema of {@link SilenceInput}, built from the zod it is given. */
function buildInputSchema({ z }: typeof import('zod')) {
  // The refine sits after the union: inside it, a failed branch's message is swallowed by the union's 'Invalid input'.
  const time = z
    .union([z.number().int().nonnegative(), z.string().transform((s) => Date.parse(s))])
    .refine((t) => !Number.isNaN(t), { message: 'must be an ISO-8601 time' });
  return z.strictObject({
    matchers: z
      .array(z.strictObject({ name: z.string().min(1), op: z.enum(MATCH_OPS), value: z.string() }))
      .min(1, 'a silence needs at least one matcher'),
    startsAt: time.optional(),
    endsAt: time,
    author: z.string().trim().min(1, 'author is required').max(200),
    comment: z.string().trim().min(1, 'comment is required').max(2000),
  });
}

let inputSchema: ReturnType<typeof buildInputSchema> | undefined;

/**
 * The zod schema of {@link SilenceInput} (the HTTP API's too), built at its first use: a daemon loads zod with the
 * first silence it is asked to add, not at start (B6s). `require`d, as {@link SilenceRepo.add} answers at once.
 */
export function silenceInputSchema(): ReturnType<typeof buildInputSchema> {
  return (inputSchema ??= buildInputSchema(require('zod') as typeof import('zod')));
}

interface Row {
  id: string;
  matchers: string;
  starts_at: number;
  ends_at: number;
  author: string;
  comment: string;
  created_at: number;
  updated_at: number;
}

function badRequest(message: string): LookoutError {
  return new LookoutError('E_BAD_REQUEST', message);
}

/** Repository of silences over the store's connection. */
export class SilenceRepo {
  private readonly db: Database.Database;
  private readonly clock: Clock;

  /** `db` is `store.db`; the clock stamps new silences and judges which are active. */
  constructor(db: Database.Database, clock: Clock) {
    this.db = db;
    this.clock = clock;
  }

  private toSilence(r: Row, now: number): Silence {
    return {
      id: r.id,
      matchers: JSON.parse(r.matchers) as Matcher[],
      startsAt: r.starts_at,
      endsAt: r.ends_at,
      author: r.author,
      comment: r.comment,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
      status: now < r.starts_at ? 'pending' : now < r.ends_at ? 'active' : 'expired',
    };
  }

  /** Validates and stores a new silence; throws LookoutError `E_BAD_REQUEST` with a clear message on bad input. */
  add(input: unknown): Silence {
    const parsed = silenceInputSchema().safeParse(input);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const where = issue.path.length ? `${issue.path.join('.')}: ` : '';
      throw badRequest(`invalid silence: ${where}${issue.message}`);
    }
    const v = parsed.data;
    for (const m of v.matchers) validateMatcher(m);
    if (v.matchers.every((m) => matches(m, {}))) {
      throw badRequest('invalid silence: at least one matcher must not match an empty label, or the silence would mute every alert');
    }
    const now = this.clock.now();
    const startsAt = Math.max(v.startsAt ?? now, now);
    if (v.endsAt <= startsAt) throw badRequest('invalid silence: endsAt must be later than startsAt and than now');
    const row: Row = {
      id: randomUUID(),
      matchers: JSON.stringify(v.matchers.map((m) => ({ name: m.name, op: m.op, value: m.value }))),
      starts_at: startsAt,
      ends_at: v.endsAt,
      author: v.author,
      comment: v.comment,
      created_at: now,
      updated_at: now,
    };
    this.db
      .prepare(
        `INSERT INTO silences (id, matchers, starts_at, ends_at, author, comment, created_at, updated_at)
         VALUES (@id, @matchers, @starts_at, @ends_at, @author, @comment, @created_at, @updated_at)`,
      )
      .run(row);
    return this.toSilence(row, now);
  }

  /** Silences, newest first; `active: true` keeps those in force now (or starting later), `false` those that are over. */
  list(opts: { active?: boolean } = {}): Silence[] {
    const now = this.clock.now();
    const rows =
      opts.active === undefined
        ? (this.db.prepare(`SELECT * FROM silences ORDER BY created_at DESC, id`).all() as Row[])
        : opts.active
          ? (this.db.prepare(`SELECT * FROM silences WHERE ends_at > ? ORDER BY created_at DESC, id`).all(now) as Row[])
          : (this.db.prepare(`SELECT * FROM silences WHERE ends_at <= ? ORDER BY created_at DESC, id`).all(now) as Row[]);
    return rows.map((r) => this.toSilence(r, now));
  }

  /** One silence by id, or undefined. */
  get(id: string): Silence | undefined {
    const r = this.db.prepare(`SELECT * FROM silences WHERE id = ?`).get(id) as Row | undefined;
    return r ? this.toSilence(r, this.clock.now()) : undefined;
  }

  /** Ends a silence now (kept, listed as expired); throws LookoutError `E_NOT_FOUND` for an unknown id. Expiring twice is harmless. */
  expire(id: string): Silence {
    const now = this.clock.now();
    const existing = this.db.prepare(`SELECT * FROM silences WHERE id = ?`).get(id) as Row | undefined;
    if (!existing) throw new LookoutError('E_NOT_FOUND', `no silence with id ${id}`);
    if (existing.ends_at > now) {
      this.db.prepare(`UPDATE silences SET ends_at = ?, starts_at = MIN(starts_at, ?), updated_at = ? WHERE id = ?`).run(now, now, now, id);
    }
    return this.get(id)!;
  }

  /** The matcher lists of the silences in force at `now` (one query; use it to judge many alerts). */
  activeAt(now: number): Matcher[][] {
    const rows = this.db.prepare(`SELECT matchers FROM silences WHERE starts_at <= ? AND ends_at > ?`).all(now, now) as Array<{ matchers: string }>;
    return rows.map((r) => JSON.parse(r.matchers) as Matcher[]);
  }

  /** True when a silence in force at `now` matches `labels`. */
  isSilenced(labels: Readonly<Record<string, string>>, now: number): boolean {
    return this.activeAt(now).some((ms) => matchesAll(ms, labels));
  }

  /** Deletes silences that ended before `olderThan`; returns how many. */
  prune(olderThan: number): number {
    return this.db.prepare(`DELETE FROM silences WHERE ends_at < ?`).run(olderThan).changes;
  }
}

