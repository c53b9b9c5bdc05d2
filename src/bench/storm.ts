/**
 * Target B7, the storm: every market crosses a threshold in one poll, and the real daemon (in a child process)
 * tells a loopback Slack through its real slack notifier (webhook mode), grouped by the route's group_by. The
 * recorder takes one message a second and answers 429 with Retry-After to anything faster, as Slack does.
 * The bench fails (not a timing: a fact) unless every group arrived exactly once, and none that should not;
 * it reports the time from the simulator's change to the last message.
 */
import { join } from 'node:path';
import { DEFAULT_NETWORKS } from '../simulator/index.js';
import { benchConfigYaml } from './config.js';
import { MARKETS, type Bench, type BenchContext } from './context.js';
import { startDaemonChild, type DaemonChild } from './daemon-proc.js';
import { startSlackRecorder, type SlackRecorder } from './slack-recorder.js';
import { bareMetricsText, startChildSimulator, type ChildSimulator } from './sim.js';
import { summarize } from './stats.js';
import { until } from './until.js';

/** What one storm is. */
interface StormPlan {
  markets: number;
  /** How many of the simulator's networks (chains) the markets are spread over. */
  networks: number;
  /** Alert labels the route groups by, besides the rule. */
  groupBy: string[];
}

/** The full run: the target's 10,000 markets on 9 chains, a group per chain and loan asset (36 in the simulator's world). */
const FULL: StormPlan = { markets: MARKETS, networks: DEFAULT_NETWORKS.length, groupBy: ['chain', 'loan_asset'] };
/** The quick run: 1,000 markets on 3 chains, a group per chain: 3 messages, enough to meet Slack's rate limit. */
const QUICK: StormPlan = { markets: 1_000, networks: 3, groupBy: ['chain'] };

/** The utilization every market is held at: above the storm rule's threshold, ambient utilization stays under 0.9. */
const STORM_UTILIZATION = 0.99;

const RULE = `    - { name: storm-utilization, kind: threshold, severity: critical, field: utilization, op: ">=", value: 0.98 }`;

/** The groups the storm must produce: one per distinct value of the group_by labels over the markets the simulator serves. */
async function expectedGroups(sim: ChildSimulator, plan: StormPlan): Promise<Set<string>> {
  const body = JSON.parse(await bareMetricsText(sim, plan.markets)) as { data: { metrics: Array<{ market: { chain: string; loan_asset_symbol: string } }> } };
  // The labels lookout puts on a market alert: loan_asset is the market's loan_asset_symbol (src/source/parse/markets.ts).
  const label = (m: { chain: string; loan_asset_symbol: string }, k: string) => (k === 'chain' ? m.chain : k === 'loan_asset' ? m.loan_asset_symbol : '?');
  return new Set(body.data.metrics.map((r) => plan.groupBy.map((k) => `${k}=${label(r.market, k)}`).join(', ')));
}

/** Lost and duplicated groups: what a correct storm has none of. */
export function stormVerdict(expected: ReadonlySet<string>, received: readonly string[]): { lost: string[]; duplicated: string[]; unexpected: string[] } {
  const seen = new Map<string, number>();
  for (const g of received) seen.set(g, (seen.get(g) ?? 0) + 1);
  return {
    lost: [...expected].filter((g) => !seen.has(g)),
    duplicated: [...seen].filter(([g, n]) => expected.has(g) && n > 1).map(([g]) => g),
    unexpected: [...seen.keys()].filter((g) => !expected.has(g)),
  };
}

