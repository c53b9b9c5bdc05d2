/**
 * Adoption (SPEC §8, docs/scaling.md): a replica that starts owning entities — after a resize, or a restart on an
 * empty DB — reads the firing alerts of lookout's rules from the Alertmanager cluster (`GET /api/v2/alerts`), so it
 * takes them over as firing, since when they began, instead of starting their `for` again while Alertmanager's copy
 * runs out. Only alerts lookout posted are taken: they carry the `rule` label and the `lookout_entity` annotation.
 */
import type { Dispatcher } from 'undici';
import { request } from '../net/undici.js';

/** A firing alert found in Alertmanager that a replica may take over. */
export interface AdoptCandidate {
  rule: string;
  entity: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** When it began firing (Alertmanager's startsAt), ms. */
  startsAt: number;
}

/** Options of {@link fetchAdoptable}. */
export interface FetchAdoptableOptions {
  /** Each Alertmanager peer's base URL (a notifier's `urls`). */
  urls: readonly string[];
  timeoutMs: number;
  signal?: AbortSignal;
  dispatcher?: Dispatcher;
}

/** What {@link fetchAdoptable} found, and the peers it could not read (by position: URLs may hold secrets). */
export interface AdoptableResult {
  candidates: AdoptCandidate[];
  failed: Array<{ peer: number; reason: string }>;
}

interface GettableAlert {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  startsAt?: string;
  endsAt?: string;
  status?: { state?: string };
}

/** The annotation that names the alert's entity in what lookout posts; not a label, so fingerprints stay as they were. */
export const ENTITY_ANNOTATION = 'lookout_entity';

/**
 * Reads every peer's active alerts (silenced and inhibited ones too: a mute is no reason to start over) and keeps
 * lookout's, one per (rule, entity), with the earliest start any peer knows. A peer that fails is reported, not thrown.
 */
export async function fetchAdoptable(opts: FetchAdoptableOptions): Promise<AdoptableResult> {
  const failed: AdoptableResult['failed'] = [];
  const byKey = new Map<string, AdoptCandidate>();
  await Promise.all(
    opts.urls.map(async (base, i) => {
      try {
        for (const c of await readPeer(base, opts)) {
          const key = `${c.rule}\u0000${c.entity}`;
          const had = byKey.get(key);
          if (!had || c.startsAt < had.startsAt) byKey.set(key, c);
        }
      } catch (err) {
        failed.push({ peer: i + 1, reason: reasonOf(err) });
      }
    }),
  );
  return { candidates: [...byKey.values()], failed };
}

async function readPeer(base: string, opts: FetchAdoptableOptions): Promise<AdoptCandidate[]> {
  const url = new URL('api/v2/alerts', base.endsWith('/') ? base : base + '/');
  for (const [k, v] of Object.entries({ active: 'true', silenced: 'true', inhibited: 'true', unprocessed: 'true' })) url.searchParams.set(k, v);
  // One controller and a timer held here (not AbortSignal.timeout inside AbortSignal.any), so the deadline covers
  // the answer's body too and cannot be lost with a collected signal: start-up waits this long at most.
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(new DOMException('timed out', 'TimeoutError')), opts.timeoutMs);
  const onOuter = () => ac.abort(opts.signal?.reason);
  opts.signal?.addEventListener('abort', onOuter, { once: true });
  try {
    const res = await request(url, { method: 'GET', headers: { accept: 'application/json' }, signal: ac.signal, ...(opts.dispatcher ? { dispatcher: opts.dispatcher } : {}) });
    if (res.statusCode !== 200) {
      await res.body.dump().catch(() => undefined);
      throw new Error(`HTTP ${res.statusCode}`);
    }
    const body = (await res.body.json()) as unknown;
    if (!Array.isArray(body)) throw new Error('the answer is not a list of alerts');
    return body.flatMap((a: GettableAlert) => candidateOf(a));
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onOuter);
  }
}

/** A lookout alert of Alertmanager's list as a candidate; nothing for resolved ones or ones lookout did not post. */
export function candidateOf(a: GettableAlert): AdoptCandidate[] {
  const labels = a.labels ?? {};
  const annotations = a.annotations ?? {};
  const rule = labels.rule;
  const entity = annotations[ENTITY_ANNOTATION];
  if (!rule || !entity) return [];
  if (a.status?.state !== undefined && a.status.state !== 'active' && a.status.state !== 'suppressed') return [];
  const startsAt = Date.parse(a.startsAt ?? '');
  if (!Number.isFinite(startsAt)) return [];
  const own: Record<string, string> = {};
  for (const [k, v] of Object.entries(annotations)) if (!k.startsWith('lookout_')) own[k] = v;
  return [{ rule, entity, labels: { ...labels }, annotations: own, startsAt }];
}

function reasonOf(err: unknown): string {
  const e = err as { code?: string; name?: string; message?: string };
  if (e.name === 'AbortError' || e.name === 'TimeoutError') return 'timed out';
  // undici's messages name no URL; a status or a code is all that is said.
  return e.code ?? e.message ?? 'failed';
}
