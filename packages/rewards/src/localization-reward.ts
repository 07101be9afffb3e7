import { ERROR_CODES, EnvgenError } from '@envgen/core';
import { f1 } from './f1.js';
import { goldSets, predictionSets } from './localization-sets.js';
import { normalizeLocations } from './normalize-locations.js';
import type { NormalizeLocationsOptions } from './normalize-locations.js';
import type { GoldFileChanges, LocalizationReward } from './types.js';

/**
 * CodeScout's localization reward: `F1(files) + F1(modules) + F1(entities)`, 0–3.
 * `prediction` is the `localization_finish` call's arguments (object or JSON string), or
 * null when the episode ended without one; an invalid call scores 0 with `valid: false`
 * and the reason from {@link normalizeLocations}.
 */
export function localizationReward(
  gold: readonly GoldFileChanges[],
  prediction: unknown,
  options: NormalizeLocationsOptions = {},
): LocalizationReward {
  const normalized = normalizeLocations(prediction, options);
  if (!normalized.ok) {
    return { reward: 0, file: 0, module: 0, entity: 0, valid: false, reason: normalized.reason };
  }
  const predicted = predictionSets(normalized.locations);
  const expected = goldSets(gold);
  const file = f1(predicted.files, expected.files);
  const module = f1(predicted.modules, expected.modules);
  const entity = f1(predicted.entities, expected.entities);
  return { reward: file + module + entity, file, module, entity, valid: true };
}

/** Which score of a {@link LocalizationReward} decides whether a rollout solved its instance. */
export type SolveLevel = 'file' | 'module' | 'entity' | 'total';

/** Options for {@link isSolved}. */
export interface IsSolvedOptions {
  /** The score compared; default `entity`. */
  by?: SolveLevel;
  /** Minimum score, in (0, 1] for a level and (0, 3] for `total`; default the maximum. */
  threshold?: number;
}

// Sums of fractional F1s are not exact in floating point (1/3 + 2/3 + 1 may land a hair
// under 2); a threshold is met within this tolerance.
const TOLERANCE = 1e-9;

/**
 * Whether a rollout counts as solved for solve rates: by default entity F1 == 1. An
 * invalid localization is never solved. Note that a level whose gold set is empty
 * always scores 0, so such an instance is never solved at that level.
 */
export function isSolved(breakdown: LocalizationReward, options: IsSolvedOptions = {}): boolean {
  const by = options.by ?? 'entity';
  const max = by === 'total' ? 3 : 1;
  const threshold = options.threshold ?? max;
  if (!Number.isFinite(threshold) || threshold <= 0 || threshold > max) {
    throw new EnvgenError(
      ERROR_CODES.internal,
      `solve threshold for "${by}" must be in (0, ${max}], got ${threshold}; fix the solve threshold setting`,
    );
  }
  if (!breakdown.valid) return false;
  const score = by === 'total' ? breakdown.reward : breakdown[by];
  return score >= threshold - TOLERANCE;
}
