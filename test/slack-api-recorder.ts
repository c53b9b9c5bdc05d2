/** A loopback Slack Web API (chat.postMessage, chat.update, thread replies) that records every call, for the bot-mode tests. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Clock } from '../src/clock.js';

/** One call the server received. */
export interface SlackApiCall {
  /** The test clock's time when it arrived. */
  at: number;
  method: string;
  /** The arguments, decoded (form or JSON); `blocks` parsed. */
  args: { channel?: string; ts?: string; thread_ts?: string; text?: string; blocks?: Array<{ type: string; text?: { text: string } }> } & Record<string, unknown>;
  authorization: string | undefined;
  /** What the server answered: HTTP status and Slack's `error` when not ok. */
  status: number;
  error?: string;
  /** The `ts` Slack answered with (a post's new message, an edit's message). */
  ts?: string;
}

/** A message as the channel shows it now. */
export interface SlackApiMessage {
  ts: string;
  channel: string;
  text: string;
  blocks: Array<{ type: string; text?: { text: string } }>;
  thread_ts?: string;
}

/** The server: answers as Slack would, keeps the channel's messages, and injects what a test asks for. */
export class SlackApiRecorder {
  readonly calls: SlackApiCall[] = [];
  readonly messages = new Map<string, SlackApiMessage>();
  /** The channel ID answered for any channel name. */
  readonly channelId = 'C0LOOKOUT1';
  url = '';
  private server: Server | undefined;
  private nextTs = 1;
  private limited: Array<{ method: string; retryAfter: string }> = [];
  private failures: Array<{ method: string; error: string }> = [];
  private raw: Array<{ method: string; status: number; headers: Record<string, string>; body: string }> = [];

  constructor(
    private readonly clock: Clock,
    private readonly token: string,
  ) {}

  /** Starts on 127.0.0.1 on a free port; `url` is the API base to give `api_url`. */
  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString()));
      req.on('end', async () => {
        const method = (req.url ?? '').replace(/^\/api\//, '');
        const held = this.holds.findIndex((h) => h.method === method);
        if (held >= 0) await this.holds.splice(held, 1)[0]!.until();
        const args = decode(raw, req.headers['content-type']);
        const call: SlackApiCall = { at: this.clock.now(), method, args, authorization: req.headers.authorization, status: 200 };
        this.calls.push(call);
        const given = this.raw.findIndex((r) => r.method === method);
        if (given >= 0) {
          const [r] = this.raw.splice(given, 1);
          call.status = r!.status;
          res.writeHead(r!.status, r!.headers);
          res.end(r!.body);
          return;
        }
        const limit = this.limited.findIndex((l) => l.method === method);
        if (limit >= 0) {
          const [l] = this.limited.splice(limit, 1);
          call.status = 429;
          call.error = 'ratelimited';
          res.writeHead(429, { 'content-type': 'application/json', 'retry-after': l!.retryAfter });
          res.end(JSON.stringify({ ok: false, error: 'ratelimited' }));
          return;
        }
        const answer = this.answer(method, args, req.headers.authorization);
        if (!answer.ok) call.error = String(answer.error);
        if (typeof answer.ts === 'string') call.ts = answer.ts;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(answer));
      });
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}/api/`;
    return this;
  }

  private holds: Array<{ method: string; until: () => Promise<void> }> = [];

  /** Holds the answer to the next call of `method`: `reached` resolves when it arrives, `release()` lets the answer go. */
  holdNext(method: string): { reached: Promise<void>; release(): void } {
    let reach!: () => void;
    let release!: () => void;
    const reached = new Promise<void>((r) => (reach = r));
    const released = new Promise<void>((r) => (release = r));
    this.holds.push({ method, until: () => (reach(), released) });
    return { reached, release };
  }

  /** The next call of `method` is answered 429 with this Retry-After (seconds), once. */
  rateLimitOnce(method: string, retryAfter: string): void {
    this.limited.push({ method, retryAfter });
  }

  /** The next call of `method` is answered `{ ok: false, error }`, once. */
  failOnce(method: string, error: string): void {
    this.failures.push({ method, error });
  }

  /** The next call of `method` gets this HTTP answer as it is (a 5xx page, an ok without a ts), once. */
  answerOnce(method: string, status: number, body: string, headers: Record<string, string> = { 'content-type': 'application/json' }): void {
    this.raw.push({ method, status, headers, body });
  }

  /** A person deletes a message. */
  delete(ts: string): void {
    this.messages.delete(ts);
  }

  /** Top-level posts (parents), in order. */
  parents(): SlackApiCall[] {
    return this.calls.filter((c) => c.method === 'chat.postMessage' && !c.args.thread_ts && c.status === 200 && !c.error);
  }

  /** Thread replies Slack accepted, in order. */
  replies(): SlackApiCall[] {
    return this.calls.filter((c) => c.method === 'chat.postMessage' && c.args.thread_ts && c.status === 200 && !c.error);
  }

  /** Edits, answered or not. */
  updates(): SlackApiCall[] {
    return this.calls.filter((c) => c.method === 'chat.update');
  }

  private answer(method: string, args: SlackApiCall['args'], authorization: string | undefined): Record<string, unknown> {
    if (authorization !== `Bearer ${this.token}`) return { ok: false, error: 'invalid_auth' };
    const fail = this.failures.findIndex((f) => f.method === method);
    if (fail >= 0) return { ok: false, error: this.failures.splice(fail, 1)[0]!.error };
    const channel = args.channel?.startsWith('C') ? args.channel : this.channelId;
    if (method === 'chat.postMessage') {
      if (args.thread_ts && !this.messages.has(args.thread_ts)) return { ok: false, error: 'thread_not_found' };
      const ts = `1700000000.${String(this.nextTs++).padStart(6, '0')}`;
      const m: SlackApiMessage = { ts, channel, text: args.text ?? '', blocks: args.blocks ?? [], ...(args.thread_ts ? { thread_ts: args.thread_ts } : {}) };
      this.messages.set(ts, m);
      return { ok: true, channel, ts, message: m };
    }
    if (method === 'chat.update') {
      const m = args.ts ? this.messages.get(args.ts) : undefined;
      if (!m || m.channel !== args.channel) return { ok: false, error: 'message_not_found' };
      m.text = args.text ?? m.text;
      m.blocks = args.blocks ?? m.blocks;
      return { ok: true, channel, ts: m.ts, text: m.text };
    }
    return { ok: false, error: 'unknown_method' };
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}

/** Decodes a Web API body: form-encoded (what @slack/web-api sends, objects as JSON) or JSON. */
function decode(raw: string, type: string | undefined): SlackApiCall['args'] {
  if (type?.includes('application/json')) return JSON.parse(raw) as SlackApiCall['args'];
  const out: Record<string, unknown> = {};
  for (const [k, v] of new URLSearchParams(raw)) out[k] = k === 'blocks' ? JSON.parse(v) : v;
  return out as SlackApiCall['args'];
}
