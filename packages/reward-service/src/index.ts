export { DEFAULT_REWARD_PORT, closeOnSignals, startRewardServer } from './http-server.js';
export type { RewardServer, RewardServerOptions } from './http-server.js';
export { createRewardService, difficultyBand } from './reward-service.js';
export type {
  ApiError,
  BatchBody,
  BatchItemBody,
  DifficultyBand,
  HealthBody,
  InjectorBody,
  OutcomeBody,
  RewardService,
  RewardServiceOptions,
  ScoreBody,
  ServiceResult,
  StatsBody,
} from './reward-service.js';
export { createGoldCache } from './gold-cache.js';
export type { GoldCache, GoldCacheOptions, GoldLookup } from './gold-cache.js';
export { readBatchItems, readInjectorRequest, readOutcomeRequest, readScoreRequest } from './read-request.js';
export type { GoldSource, InjectorRequest, LocalizationInput, OutcomeRequest, ReadResult, RequestFault, ScoreRequest } from './read-request.js';
export { SOLVE_LEVELS, readServeFlags, readSolveFlags } from './serve-flags.js';
export type { ServeFlags, ServeSettings } from './serve-flags.js';
export { createLineBatcher, createServiceLogger } from './line-batcher.js';
export type { LineBatcher, ServiceLogger } from './line-batcher.js';
