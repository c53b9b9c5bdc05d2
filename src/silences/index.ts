/** Silences: matchers, the repository over SQLite, and the CLI commands. */
export { MATCH_OPS, parseMatcher, validateMatcher, matches, matchesAll, formatMatcher, type Matcher, type MatchOp } from './matcher.js';
export { SilenceRepo, silenceInputSchema, type Silence, type SilenceInput } from './repo.js';
export { silenceApi } from './api.js';
export {
  silenceAddCommand,
  silenceListCommand,
  silenceExpireCommand,
  type SilenceAddOptions,
  type SilenceListOptions,
  type SilenceExpireOptions,
  type CommandIO,
} from './cli.js';
