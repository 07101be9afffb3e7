export { openPool, hashPatch } from './pool.js';
export type { Pool, GroupColumn } from './pool.js';
export { SCHEMA_VERSION } from './schema.js';
export type {
  AddResult,
  AttemptOutcome,
  GroupCount,
  InstanceStats,
  ListOptions,
  OpenPoolOptions,
  PoolEntry,
  PoolFilter,
  Rejection,
  RejectionKey,
  SpreadRow,
} from './types.js';
