/**
 * Says when a field rejection deserves a log line: once per (poll, entity, field) until what the
 * service sends for it changes (or the field reads again), not once per poll.
 */
import type { Rejection } from '../model.js';

const MAX_REMEMBERED = 100_000;

/** Remembers what was last logged for each unreadable field. */
export class FieldRejectionLog {
  private readonly last = new Map<string, string>();

  /** The field rejections of one successful run that are news; forgets fields that read again. `entities` is read only when needed. */
  news(poll: string, rejected: readonly Rejection[], entities: Iterable<string>): Rejection[] {
    const now = new Map<string, Rejection>();
    for (const r of rejected) if (r.field !== undefined) now.set(`${poll}\u0000${r.entity ?? ''}\u0000${r.field}`, r);
    const fresh: Rejection[] = [];
    // Entities that vanish while unreadable would be remembered forever: past this many, start over (a line again, once).
    if (this.last.size > MAX_REMEMBERED) this.last.clear();
    for (const [key, r] of now) {
      const sent = `${r.reason}\u0000${r.sent ?? r.detail}`;
      if (this.last.get(key) !== sent) fresh.push(r);
      this.last.set(key, sent);
    }
    // Every key remembered is one of this run's: nothing can be readable again (the usual case: no rejection at all).
    if (this.last.size === now.size) return fresh;
    // A field of an entity that was read this time without a rejection is readable again: a later rejection is news.
    const readEntities = new Set(entities);
    for (const key of [...this.last.keys()]) {
      const [p, entity] = key.split('\u0000');
      if (p === poll && !now.has(key) && readEntities.has(entity ?? '')) this.last.delete(key);
    }
    return fresh;
  }
}
