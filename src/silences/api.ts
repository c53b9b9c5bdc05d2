/** The silence repository as the HTTP API serves it (`/api/silences`): what it lists by default, and with `all`. */
import type { SilenceStore } from '../http/types.js';
import type { SilenceRepo } from './repo.js';

/** In force or starting later by default (as `lookout silence list`); expired ones too with `all`. */
export function silenceApi(repo: SilenceRepo): SilenceStore {
  return {
    list: (o) => repo.list(o?.all ? {} : { active: true }),
    add: (input: unknown) => repo.add(input as never),
    expire: (id: string) => repo.expire(id),
  };
}