async function storm(ctx: BenchContext): Promise<void> {
  const plan = ctx.quick ? QUICK : FULL;
  let sim: ChildSimulator | undefined;
  let slack: SlackRecorder | undefined;
  let daemon: DaemonChild | undefined;
  try {
    sim = await startChildSimulator({ markets: plan.markets, positions: 0, networks: DEFAULT_NETWORKS.slice(0, plan.networks) });
    slack = await startSlackRecorder(1);
    const expected = await expectedGroups(sim, plan);
    daemon = await startDaemonChild(
      benchConfigYaml({
        baseUrl: sim.url,
        catalogUrl: sim.catalogUrl,
        apiKey: sim.apiKey,
        dbPath: join(ctx.dir, 'storm.db'),
        rules: { inline: RULE },
        polls: ['markets'],
        notify: {
          notifiers: `  slack: { type: slack, webhook_url: ${JSON.stringify(slack.url)} }`,
          routes: `  - { default: true, notify: [slack], group_by: [rule, ${plan.groupBy.join(', ')}], group_wait: 1s, group_interval: 5m, repeat_interval: 4h }`,
        },
      }),
    );
    // The start-up poll: calm, nothing to tell.
    await daemon.poll('markets');
    const { at: changed } = await sim.override('all', STORM_UTILIZATION);
    const poll = await daemon.poll('markets');
    const line = poll.lines.find((l) => l.poll === 'markets');
    if (line?.outcome !== 'ok') throw new Error(`the storm's poll failed: ${JSON.stringify(line)}`);
    const rec = slack;
    const d = daemon;
    // Done when the daemon has sent a message per group and has nothing left to send (a duplicate would have gone
    // by then). Past the deadline, what arrived is judged all the same: the verdict names what is missing.
    let state = await d.notifyState();
    const drained = await until(
      'the daemon to send a message per group and have nothing left to send',
      async () => {
        state = await d.notifyState();
        return state.outbox === 0 && state.pending === 0 && state.sent + state.failed >= expected.size ? true : undefined;
      },
      expected.size * 3_000 + 120_000,
      200,
    ).catch(() => false);
    const v = stormVerdict(expected, rec.posts.map((p) => p.group));
    const lastMs = Math.max(changed, ...rec.posts.map((p) => p.at)) - changed;
    const firstMs = Math.min(Infinity, ...rec.posts.map((p) => p.at)) - changed;
    ctx.figure('storm_last_ms', lastMs);
    ctx.figure('storm_groups', expected.size);
    ctx.figure('storm_markets', plan.markets);
    ctx.figure('storm_lost', v.lost.length + state.failed);
    ctx.figure('storm_duplicated', v.duplicated.length + v.unexpected.length);
    ctx.row({ name: 'storm', n: `${plan.markets.toLocaleString('en-US')} markets, ${expected.size} groups`, subject: summarize([lastMs]) });
    ctx.note(
      `storm: ${plan.markets.toLocaleString('en-US')} markets held at utilization ${STORM_UTILIZATION} in one poll (${poll.ms.toFixed(0)} ms, ${line.events} events) → ` +
        `${rec.posts.length} Slack messages for ${expected.size} groups (group_by rule, ${plan.groupBy.join(', ')}; group_wait 1s), ${rec.limited} posts answered 429; ` +
        `first message ${(firstMs / 1000).toFixed(1)} s after the change, last ${(lastMs / 1000).toFixed(1)} s; messages sent ${state.sent}, failed ${state.failed}.`,
    );
    const wrong = [
      drained ? '' : `at the deadline the daemon had sent ${state.sent} messages, ${state.pending} pending, ${state.outbox} events not yet grouped`,
      v.lost.length ? `lost ${v.lost.join('; ')}` : '',
      v.duplicated.length ? `duplicated ${v.duplicated.join('; ')}` : '',
      v.unexpected.length ? `not a group of the storm: ${v.unexpected.join('; ')}` : '',
      state.failed ? `${state.failed} messages failed` : '',
    ].filter(Boolean);
    if (wrong.length) throw new Error(`the storm's messages are wrong: ${wrong.join(' · ')}`);
  } finally {
    await daemon?.stop();
    await slack?.close();
    await sim?.stop();
  }
}

/** The storm benchmark. */
export const stormBenches: Bench[] = [
  { name: 'storm', about: 'every market crosses a threshold in one poll: the real daemon → its slack notifier → a loopback Slack taking 1 message/s; one message per group, none lost (target B7)', run: storm },
];
