import { injectorReward, isSolved, localizationReward } from '@envgen/rewards';
import type { IsSolvedOptions, LocalizationReward, SolveLevel } from '@envgen/rewards';
import type { FileChanges } from '@envgen/core';
import type { DifficultyBand, InstanceStats, Pool } from '@envgen/pool';

export type { DifficultyBand } from '@envgen/pool';
import { DEFAULT_INJECTOR_ALPHA } from '@envgen/rewards';
import { createGoldCache } from './gold-cache.js';
import type { GoldCacheOptions } from './gold-cache.js';
import { readScoreRequest } from './read-request.js';
import type { InjectorRequest, LocalizationInput, OutcomeRequest, ScoreRequest } from './read-request.js';

/** An error the API answers with: HTTP status, stable code, what to do, and the field at fault for a 400. */
export interface ApiError {
  status: number;
  code: string;
  message: string;
  field?: string;
}

/** The result of one service operation. */
export type ServiceResult<T> = { ok: true; value: T } | { ok: false; error: ApiError };

/** `GET /v1/instances/:id/stats`, and the `stats` of a recorded outcome. */
export interface StatsBody {
  instance_id: string;
  attempts: number;
  /** Solved attempts. */
  solved: number;
  mean_reward: number | null;
  solve_rate: number | null;
  band: DifficultyBand;
}

/** A scored localization: per-level F1s, their sum `reward` (0–3), and whether it solved the instance. */
export interface ScoreBody extends LocalizationReward {
  instance_id?: string;
  solved: boolean;
  /** The instance's stats after recording, when the outcome was recorded. */
  stats?: StatsBody;
}

/** One item of a batch: its score, or its error. */
export type BatchItemBody = ({ ok: true } & ScoreBody) | { ok: false; error: ApiError };

/** `POST /v1/score/batch`. */
export interface BatchBody {
  results: BatchItemBody[];
  scored: number;
  failed: number;
}

/** `POST /v1/outcomes`. */
export interface OutcomeBody {
  instance_id: string;
  reward: number;
  solved: boolean;
  /** The score breakdown when the outcome was a localization scored here. */
  score?: ScoreBody;
  stats: StatsBody;
}

/** `POST /v1/injector-reward`. */
export interface InjectorBody {
  reward: number;
  alpha: number;
  checks_passed: boolean;
  solve_rate: number | null;
  instance_id?: string;
  attempts?: number;
}

/** `GET /v1/health`. */
export interface HealthBody {
  status: 'ok';
  pool: string;
  instances: number;
  tasks: number;
  solved_when: { by: SolveLevel; threshold: number };
  uptime_s: number;
}

/** Options of {@link createRewardService}. */
export interface RewardServiceOptions {
  /** When a scored rollout counts as solved; default entity F1 = 1. */
  solve?: IsSolvedOptions;
  goldCache?: GoldCacheOptions;
}

/** The reward service's operations, independent of HTTP: request in, body or {@link ApiError} out. */
export interface RewardService {
  score(request: ScoreRequest): ServiceResult<ScoreBody>;
  /** Scores each raw item (read and validated here, faults named `items[i].…`); one bad item never fails the others. */
  scoreBatch(items: readonly unknown[]): BatchBody;
  recordOutcome(request: OutcomeRequest): ServiceResult<OutcomeBody>;
  injectorReward(request: InjectorRequest): ServiceResult<InjectorBody>;
  stats(instanceId: string): ServiceResult<StatsBody>;
  health(): HealthBody;
}

/** The band of an instance's stats. */
export function difficultyBand(stats: InstanceStats): DifficultyBand {
  if (stats.attempts === 0) return 'untried';
  if (stats.solved === 0) return 'too-hard';
  return stats.solved === stats.attempts ? 'too-easy' : 'frontier';
}

function statsBody(instanceId: string, stats: InstanceStats): StatsBody {
  return {
    instance_id: instanceId,
    attempts: stats.attempts,
    solved: stats.solved,
    mean_reward: stats.meanReward,
    solve_rate: stats.solveRate,
    band: difficultyBand(stats),
  };
}

function failure(status: number, code: string, message: string): { ok: false; error: ApiError } {
  return { ok: false, error: { status, code, message } };
}

function unknownInstance(instanceId: string): { ok: false; error: ApiError } {
  return failure(404, 'unknown-instance', `instance ${instanceId} is not in the pool; list what is there with: envgen pool list`);
}

