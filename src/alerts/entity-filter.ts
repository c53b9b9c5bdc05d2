/**
 * Which entities of a poll may have a tracked alert of a rule, told without the rule's map: in an incident that map
 * holds thousands of alerts, and looking up each of a poll's 50,000 entities in it (~70 ns a miss: the look-up
 * touches the stored keys of its bucket) was more of the poll than the alerts' own writes (B4 incident). A bit per
 * value of a cheap hash of a few characters of the entity: no false "no" (every entity added sets its bit), a false
 * "maybe" only costs the map look-up it saves otherwise.
 */
const BITS = 1 << 16;

export class EntityFilter {
  private readonly bits = new Uint32Array(BITS >>> 5);

  /** A filter holding `entities` (the keys of a rule's tracked alerts). */
  static of(entities: Iterable<string>): EntityFilter {
    const f = new EntityFilter();
    for (const e of entities) f.add(e);
    return f;
  }

  add(entity: string): void {
    const h = hash(entity);
    this.bits[h >>> 5]! |= 1 << (h & 31);
  }

  /** False only when `entity` was never added. */
  mayHave(entity: string): boolean {
    const h = hash(entity);
    return (this.bits[h >>> 5]! & (1 << (h & 31))) !== 0;
  }
}

/**
 * 16 bits from the length and the last five characters and the middle one: ids end in hex digits or differ there
 * (market and position ids, wallets). Reads at most six characters of the reading's own string, never the map's.
 */
function hash(s: string): number {
  const n = s.length;
  let h = n;
  for (let i = n - 1, end = n > 5 ? n - 5 : 0; i >= end; i--) h = Math.imul(h, 31) + s.charCodeAt(i);
  h = Math.imul(h, 31) + (n > 0 ? s.charCodeAt(n >>> 1) : 0);
  h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
  return (h ^ (h >>> 16)) & (BITS - 1);
}
