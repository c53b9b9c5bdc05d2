/**
 * Alertmanager as the oracle (docs/alertmanager-parity.md). Generated alert timelines — groups, firing and resolving,
 * silences added and expired, an inhibiting source_down, a restart of lookout — run side by side in real time through
 * lookout's notification pipeline and a real Alertmanager (Debian's prometheus-alertmanager); per group, both sinks must
 * receive the same sequence of notifications (status, alerts firing, alerts resolved), each within a tick of the
 * other. Timelines run several at a time against one Alertmanager, kept apart by a `run` label in every group.
 *
 * DIFF_RUNS timelines (default 24); DIFF_SEED=N re-runs a printed seed, DIFF_SEED=random draws a new one; DIFF_DEBUG=1
 * prints what both sides sent for every timeline.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempStores } from '../notify-helpers.js';
import { tool } from '../tools.js';
import { AlertmanagerUnderTest, runTimeline, Sink, TIMING, type Notice } from './harness.js';
import { describeTimeline, timelineArb, type Timeline } from './timeline.js';

const alertmanager = tool('prometheus-alertmanager', 'prometheus-alertmanager');
const RUNS = Number(process.env.DIFF_RUNS ?? 24);
/** A fixed seed by default, so CI runs the same timelines every time; DIFF_SEED=random explores new ones. */
const SEED = process.env.DIFF_SEED === 'random' ? Date.now() % 2 ** 31 : Number(process.env.DIFF_SEED ?? 20_261_124);
/** Timelines run at once (each is mostly waiting). */
const PARALLEL = 12;
/** How far apart the two sides may send the same notification: under a tick (ticks are group_interval apart). */
const TOLERANCE_MS = TIMING.group_interval * 0.8;

const stores = tempStores();
let am: AlertmanagerUnderTest;
let amSink: Sink;
let lookoutSink: Sink;

beforeAll(async () => {
  if (alertmanager.skip) return;
  amSink = await new Sink().start();
  lookoutSink = await new Sink().start();
  am = await new AlertmanagerUnderTest().start(alertmanager.require(), amSink.url);
}, 30_000);
afterAll(async () => {
  am?.stop();
  await amSink?.stop();
  await lookoutSink?.stop();
  stores.cleanup();
});

const shape = (n: Notice) => `${n.status} firing=[${n.firing.join(',')}] resolved=[${n.resolved.join(',')}]`;

/** Per group, the differences between what lookout and Alertmanager sent; empty when they agree. */
export function differences(lookout: Notice[], alertmanager: Notice[]): string[] {
  const groups = [...new Set([...lookout, ...alertmanager].map((n) => n.group))].sort();
  const out: string[] = [];
  for (const g of groups) {
    const l = lookout.filter((n) => n.group === g);
    const a = alertmanager.filter((n) => n.group === g);
    const t0 = Math.min(...[...lookout, ...alertmanager].map((n) => n.at));
    const show = (ns: Notice[]) => ns.map((n) => `    +${((n.at - t0) / 1000).toFixed(1)}s ${shape(n)}`).join('\n') || '    (nothing)';
    const same = l.length === a.length && l.every((n, i) => shape(n) === shape(a[i]!) && Math.abs(n.at - a[i]!.at) <= TOLERANCE_MS);
    if (!same) out.push(`group ${g}:\n  lookout:\n${show(l)}\n  alertmanager:\n${show(a)}`);
  }
  return out;
}

describe.concurrent('lookout notifies as Alertmanager does', () => {
  it.skipIf(alertmanager.skip)(`${RUNS} generated timelines, seed ${SEED} (${alertmanager.needs})`, async () => {
    const timelines = fc.sample(timelineArb({ restarts: true }), { numRuns: RUNS, seed: SEED });
    const failures: string[] = [];
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < timelines.length; i = next++) {
        const t = timelines[i] as Timeline;
        const run = `s${SEED}-t${i}`;
        await runTimeline(t, { run, am, lookoutSink, stores });
        const diff = differences(lookoutSink.byRun.get(run) ?? [], amSink.byRun.get(run) ?? []);
        if (process.env.DIFF_DEBUG) console.log(`#${i}\n${describeTimeline(t)}\n` + differences(lookoutSink.byRun.get(run) ?? [], [{ at: 0, group: '-', status: '', firing: [], resolved: [] }]).join('\n') + '\nAM:\n' + JSON.stringify(amSink.byRun.get(run)));
        if (diff.length) failures.push(`timeline #${i} (DIFF_SEED=${SEED}):\n${describeTimeline(t)}\n${diff.join('\n')}`);
      }
    };
    await Promise.all(Array.from({ length: PARALLEL }, worker));
    // Every timeline said something on both sides (the sinks heard them), so a silent harness cannot pass.
    const heard = timelines.map((_, i) => (amSink.byRun.get(`s${SEED}-t${i}`) ?? []).length);
    expect(heard.filter((n) => n > 0).length, 'timelines Alertmanager notified about').toBeGreaterThan(RUNS / 2);
    expect(failures, failures.join('\n\n')).toEqual([]);
  }, 300_000);
});

