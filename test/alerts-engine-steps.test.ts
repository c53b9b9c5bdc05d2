/**
 * The engine's judging as steps (applyPollSteps, run by the poll's yielding transaction, issue 14 B9): where it may
 * pause — after every 100 units of work: a verdict is one, a verdict that steps an alert 11, an alert looked at for
 * absence one — that run to the end at once it is applyPoll, and that its duration counts its own time, not the pauses
 * its runner took between steps. One pass over the readings judges them in tiles of 64, each tile by every rule in
 * turn, then each rule's alerts for absence.
 */
import { afterEach, expect, it } from 'vitest';
import { engineFor, market, MIN, outcome, rule, T0, tempDirs, tempStore } from './alerts-helpers.js';
import { countPauses } from './source-helpers.js';

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

const hot = (n: number, at: number) => Array.from({ length: n }, (_, i) => market(`m${i}`, at, { utilization: 0.97 }));
const util = rule({ name: 'util-high', kind: 'utilization_above', severity: 'critical', threshold: 0.9 });


it('pauses after every 100 units of work, judging (a verdict 1, a verdict that steps an alert 11) and absence (an alert 1) counted as one, and ends where applyPoll ends', () => {
  const stepped = engineFor(tempStore(dirs), [util]);
  const atOnce = engineFor(tempStore(dirs), [util]);

  // 150 markets, all breaching: 150 verdicts, each stepping an alert (11 units), in slices of 10, a pause between two
  // slices (14); the last slice's 110 units are counted on: the rule's 150 alerts looked at for absence pause at the
  // 1st and the 101st (2).
  const first = outcome('markets', 'metrics', hot(150, T0), T0);
  const a = countPauses(stepped.applyPollSteps(first, T0));
  expect(a.pauses).toBe(16);
  expect(a.value.events).toHaveLength(150);
  expect(a.value.events).toEqual(atOnce.applyPoll(first, T0).events);

  // One reading of another market: 1 verdict, then the 150 firing alerts looked at for absence (a pause at the 100th).
  const second = outcome('markets', 'metrics', [market('m-other', T0 + MIN, { utilization: 0.1 })], T0 + MIN);
  const b = countPauses(stepped.applyPollSteps(second, T0 + MIN));
  expect(b.pauses).toBe(1);
  expect(b.value.events).toEqual(atOnce.applyPoll(second, T0 + MIN).events);
  expect(stepped.alerts().map((x) => `${x.entity} ${x.state}`)).toEqual(atOnce.alerts().map((x) => `${x.entity} ${x.state}`));
});

it('judges the readings in tiles of 64, each by every rule in turn, counting work across them, and ends where applyPoll ends', () => {
  const apy = rule({ name: 'apy-high', kind: 'threshold', field: 'borrow_apy', op: '>', value: 0.1, severity: 'warning' });
  const stepped = engineFor(tempStore(dirs), [util, apy]);
  const atOnce = engineFor(tempStore(dirs), [util, apy]);
  const both = (n: number, at: number) => Array.from({ length: n }, (_, i) => market(`m${i}`, at, { utilization: 0.97, borrow_apy: 0.2 }));

  // 150 markets breaching both rules: 300 verdicts that step an alert each (11 work units of a step's 100), so a pause
  // every 10 of them wherever a tile or a rule ends (29: the work is counted on across both). Then the 300 alerts
  // looked at for absence, counted on from the last slice's 110 units: a pause at the 1st, 101st and 201st (3).
  const first = outcome('markets', 'metrics', both(150, T0), T0);
  const a = countPauses(stepped.applyPollSteps(first, T0));
  expect(a.pauses).toBe(32);
  expect(a.value.events).toHaveLength(300);
  expect(a.value.events).toEqual(atOnce.applyPoll(first, T0).events);
  // A tile is m0..m63: the first rule's 64 events, then the second rule's for the same markets, then the next tile.
  const who = a.value.events.map((e) => `${e.alert.rule} ${e.alert.entity}`);
  expect(who.slice(62, 66)).toEqual(['util-high m62', 'util-high m63', 'apy-high m0', 'apy-high m1']);
  expect(who.slice(126, 130)).toEqual(['apy-high m62', 'apy-high m63', 'util-high m64', 'util-high m65']);
  expect(who.slice(-2)).toEqual(['apy-high m148', 'apy-high m149']);
});

it("counts its own time in durationMs, not the pauses its runner takes between steps", async () => {
  const engine = engineFor(tempStore(dirs), [util]);
  const steps = engine.applyPollSteps(outcome('markets', 'metrics', hot(30, T0), T0), T0);
  const PAUSE_MS = 250;
  let pauses = 0;
  let r = steps.next();
  const started = performance.now();
  while (!r.done) {
    pauses++;
    // The runner gives the event loop a long turn (here: a deliberate 250 ms) between two steps.
    await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
    r = steps.next();
  }
  const wall = performance.now() - started;
  // 30 verdicts that step an alert: slices of 10 (2 pauses), then the first alert looked at for absence (1).
  expect(pauses).toBe(3);
  expect(wall).toBeGreaterThanOrEqual(3 * PAUSE_MS - 5);
  // Its own work on 30 readings is a few milliseconds; with the pauses counted it would be over 500.
  expect(r.value.durationMs).toBeGreaterThan(0);
  expect(r.value.durationMs).toBeLessThan(PAUSE_MS);
});
