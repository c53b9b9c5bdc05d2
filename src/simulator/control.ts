/**
 * The control endpoints on {base_url}, for tests that drive a simulator in another process:
 * `POST /_sim/faults` (a fault spec or an array of them), `DELETE /_sim/faults`, `GET /_sim/faults`,
 * `GET /_sim/requests`, `DELETE /_sim/requests`, `GET /_sim/scenario`. No API key needed.
 */
import type { Clock } from '../clock.js';
import { faultSpecFromJson, faultSpecToJson, FaultSpecError, type FaultController } from './faults.js';
import type { RequestLog } from './request-log.js';
import type { SimResponse } from './responses.js';
import { timelineOf } from './scenarios.js';
import type { World } from './world.js';

/** What the control endpoints act on. */
export interface ControlContext {
  faults: FaultController;
  requests: RequestLog;
  world: World;
  clock: Clock;
}

const fail = (status: number, message: string): SimResponse => ({ status, body: { error: status === 404 ? 'Not Found' : 'Bad Request', message } });

/** Answers a `/_sim/...` request. */
export function handleControl(method: string, path: string, raw: string, body: unknown, ctx: ControlContext): SimResponse {
  if (path === '/_sim/faults') {
    if (method === 'DELETE') {
      const n = ctx.faults.list().length;
      ctx.faults.clear();
      return { status: 200, body: { cleared: n } };
    }
    if (method === 'GET') return { status: 200, body: ctx.faults.list().map((f) => ({ ...f, spec: faultSpecToJson(f.spec), remaining: Number.isFinite(f.remaining) ? f.remaining : null })) };
    if (method === 'POST') {
      if (body === undefined) return fail(400, raw.trim() === '' ? 'body must be a fault spec (JSON)' : 'body is not valid JSON');
      try {
        const specs = (Array.isArray(body) ? body : [body]).map(faultSpecFromJson);
        return { status: 201, body: { ids: specs.map((s) => ctx.faults.add(s)) } };
      } catch (err) {
        if (err instanceof FaultSpecError) return fail(400, err.message);
        throw err;
      }
    }
  }
  if (path === '/_sim/requests') {
    if (method === 'GET') return { status: 200, body: { total: ctx.requests.total, counts: ctx.requests.counts() } };
    if (method === 'DELETE') {
      ctx.requests.clear();
      return { status: 200, body: { cleared: true } };
    }
  }
  if (path === '/_sim/scenario' && method === 'GET') {
    const now = ctx.clock.now();
    const w = ctx.world;
    return {
      status: 200,
      body: { name: w.scenario.name, description: w.scenario.description, timeline: timelineOf(w.scenario), startedAt: w.startedAt, timeScale: w.timeScale, now, scenarioSeconds: w.scenarioSeconds(now) },
    };
  }
  return fail(404, `no control route ${method} ${path}`);
}