/** One fixed timeline through both sides; returns what each sink heard. */
async function sideBySide(name: string, t: Timeline, sendResolvedWhenMuted: boolean): Promise<{ lookout: Notice[]; am: Notice[] }> {
  const run = `${name}-${SEED}`;
  await runTimeline(t, { run, am, lookoutSink, stores, sendResolvedWhenMuted });
  return { lookout: lookoutSink.byRun.get(run) ?? [], am: amSink.byRun.get(run) ?? [] };
}
const alertOf = (entity: string, fireAt: number, resolveAt: number | null) => ({ rule: 'r1', entity, poll: 'p1' as const, fireAt, resolveAt });
const shapes = (ns: Notice[]) => ns.filter((n) => n.group === 'r1').map(shape);

describe.concurrent('differences kept on purpose (docs/alertmanager-parity.md), each against the real Alertmanager', () => {
  it.skipIf(alertmanager.skip)('send_resolved_when_muted (default): an announced alert that resolves while inhibited gets its RESOLVED; Alertmanager drops it', async () => {
    const t: Timeline = { alerts: [alertOf('m0', 0, 3)], sourceDown: { from: 2, to: null }, silences: [], restartAt: null, slots: 5 };
    const { lookout, am: a } = await sideBySide('muted-resolve', t, true);
    expect(shapes(a)).toEqual(['firing firing=[m0] resolved=[]']);
    expect(shapes(lookout)).toEqual(['firing firing=[m0] resolved=[]', 'resolved firing=[] resolved=[m0]']);
  }, 60_000);

  it.skipIf(alertmanager.skip)('a group whose last alert resolved is told at once; Alertmanager waits for its next tick', async () => {
    const t: Timeline = { alerts: [alertOf('m0', 0, 2)], sourceDown: null, silences: [], restartAt: null, slots: 4 };
    const { lookout, am: a } = await sideBySide('resolved-at-once', t, false);
    expect(shapes(lookout)).toEqual(shapes(a));
    const [l, m] = [lookout.find((n) => n.status === 'resolved')!, a.find((n) => n.status === 'resolved')!];
    // the resolve happens half a tick before Alertmanager's next flush
    expect(m.at - l.at).toBeGreaterThan(TIMING.group_interval / 4);
  }, 60_000);

  it.skipIf(alertmanager.skip)('an alert that resolved while muted and fires again is announced; Alertmanager, whose log still holds it firing, waits for repeat_interval', async () => {
    const t: Timeline = { alerts: [alertOf('m0', 0, 2), alertOf('m0', 4, null)], sourceDown: { from: 2, to: 3 }, silences: [], restartAt: null, slots: 7 };
    const { lookout, am: a } = await sideBySide('refire', t, false);
    // Both say FIRING twice; Alertmanager's second is only its repeat, lookout's announces the new firing.
    expect(shapes(a)).toEqual(['firing firing=[m0] resolved=[]', 'firing firing=[m0] resolved=[]']);
    expect(shapes(lookout)).toEqual(shapes(a));
    const r1 = (ns: Notice[]) => ns.filter((n) => n.group === 'r1');
    const gap = (ns: Notice[]) => r1(ns)[1]!.at - r1(ns)[0]!.at;
    expect(gap(a)).toBeGreaterThanOrEqual(TIMING.repeat_interval - 100);
    // lookout's comes group_wait after the alert fired again: at least a tick before Alertmanager's repeat
    expect(gap(a) - gap(lookout)).toBeGreaterThanOrEqual(TIMING.group_interval - 200);
  }, 60_000);
});
