export { ERROR_CODES, EnvgenError, isEnvgenError, describeError } from './errors.js';
export type { ErrorCode } from './errors.js';
export { createLogger, silentLogger } from './logger.js';
export type { Logger, LogFields, LogLevel, LoggerOptions } from './logger.js';
export { sha256, stableStringify, hashValue } from './hash.js';
export { createRng } from './rng.js';
export type { Rng } from './rng.js';
export { BUNDLE_FILE_NAMES } from './contracts.js';
export type {
  BundleFiles,
  Candidate,
  FileChanges,
  Instance,
  InstanceEnvironment,
  LocalizationChanges,
  ProblemStatement,
  ProblemStatementKind,
  RejectionReason,
  StrategyFamily,
  Task,
  TokenUsage,
  Verdict,
} from './contracts.js';
export { makeInstanceId } from './instance-id.js';
export { isProcessAlive } from './process.js';
export { isModuleOwnDoctest, nodeIdFile, parseNodeId, unparametrizedNodeId, volatileIds } from './node-id.js';
export type { NodeIdParts } from './node-id.js';
export { recentCache } from './recent-cache.js';
export type { RecentCache } from './recent-cache.js';
