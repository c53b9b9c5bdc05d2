/**
 * The engine looks up a reading's entity in a rule's tracked alerts only when an {@link EntityFilter} says it may be
 * there (B4 incident). A false "no" would lose an alert: an ok verdict would not resolve it, a second reading of the
 * entity in one poll would open it again. A real SQLite file.
 */
import { afterEach, expect, it } from 'vitest';
import { EntityFilter } from '../src/alerts/entity-filter.js';
import { fingerprint } from '../src/alerts/lifecycle.js';
import { drive, engineFor, eventList, market, MIN, outcome, rule, T0, tempDirs, tempStore } from './alerts-helpers.js';

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

it('says "maybe" for every entity added, and "no" for most others', () => {
  const hex = (i: number) => (Math.imul(i + 1, 0x9e3779b1) >>> 0).toString(16).padStart(8, '0');
  const ids = Array.from({ length: 20_000 }, (_, i) => [`pos_${hex(i)}${hex(i * 7)}`, `0x${hex(i)}${hex(i + 3)}`, `m${i}`, ''][i % 4]!);
  const added = ids.filter((_, i) => i % 20 === 0);
  const f = EntityFilter.of(added);
  for (const id of added) expect(f.mayHave(id), id).toBe(true);
  const others = ids.filter((id, i) => i % 20 !== 0 && !added.includes(id));
  const maybe = others.filter((id) => f.mayHave(id)).length;
  expect(maybe / others.length).toBeLessThan(0.1);
  f.add('late');
  expect(f.mayHave('late')).toBe(true);
});

const util = rule({ name: 'util', kind: 'utilization_above', severity: 'critical', threshold: 0.9, for: '3m' });

it('an alert tracked before the poll is found among many other entities: judged ok, it is cancelled', () => {
  const store = tempStore(dirs);
  const engine = engineFor(store, [util]);
  const others = (at: number) => Array.from({ length: 2_000 }, (_, i) => market(`market-${i}`, at, { utilization: 0.5 }));
  const poll = (i: number, utilization: number) => outcome('markets', 'metrics', [...others(T0 + i * MIN), market('m1', T0 + i * MIN, { utilization })], T0 + i * MIN);
  expect(eventList(drive(store, engine, poll(0, 0.95)))).toEqual(['pending util/m1']);
  drive(store, engine, poll(1, 0.96));
  expect(engine.repo.get(fingerprint('util', 'm1'))).toMatchObject({ state: 'pending', value: 0.96 });
  expect(eventList(drive(store, engine, poll(2, 0.5)))).toEqual(['cancelled util/m1']);
  store.close();
});

it('a second reading of an entity in one poll finds the alert the first one opened', () => {
  const store = tempStore(dirs);
  const engine = engineFor(store, [util]);
  const r = drive(store, engine, outcome('markets', 'metrics', [market('m1', T0, { utilization: 0.95 }), market('m1', T0, { utilization: 0.97 })], T0));
  expect(eventList(r)).toEqual(['pending util/m1']);
  expect(engine.repo.get(fingerprint('util', 'm1'))).toMatchObject({ state: 'pending', value: 0.97, previous_value: 0.95 });
  store.close();
});