/** Creates the service over an open pool (which the caller closes). Throws when the solve options are out of range. */
export function createRewardService(pool: Pool, options: RewardServiceOptions = {}): RewardService {
  const solve: Required<IsSolvedOptions> = {
    by: options.solve?.by ?? 'entity',
    threshold: options.solve?.threshold ?? ((options.solve?.by ?? 'entity') === 'total' ? 3 : 1),
  };
  // Checks the threshold once, up front, rather than on the first request.
  isSolved({ reward: 0, file: 0, module: 0, entity: 0, valid: true }, solve);
  const gold = createGoldCache(pool, options.goldCache);
  const started = Date.now();

  const goldOf = (instanceId: string): ServiceResult<readonly FileChanges[]> => {
    const found = gold.lookup(instanceId);
    if (found.status === 'found') return { ok: true, value: found.gold };
    if (found.status === 'unknown-instance') return unknownInstance(instanceId);
    return failure(409, 'no-task', `instance ${instanceId} has no task (gold labels) yet; build it with: envgen tasks`);
  };

  const rate = (expected: readonly FileChanges[], localization: LocalizationInput): LocalizationReward =>
    localization.kind === 'locations'
      ? localizationReward(expected, { locations: localization.locations })
      : localizationReward(expected, localization.arguments, localization.repoRoot === undefined ? {} : { repoRoot: localization.repoRoot });

  const scoreBody = (breakdown: LocalizationReward, instanceId: string | undefined): ScoreBody => ({
    ...(instanceId === undefined ? {} : { instance_id: instanceId }),
    reward: breakdown.reward,
    file: breakdown.file,
    module: breakdown.module,
    entity: breakdown.entity,
    valid: breakdown.valid,
    ...(breakdown.reason === undefined ? {} : { reason: breakdown.reason }),
    solved: isSolved(breakdown, solve),
  });

  const record = (instanceId: string, reward: number, solved: boolean): ServiceResult<StatsBody> => {
    const stats = pool.recordAttempt(instanceId, { reward, solved });
    return stats === undefined ? unknownInstance(instanceId) : { ok: true, value: statsBody(instanceId, stats) };
  };

  const score = (request: ScoreRequest): ServiceResult<ScoreBody> => {
    const instanceId = request.gold.kind === 'instance' ? request.gold.instanceId : undefined;
    let expected: readonly FileChanges[];
    if (request.gold.kind === 'inline') expected = request.gold.gold;
    else {
      const found = goldOf(request.gold.instanceId);
      if (!found.ok) return found;
      expected = found.value;
    }
    const body = scoreBody(rate(expected, request.localization), instanceId);
    if (request.record && instanceId !== undefined) {
      const recorded = record(instanceId, body.reward, body.solved);
      if (!recorded.ok) return recorded;
      body.stats = recorded.value;
    }
    return { ok: true, value: body };
  };

  return {
    score,

    scoreBatch(items) {
      const results: BatchItemBody[] = [];
      let failed = 0;
      for (const [index, item] of items.entries()) {
        const read = readScoreRequest(item, `items[${index}]`);
        const scored = read.ok ? score(read.value) : { ok: false as const, error: { status: 400, code: 'invalid-request', message: read.fault.message, field: read.fault.field } };
        if (scored.ok) results.push({ ok: true, ...scored.value });
        else {
          failed += 1;
          results.push({ ok: false, error: scored.error });
        }
      }
      return { results, scored: items.length - failed, failed };
    },

    recordOutcome(request) {
      if (request.kind === 'reward') {
        const recorded = record(request.instanceId, request.reward, request.solved);
        if (!recorded.ok) return recorded;
        return { ok: true, value: { instance_id: request.instanceId, reward: request.reward, solved: request.solved, stats: recorded.value } };
      }
      const scored = score({ gold: { kind: 'instance', instanceId: request.instanceId }, localization: request.localization, record: true });
      if (!scored.ok) return scored;
      const { stats, ...breakdown } = scored.value;
      if (stats === undefined) return unknownInstance(request.instanceId);
      return { ok: true, value: { instance_id: request.instanceId, reward: breakdown.reward, solved: breakdown.solved, score: breakdown, stats } };
    },

    injectorReward(request) {
      const alpha = request.alpha ?? DEFAULT_INJECTOR_ALPHA;
      if (request.kind === 'inline') {
        const reward = injectorReward({ checksPassed: request.checksPassed, solveRate: request.solveRate }, { alpha });
        return { ok: true, value: { reward, alpha, checks_passed: request.checksPassed, solve_rate: request.solveRate } };
      }
      const stats = pool.stats(request.instanceId);
      if (stats === undefined) return unknownInstance(request.instanceId);
      if (stats.solveRate === null) {
        return failure(409, 'untried', `instance ${request.instanceId} has no recorded attempts, so no solve rate; record outcomes first (POST /v1/outcomes)`);
      }
      // An instance is in the pool only once every consistency check passed.
      const reward = injectorReward({ checksPassed: true, solveRate: stats.solveRate }, { alpha });
      return {
        ok: true,
        value: { reward, alpha, checks_passed: true, solve_rate: stats.solveRate, instance_id: request.instanceId, attempts: stats.attempts },
      };
    },

    stats(instanceId) {
      const stats = pool.stats(instanceId);
      return stats === undefined ? unknownInstance(instanceId) : { ok: true, value: statsBody(instanceId, stats) };
    },

    health() {
      return {
        status: 'ok',
        pool: pool.dir,
        instances: pool.count(),
        tasks: pool.count({ hasTask: true }),
        solved_when: { by: solve.by, threshold: solve.threshold },
        uptime_s: Math.round((Date.now() - started) / 1000),
      };
    },
  };
}
