export { openPool, hashPatch } from './pool.js';
export type { Pool, GroupColumn } from './pool.js';
export { SCHEMA_VERSION } from './schema.js';
export { BANDS } from './types.js';
export type {
  AddResult,
  ArmOutcomeCount,
  Band,
  GrowthRound,
  RecordOnceResult,
  RegisteredRepo,
  RoundArmPlan,
  RoundArmResult,
  RoundRepoResult,
  AttemptOutcome,
  DifficultyBand,
  GroupCount,
  GrowthRow,
  InstanceStats,
  ListOptions,
  OpenPoolOptions,
  PoolEntry,
  PoolFilter,
  CleanRun,
  CleanRunKey,
  Rejection,
  RejectionCount,
  RejectionKey,
  SpreadRow,
} from './types.js';
