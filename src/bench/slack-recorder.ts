/**
 * A loopback Slack incoming webhook that takes at most one message a second, as Slack does: a post sooner than
 * a second after the last one it took is answered 429 with Retry-After. It records every post it took (when,
 * the group named in the message's summary line, the dedup key) and counts the ones it turned away.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One message the recorder took. */
export interface SlackPost {
  at: number;
  /** The group as the message's summary line names it (`chain=base, loan_asset=USDC`), '' when it names none. */
  group: string;
  dedupKey: string;
}

/** The recorder. */
export interface SlackRecorder {
  /** The webhook URL to configure. */
  url: string;
  readonly posts: readonly SlackPost[];
  /** Posts answered 429. */
  readonly limited: number;
  close(): Promise<void>;
}

const texts = (blocks: unknown): string[] =>
  Array.isArray(blocks)
    ? blocks.flatMap((b: { text?: { text?: unknown }; elements?: Array<{ text?: unknown }> }) => [b.text?.text, ...(b.elements ?? []).map((e) => e.text)]).filter((t): t is string => typeof t === 'string')
    : [];

/** The group and dedup key a lookout Slack message carries (its summary line and its footer). */
export function slackMessageKey(payload: { blocks?: unknown }): { group: string; dedupKey: string } {
  const all = texts(payload.blocks);
  const group = all.map((t) => / · group (.+?) · \d+ firing/.exec(t)?.[1]).find((g) => g !== undefined) ?? '';
  const dedupKey = all.map((t) => /dedup key `([^`]+)`/.exec(t)?.[1]).find((k) => k !== undefined) ?? '';
  return { group, dedupKey };
}

/** Starts the recorder on a free loopback port; `perSecond` messages a second at most. */
export async function startSlackRecorder(perSecond = 1): Promise<SlackRecorder> {
  const posts: SlackPost[] = [];
  let limited = 0;
  let last = -Infinity;
  const gap = 1000 / perSecond;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const now = Date.now();
      if (now - last < gap) {
        limited++;
        res.writeHead(429, { 'retry-after': '1', 'content-type': 'text/plain' }).end('rate_limited');
        return;
      }
      let payload: { blocks?: unknown };
      try {
        payload = JSON.parse(body) as { blocks?: unknown };
      } catch {
        res.writeHead(400, { 'content-type': 'text/plain' }).end('invalid_payload');
        return;
      }
      last = now;
      posts.push({ at: now, ...slackMessageKey(payload) });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/services/T000/B000/bench`,
    posts,
    get limited() {
      return limited;
    },
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}
