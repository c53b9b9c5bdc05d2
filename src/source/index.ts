/** The data-service client and the poll kinds: what the rest of lookout imports from `source/`. */
export {
  createDataServiceClient,
  ENDPOINTS,
  MAX_LIST_LIMIT,
  type BenchmarkQuery,
  type CallOptions,
  type ClientOptions,
  type DataServiceClient,
  type ListQuery,
  type MetricsQuery,
  type NetworkRecord,
  type SourceConfig,
} from './client.js';
export { DataServiceError, SOURCE_CODES, failureReason, type SourceCode, type SourceReason } from './errors.js';
export { abortableSleep, type Sleep } from './http.js';
export type { PageWalk } from './pages.js';
export { fnv1a, inShard, shardKey, type Shard } from './shard.js';
export { protocolOf } from './parse/markets.js';
export { indexPollKinds, pollKindByName, pollKinds, runPoll, type AnyPollKind, type PollContext, type PollData, type PollKind, type PollKindName } from './polls/registry.js';
export { pollSchema, pollSchemas, type PollConfig, type PollConfigOf } from './polls/schemas.js';
